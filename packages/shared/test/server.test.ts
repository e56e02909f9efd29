/**
 * Graceful stop: in-flight requests finish, new connections are refused, the stop resolves soon after the
 * longest in-flight request.
 */
import http from 'node:http';
import { createLogger, startHttpServer } from '../src';

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

test('stop drains in-flight requests and refuses new connections', async () => {
  let onStoppedCalled = false;
  let slowArrived!: () => void;
  const slowInFlight = new Promise<void>((r) => (slowArrived = r));
  const running = await startHttpServer(
    (req, res) => {
      if (req.url === '/slow') slowArrived();
      const delay = req.url === '/slow' ? 400 : 0;
      setTimeout(() => res.end(`done ${req.url}`), delay);
    },
    // No accept drain, so refusal is immediate (the drain is covered by test/faults/sigterm.test.ts).
    { port: 0, host: '127.0.0.1', logger: createLogger('test'), acceptDrainMs: 0, onStopped: async () => void (onStoppedCalled = true) },
  );
  const inFlight = get(running.port, '/slow');
  // In flight means the server is handling it (a loaded machine may take longer than any fixed wait to accept).
  await slowInFlight;
  const stopped = running.stop();
  await new Promise((r) => setTimeout(r, 20));
  await expect(get(running.port, '/new')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  await expect(inFlight).resolves.toEqual({ status: 200, body: 'done /slow' });
  await stopped;
  expect(onStoppedCalled).toBe(true);
});

test('a slow request body gets 408 at the request timeout', async () => {
  const running = await startHttpServer((req, res) => req.on('data', () => undefined).on('end', () => res.end('ok')), {
    port: 0,
    host: '127.0.0.1',
    logger: createLogger('test'),
    requestTimeoutMs: 300,
    headersTimeoutMs: 300,
  });
  try {
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port: running.port, method: 'POST', path: '/', headers: { 'content-length': '100' }, agent: false },
        (res) => resolve(res.statusCode ?? 0),
      );
      req.on('error', reject);
      req.write('x'); // and never the rest
    });
    expect(status).toBe(408);
  } finally {
    await running.stop();
  }
});
