/**
 * ROC answers are shared answers (docs/roc.md "Cost"): identical polls under one visible head are rendered once
 * (seen on the service's own counter `roc_answers_rendered_total` on `/metrics`), a new punch makes the next
 * poll render again, and the gzip encoding of a shared answer is byte-identical to the plain text once
 * decompressed. Real app, real HTTP, real PostgreSQL.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import request from 'supertest';
import { localMs, startTiming, upload, type TestUser, type TimingTestContext } from './helpers';
import { rocRows } from './roc-clients';

let ctx: TimingTestContext;
let owner: TestUser;
let event: number;

/** The service's count of rendered ROC answers, from its `/metrics`. */
async function rendered(): Promise<number> {
  const text = (await request(ctx.app).get('/metrics').expect(200)).text;
  const m = /^roc_answers_rendered_total(?:\{[^}]*\})? (\d+)$/m.exec(text);
  if (!m) throw new Error('roc_answers_rendered_total not exported');
  return Number(m[1]);
}

/** GET `path` on a listener of the app with `headers`; the raw body bytes, unparsed and not decompressed. */
async function rawGet(path: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  const server = ctx.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const port = (server.address() as AddressInfo).port;
    return await new Promise((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
          res.on('error', reject);
        })
        .on('error', reject);
    });
  } finally {
    await new Promise((r) => server.close(r));
  }
}

beforeAll(async () => {
  ctx = await startTiming();
  owner = await ctx.createUser('roc-shared-owner');
  event = (
    await request(ctx.app)
      .post('/api/rest/v1/events')
      .set('apikey', owner.key)
      .send({ name: 'ROC shared', public: true, modems: ['SH-1'] })
      .expect(201)
  ).body.id as number;
  const punches = Array.from({ length: 2500 }, (_, i) => ({ modem: 'SH-1', card: String(20_000 + i), time: localMs(8) + i * 1000, code: 40, type: 'Control' }));
  await upload(ctx, owner.key, punches);
}, 60_000);
afterAll(async () => ctx?.close());

describe('shared ROC answers', () => {
  it('N identical polls render once; a new punch renders again', async () => {
    const path = `/getpunches.asp?unitId=${event}&lastId=0`;
    const before = await rendered();
    const concurrent = await Promise.all(Array.from({ length: 20 }, () => request(ctx.app).get(path).expect(200)));
    const sequential = [];
    for (let i = 0; i < 5; i++) sequential.push(await request(ctx.app).get(path).expect(200));
    const texts = new Set([...concurrent, ...sequential].map((r) => r.text));
    expect(texts.size).toBe(1);
    expect(rocRows([...texts][0]).length).toBe(2500);
    expect((await rendered()) - before).toBe(1);

    // Negative control: the head moves, so the next identical poll is rendered again and holds the new punch.
    await upload(ctx, owner.key, [{ modem: 'SH-1', card: '777', time: localMs(10), code: 41, type: 'Control' }]);
    const next = await request(ctx.app).get(path).expect(200);
    expect(rocRows(next.text).length).toBe(2501);
    expect((await rendered()) - before).toBe(2);
  });

  it('gzip when accepted, byte-identical to the plain text after decompression, from the same rendering', async () => {
    const path = `/getpunches.asp?unitId=${event}&lastId=0`;
    const plain = await rawGet(path, {});
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    const before = await rendered();
    const zipped = await rawGet(path, { 'Accept-Encoding': 'gzip, deflate, br' });
    expect(zipped.status).toBe(200);
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(Number(zipped.headers['content-length'])).toBe(zipped.body.length);
    expect(zipped.body.length).toBeLessThan(plain.body.length);
    expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);
    const again = await rawGet(path, { 'Accept-Encoding': 'gzip' });
    expect(again.body.equals(zipped.body)).toBe(true);
    // Served from the answer the plain read rendered.
    expect((await rendered()) - before).toBe(0);
    // Without Accept-Encoding gzip: plain.
    const identity = await rawGet(path, { 'Accept-Encoding': 'identity' });
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.body.equals(plain.body)).toBe(true);
  });
});
