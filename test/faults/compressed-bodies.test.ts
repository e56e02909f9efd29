/**
 * Compressed request bodies on the order endpoints and the punch upload: a gzip
 * bomb (1 GiB inflated, ~1 MiB on the wire) → 413 quickly with bounded memory; invalid gzip → 400; an
 * unknown `Content-Encoding` → 415; each in the error shape of its area. (Upload-specific cases beyond
 * these live in services/timing/test/punches.upload.test.ts.)
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { startOrdering, type OrderingTestContext } from '../../services/ordering/test/support/app';
import { startTiming, type TimingTestContext } from '../../services/timing/test/helpers';
import { testNote } from '@sports-timing/shared/src/testing';
import { testTime } from '@sports-timing/shared/src/test-time';

jest.setTimeout(testTime(120_000));

const GiB = 1024 ** 3;
let bomb: Buffer;

/** 1 GiB of JSON whitespace, gzip-compressed chunk by chunk (never held inflated in memory). */
async function gzipBomb(): Promise<Buffer> {
  const gz = zlib.createGzip({ level: 9 });
  const out: Buffer[] = [];
  gz.on('data', (c: Buffer) => out.push(c));
  const chunk = Buffer.alloc(16 * 1024 * 1024, 0x20);
  for (let written = 0; written < GiB; written += chunk.length) {
    if (!gz.write(chunk)) await new Promise((r) => gz.once('drain', r));
  }
  await new Promise((r) => gz.end(r));
  return Buffer.concat(out);
}

/** POSTs raw bytes over a real socket; resolves with status, headers, body and the time to the answer. */
async function post(base: string, path: string, body: Buffer, headers: Record<string, string>) {
  const started = Date.now();
  const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: new Uint8Array(body) }).catch(
    (err: Error) => err,
  );
  if (res instanceof Error) return { status: 0, ms: Date.now() - started, contentType: '', body: {} as Record<string, unknown>, error: res.message };
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON: the assertions below report it
  }
  return { status: res.status, ms: Date.now() - started, contentType: res.headers.get('content-type') ?? '', body: json };
}

async function listen(app: http.RequestListener): Promise<{ base: string; server: http.Server }> {
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

let ordering: OrderingTestContext;
let timing: TimingTestContext;
let o: { base: string; server: http.Server };
let t: { base: string; server: http.Server };

beforeAll(async () => {
  [bomb, ordering, timing] = await Promise.all([gzipBomb(), startOrdering(), startTiming()]);
  o = await listen(ordering.app);
  t = await listen(timing.app);
});
afterAll(async () => {
  for (const s of [o?.server, t?.server]) {
    s?.closeAllConnections();
    await new Promise((r) => s?.close(r));
  }
  await ordering?.close();
  await timing?.close();
});

const targets = (): {
  name: string;
  base: string;
  path: string;
  headers: Record<string, string>;
  shape: (b: Record<string, unknown>, status: number) => void;
}[] => [
  {
    name: 'REST order',
    base: o.base,
    path: '/api/rest/v1/order',
    headers: {},
    shape: (b: Record<string, unknown>, status: number) => expect(b).toMatchObject({ status }),
  },
  {
    name: 'shop order',
    base: o.base,
    path: '/api/grpc-json/v1/shop/orders',
    headers: {},
    shape: (b: Record<string, unknown>) => expect(typeof b.code).toBe('number'),
  },
  {
    name: 'punch upload',
    base: t.base,
    path: '/api/rest/v1/punches',
    headers: { apikey: timing.adminKey },
    shape: (b: Record<string, unknown>, status: number) => expect(b).toMatchObject({ status }),
  },
];

test('gzip bomb (1 GiB inflated) → 413 with bounded memory (inflating stops at the limit)', async () => {
  testNote(`gzip bomb: ${bomb.length} bytes on the wire, ${GiB} inflated`);
  for (const target of targets()) {
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const res = await post(target.base, target.path, bomb, { ...target.headers, 'content-encoding': 'gzip' });
    const rssGrowth = process.memoryUsage().rss - rssBefore;
    testNote(`gzip bomb → ${target.name}: ${res.status} in ${res.ms} ms, RSS growth ${(rssGrowth / 1024 / 1024).toFixed(1)} MiB`);
    expect(res.status).toBe(413);
    target.shape(res.body, 413);
    expect(rssGrowth).toBeLessThan(200 * 1024 * 1024);
  }
});

test('invalid gzip → 400; unknown Content-Encoding → 415', async () => {
  const notGzip = Buffer.from('{"this":"is not gzip"}');
  const truncated = zlib.gzipSync(Buffer.from(JSON.stringify({ a: 'b'.repeat(1000) }))).subarray(0, 30);
  for (const target of targets()) {
    for (const [label, body] of [
      ['not gzip', notGzip],
      ['truncated gzip', truncated],
    ] as const) {
      const res = await post(target.base, target.path, body, { ...target.headers, 'content-encoding': 'gzip' });
      testNote(`${label} → ${target.name}: ${res.status}`);
      expect(res.status).toBe(400);
      target.shape(res.body, 400);
    }
    const res = await post(target.base, target.path, Buffer.from('{}'), { ...target.headers, 'content-encoding': 'zstd-unknown' });
    expect(res.status).toBe(415);
    target.shape(res.body, 415);
  }
});
