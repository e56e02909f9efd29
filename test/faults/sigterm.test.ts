/**
 * SIGTERM under load: the timing service runs as a real child process (`tsx
 * services/timing/src/server.ts`, as `pnpm start` does); 24 clients upload punch batches and read pages
 * in a loop, one connection per request; SIGTERM arrives mid-load. Proves: every request sent before the
 * signal is answered 2xx (0 failed in-flight requests), new connections are refused once the listener
 * closes (after an accept drain: until 100 ms without a new connection, at most 1 s), and the process exits 0 soon after its longest in-flight request.
 */
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { createTestDatabase, type TestDatabase, testNote } from '@sports-timing/shared/src/testing';
import { startServiceProcess, type ServiceProcess } from '../support/service-process';
import { testTime } from '@sports-timing/shared/src/test-time';

/** The service's data directory (development keys), removed after the file. */
const DATA_DIR = path.join(os.tmpdir(), `rel-sigterm-${process.pid}`);

jest.setTimeout(testTime(120_000));

let db: TestDatabase;
let proc: ServiceProcess | undefined;
const KEY = `tk_sigterm_${randomBytes(32).toString('base64url')}`;

beforeAll(async () => {
  db = await createTestDatabase('sigterm');
});
afterAll(async () => {
  await proc?.stop(1_000);
  await db?.drop();
  rmSync(DATA_DIR, { recursive: true, force: true });
});

interface Outcome {
  sentBeforeSignal: boolean;
  status?: number;
  error?: string;
  ms: number;
}

/** One request on its own connection (no keep-alive, so a refused connection is unambiguous). */
function send(port: number, method: string, path: string, body?: string): Promise<{ status?: number; error?: string }> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        headers: { apikey: KEY, connection: 'close', ...(body ? { 'content-type': 'application/json' } : {}) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode }));
        res.on('error', (e) => resolve({ error: e.message }));
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    req.end(body);
  });
}

test('SIGTERM under load: 0 failed in-flight requests, new connections refused, prompt exit', async () => {
  proc = await startServiceProcess({
    entry: 'services/timing/src/server.ts',
    env: { TIMING_PORT: '0', DATABASE_URL: db.url, DEMO_DATA: 'false', TIMING_BOOTSTRAP_API_KEY: KEY, DATA_DIR },
  });
  const port = proc.port;
  const exited = new Promise<number>((resolve) => proc!.child.once('exit', () => resolve(Date.now())));
  let signalledAt = 0;
  let stop = false;
  const outcomes: Outcome[] = [];
  let batch = 0;
  const client = async (n: number) => {
    while (!stop) {
      const b = batch++;
      const sentBeforeSignal = signalledAt === 0;
      const started = Date.now();
      const r =
        n % 3 === 0
          ? await send(port, 'GET', `/api/rest/v1/punches?modem=sig-${b % 4}&afterId=0`)
          : await send(
              port,
              'POST',
              '/api/rest/v1/punches',
              JSON.stringify(
                Array.from({ length: 500 }, (_, j) => ({
                  card: String(b * 500 + j + 1),
                  time: 1_700_000_000_000 + j,
                  code: 31,
                  type: 'Control',
                  modem: `sig-${b % 4}`,
                })),
              ),
            );
      outcomes.push({ sentBeforeSignal, ...r, ms: Date.now() - started });
      if (r.error === 'ECONNREFUSED') await new Promise((res) => setTimeout(res, 20));
    }
  };
  const clients = Array.from({ length: 24 }, (_, i) => client(i));
  await new Promise((r) => setTimeout(r, 1_500));
  signalledAt = Date.now();
  proc.child.kill('SIGTERM');
  const exitAt = await exited;
  await new Promise((r) => setTimeout(r, 200));
  stop = true;
  await Promise.all(clients);

  const before = outcomes.filter((o) => o.sentBeforeSignal);
  const failedInFlight = before.filter((o) => !o.status || o.status >= 300);
  const after = outcomes.filter((o) => !o.sentBeforeSignal);
  const refused = after.filter((o) => o.error === 'ECONNREFUSED').length;
  const longest = Math.max(...before.map((o) => o.ms));
  testNote(
    `sigterm: ${before.length} requests sent before the signal (${failedInFlight.length} failed, longest ${longest} ms), ${after.length} after (${refused} refused, ` +
      `${after.filter((o) => o.error === 'ECONNRESET').length} reset, ${after.filter((o) => o.status && o.status < 300).length} answered 2xx); exit ${exitAt - signalledAt} ms after SIGTERM with code ${proc.child.exitCode}`,
  );
  // A failure names its cause: what the clients got, and what the service printed (an exit, a reset, a stack).
  if (failedInFlight.length > 0) {
    const kinds = [...new Set(failedInFlight.map((o) => o.error ?? `HTTP ${o.status}`))].join(', ');
    testNote(`sigterm: failed before the signal (${kinds}); the service's last output:\n${proc.output().slice(-4_000)}`);
  }
  expect(before.length).toBeGreaterThan(20);
  expect(failedInFlight).toEqual([]);
  expect(refused).toBeGreaterThan(0);
  // After the signal: served (during the accept drain), refused, or — connecting at the very instant the
  // listener closes — reset; never an HTTP error.
  expect(after.filter((o) => !(['ECONNREFUSED', 'ECONNRESET'].includes(o.error ?? '') || (o.status !== undefined && o.status < 300)))).toEqual([]);
  expect(proc.child.exitCode).toBe(0);
});
