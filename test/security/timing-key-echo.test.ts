/**
 * OWASP API3/API8 (exposure of secrets) on the timing service: an API key placed in a path must not come back.
 * Every route shape of specs/timing.yaml gets a key in each of its path parameters (the ROC paths' `{key}`
 * included) and is sent with every method (GET, HEAD, POST, PUT, PATCH, DELETE: unknown methods answer 405),
 * once with a valid key and once with a well-formed unknown one; no answer body, no answer header and no log
 * line (debug level, the request log included) may contain the key. Real HTTP on a listening app.
 */
import { Writable } from 'node:stream';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@sports-timing/shared';
import { loadSpec } from '@sports-timing/shared';
import { createApp } from '../../services/timing/src/app';
import { SPEC_FILE } from '../../services/timing/src/version';
import { startTiming, type TimingTestContext } from '../../services/timing/test/helpers';

jest.setTimeout(120_000);

let t: TimingTestContext;
let server: Server;
let base: string;
let validKey: string;
const logLines: string[] = [];
const UNKNOWN_KEY = `tk_${'Q7xW'.repeat(10)}abc`;
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** The path templates of the timing spec. */
function templates(): string[] {
  const spec = loadSpec(SPEC_FILE) as { paths: Record<string, unknown> };
  return Object.keys(spec.paths);
}

beforeAll(async () => {
  t = await startTiming();
  validKey = (await t.createUser('echoed')).key;
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logLines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const logger = createLogger('key-echo', 'debug', sink);
  const app = createApp({ database: t.database, logger, validateResponses: true });
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await t?.close();
});

test('the spec has path parameters to try, and the ROC key paths among them', () => {
  const withParams = templates().filter((p) => p.includes('{'));
  expect(withParams.length).toBeGreaterThanOrEqual(5);
  expect(withParams).toEqual(expect.arrayContaining(['/roc/key/{key}/getpunches.asp', '/roc/key/{key}/sendpunches_v2.php']));
});

test.each([
  ['a valid key', () => validKey],
  ['an unknown key', () => UNKNOWN_KEY],
])('%s in every path parameter of every route shape, with every method: never repeated', async (_name, keyOf) => {
  const key = keyOf();
  // The random part is what makes a key a secret; no piece of 16 characters of it may come back either.
  const pieces = [key, key.slice(3, 19), key.slice(-16)];
  const leaks: string[] = [];
  const statuses = new Set<number>();
  const before = logLines.length;
  for (const template of templates().filter((p) => p.includes('{'))) {
    const path = template.replace(/\{[^}]+\}/g, key);
    for (const method of METHODS) {
      const res = await fetch(`${base}${path}${path.endsWith('.asp') ? '?unitId=1&lastId=0' : ''}`, {
        method,
        headers: method === 'GET' || method === 'HEAD' || method === 'DELETE' ? {} : { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: method === 'GET' || method === 'HEAD' || method === 'DELETE' ? undefined : 'macaddr=1&sinumber1=1',
      });
      statuses.add(res.status);
      const text = `${[...res.headers.entries()].map(([k, v]) => `${k}: ${v}`).join('\n')}\n${await res.text()}`;
      for (const p of pieces) if (text.includes(p)) leaks.push(`${method} ${template} ${res.status}: ${text.slice(0, 300)}`);
    }
  }
  const logged = logLines.slice(before);
  for (const line of logged) for (const p of pieces) if (line.includes(p)) leaks.push(`log: ${line.slice(0, 300)}`);
  expect(leaks).toEqual([]);
  // The requests reached the service and its error paths: 405s among them, and log lines were written.
  expect(statuses.has(405)).toBe(true);
  expect(logged.length).toBeGreaterThan(0);
});
