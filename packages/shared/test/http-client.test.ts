/**
 * `fetchWithRetry` (http-client.ts) on `node:http`: what it kept from Node's `fetch` (compressed answers
 * decoded, redirects are failures, a UTF-8 BOM dropped, one deadline for answer and body) and the kept-alive
 * connection between calls.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { fetchWithRetry, HttpTransportError, type HttpCall } from '../src/http-client';
import { DEFAULT_RETRY_POLICY } from '../src/provider-kit';

let server: http.Server;
let base: string;
let connections = 0;
/** Answers by path; `body` is the request body as text. */
const handlers = new Map<string, (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => handlers.get(req.url ?? '')?.(req, res, body));
  });
  server.keepAliveTimeout = 30_000;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const call = (path: string, extra: Partial<HttpCall> = {}): HttpCall => ({
  method: 'GET',
  url: `${base}${path}`,
  timeoutMs: 1_000,
  idempotent: true,
  retry: { ...DEFAULT_RETRY_POLICY, maxAttempts: 1 },
  ...extra,
});

test('decodes gzip, deflate and br answers it asked for, and drops a UTF-8 BOM', async () => {
  const body = JSON.stringify({ name: 'Zürich', n: 'x'.repeat(2000) });
  const encoders: Record<string, (b: Buffer) => Buffer> = { gzip: zlib.gzipSync, deflate: zlib.deflateSync, br: zlib.brotliCompressSync };
  for (const [encoding, encode] of Object.entries(encoders)) {
    let asked = '';
    handlers.set(`/${encoding}`, (req, res) => {
      asked = String(req.headers['accept-encoding']);
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': encoding }).end(encode(Buffer.from(body)));
    });
    const answer = await fetchWithRetry(call(`/${encoding}`));
    expect(asked).toContain(encoding);
    expect(answer.text).toBe(body);
    expect(answer.headers.get('content-type')).toBe('application/json');
  }
  handlers.set('/bom', (_req, res) => res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')])));
  expect((await fetchWithRetry(call('/bom'))).text).toBe('{"a":1}');
});

test('sends the body with its length and keeps the connection for the next call', async () => {
  handlers.set('/echo', (req, res, body) => res.end(`${req.method} ${req.headers['content-length']} ${body}`));
  await fetchWithRetry(call('/echo', { method: 'POST', body: 'ä' }));
  const before = connections;
  const answers = [];
  for (let i = 0; i < 5; i++) answers.push((await fetchWithRetry(call('/echo', { method: 'POST', body: `ä${i}` }))).text);
  expect(answers[4]).toBe('POST 3 ä4');
  expect(connections).toBe(before);
});

test('a redirect is a failure, not followed; a body that stalls runs into the deadline', async () => {
  handlers.set('/moved', (_req, res) => res.writeHead(302, { location: '/elsewhere' }).end());
  await expect(fetchWithRetry(call('/moved'))).rejects.toMatchObject({ name: 'HttpTransportError', kind: 'network' });
  handlers.set('/stall', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"partial":');
  });
  const err = await fetchWithRetry(call('/stall', { timeoutMs: 300 })).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(HttpTransportError);
  expect((err as HttpTransportError).kind).toBe('timeout');
});

test('a refused connection is retried even for a request that is not idempotent; other failures are not', async () => {
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((r) => closed.close(r));
  const err = await fetchWithRetry({
    method: 'POST',
    url: `http://127.0.0.1:${port}/x`,
    body: '{}',
    timeoutMs: 500,
    idempotent: false,
    retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
  }).catch((e: unknown) => e);
  expect(err).toMatchObject({ kind: 'network', code: 'ECONNREFUSED', attempts: 3 });
  handlers.set('/reset', (req) => req.socket.destroy());
  const reset = await fetchWithRetry(
    call('/reset', { method: 'POST', body: '{}', idempotent: false, retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 } }),
  ).catch((e: unknown) => e);
  expect(reset).toMatchObject({ kind: 'network', attempts: 1 });
});
