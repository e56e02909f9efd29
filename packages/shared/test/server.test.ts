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

/**
 * Sends a POST with `content-length: size` in `pieces` equal parts, `gapMs` apart, on a fresh connection;
 * resolves with the status, body and headers of the answer (or the status 0 when the connection was closed).
 */
function trickle(port: number, size: number, pieces: number, gapMs: number): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: 'POST', path: '/', headers: { 'content-length': String(size), connection: 'keep-alive' }, agent: false },
      (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.on('error', reject);
    let sent = 0;
    const piece = Math.ceil(size / pieces);
    const next = () => {
      if (req.destroyed) return;
      const n = Math.min(piece, size - sent);
      sent += n;
      req.write('x'.repeat(n));
      if (sent < size) setTimeout(next, gapMs);
      else req.end();
    };
    next();
  });
}

describe('request bodies: an idle-gap timeout and a total bound that grows with the size', () => {
  let running: Awaited<ReturnType<typeof startHttpServer>>;
  beforeAll(async () => {
    running = await startHttpServer(
      (req, res) => {
        let n = 0;
        req.on('data', (c: Buffer) => (n += c.length)).on('end', () => res.end(`got ${n}`));
      },
      {
        port: 0,
        host: '127.0.0.1',
        logger: createLogger('test'),
        headersTimeoutMs: 2_000,
        bodyIdleTimeoutMs: 400,
        bodyMinBytesPerSecond: 1_000,
        keepAliveTimeoutMs: 65_000,
      },
    );
  });
  afterAll(() => running.stop());

  it('takes a body that keeps arriving, even when it takes several idle timeouts in all', async () => {
    // 2,000 bytes in 20 pieces 100 ms apart: about 2 s, five times the idle timeout, within 0.4 s + 2,000 B at 1,000 B/s.
    const res = await trickle(running.port, 2_000, 20, 100);
    expect(res).toMatchObject({ status: 200, body: 'got 2000' });
    expect(res.headers['keep-alive']).toBe('timeout=65');
  });

  it('answers 408 when the body stops arriving (negative control: the same body with one long pause)', async () => {
    const res = await trickle(running.port, 200, 2, 1_500);
    expect(res.status).toBe(408);
    expect(JSON.parse(res.body)).toMatchObject({ status: 408, detail: 'The request body stopped arriving.' });
  });

  it('answers 408 when the body arrives below the slowest average rate, pauses short as they are', async () => {
    // 3,000 bytes at about 200 B/s: each pause 250 ms (under the idle timeout), the bound 0.4 s + 3 s passes first.
    const res = await trickle(running.port, 3_000, 60, 250);
    expect(res.status).toBe(408);
    expect(JSON.parse(res.body)).toMatchObject({ detail: 'The request body arrives too slowly.' });
  });
});
