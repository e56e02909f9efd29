/**
 * The fast lane of punch reads and uploads (src/http/punches.fast-lane.ts) against the full pipeline: the
 * same requests to the app with the fast lane (default) and to one without it answer alike — status, the
 * headers a client reads, the body (decoded) — for plain requests and for every request the fast lane must
 * pass on.
 */
import { gzipSync } from 'node:zlib';
import type { Express } from 'express';
import fc from 'fast-check';
import request from 'supertest';
import { createLogger, loadSpec } from '@sports-timing/shared';
import { createApp } from '../src/app';
import { SPEC_FILE } from '../src/version';
import { deref, invalidBodyArb, valueArb, type Schema, type Spec } from '../../../test/fuzz/openapi-arbitraries';
import { localMs, postRaw, startTiming, upload, waitUntilVisible, type TestUser, type TimingTestContext } from './helpers';

/** The local date (YYYY-MM-DD) of the test's punches, as MeOS sends its competition date. */
const rocDate = () => new Date(localMs(18)).toISOString().slice(0, 10);

let ctx: TimingTestContext;
let pipeline: Express;
let org: TestUser;
let other: TestUser;
let publicEventId: number;
let privateEventId: number;

beforeAll(async () => {
  ctx = await startTiming();
  pipeline = createApp({ database: ctx.database, logger: createLogger('timing-test'), validateResponses: true, fastLane: false });
  org = await ctx.createUser('org');
  other = await ctx.createUser('other');
  const punches = (modem: string, n: number, start: number) =>
    Array.from({ length: n }, (_, i) => ({ card: String(400_000 + i), time: start + i * 1000, code: 31 + (i % 50), type: 'Control', modem }));
  await upload(ctx, org.key, [...punches('F-1', 40, localMs(18, 30)), ...punches('F-2', 30, localMs(18, 40))]);
  await upload(ctx, org.key, punches('F-3', 12, localMs(19)));
  let res = await request(ctx.app)
    .post('/api/rest/v1/events')
    .set('apikey', org.key)
    .send({ name: 'Open', public: true, modems: ['F-1', 'F-2'], from: localMs(18) })
    .expect(201);
  publicEventId = res.body.id;
  res = await request(ctx.app)
    .post('/api/rest/v1/events')
    .set('apikey', org.key)
    .send({ name: 'Closed', public: false, modems: ['F-3'] })
    .expect(201);
  privateEventId = res.body.id;
});
afterAll(async () => ctx.close());

interface Answer {
  status: number;
  headers: Record<string, string | undefined>;
  body: string;
  contentLength: string | undefined;
}

const COMPARED_HEADERS = ['content-type', 'content-encoding', 'cache-control', 'etag', 'x-total-count', 'vary', 'www-authenticate'];

async function ask(app: Express, path: string, headers: Record<string, string>): Promise<Answer> {
  const res = await request(app)
    .get(path)
    .set(headers)
    .buffer(true)
    .parse((r, done) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => done(null, Buffer.concat(chunks)));
    });
  // superagent inflates gzip itself (and asks for it unless told otherwise): both paths compare by content.
  const text = (res.body as Buffer).toString('utf8');
  expect(res.headers['x-request-id']).toMatch(/^[\w.-]{1,64}$/);
  return {
    status: res.status,
    headers: Object.fromEntries(COMPARED_HEADERS.map((h) => [h, res.headers[h] as string | undefined])),
    body: text,
    contentLength: res.headers['content-length'],
  };
}

/** Problem documents carry the request's own id; everything else must match. */
function comparable(a: Answer): Answer {
  if (!a.headers['content-type']?.startsWith('application/problem+json')) return a;
  const { traceId: _traceId, ...rest } = JSON.parse(a.body) as Record<string, unknown>;
  return { ...a, body: JSON.stringify(rest) };
}

async function expectSameAnswer(path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const fast = await ask(ctx.app, path, headers);
  const slow = await ask(pipeline, path, headers);
  expect({ ...comparable(fast), contentLength: undefined }).toEqual({ ...comparable(slow), contentLength: undefined });
  return fast;
}

describe('plain reads: same answer as the pipeline', () => {
  it.each([
    ['event, JSON', () => `/api/rest/v1/punches?eventId=${publicEventId}&afterId=0`, () => ({})],
    ['event, CSV', () => `/api/rest/v1/punches?eventId=${publicEventId}&afterId=0&after=${localMs(18)}.0`, () => ({ accept: 'text/csv' })],
    ['event, */* with q-values', () => `/api/rest/v1/punches?eventId=${publicEventId}&afterId=5`, () => ({ accept: 'text/csv;q=0.5, application/json;q=0.9' })],
    ['event at the head', () => `/api/rest/v1/punches?eventId=${publicEventId}&afterId=999999`, () => ({})],
    ['modems, encoded comma', () => `/api/rest/v1/punches?modem=F-1%2CF-2&afterId=10`, () => ({})],
    ['modems, unknown serial', () => `/api/rest/v1/punches?modem=F-1,NOPE`, () => ({ accept: 'text/csv' })],
    ['private event with the owner key', () => `/api/rest/v1/punches?eventId=${privateEventId}`, () => ({ apikey: org.key })],
    ['own modems by user', () => `/api/rest/v1/punches?user=org&eventId=${publicEventId}`, () => ({ apikey: org.key })],
    ['user by an admin', () => `/api/rest/v1/punches?user=org`, () => ({ apikey: ctx.adminKey })],
    ['empty apikey header counts as none', () => `/api/rest/v1/punches?eventId=${publicEventId}`, () => ({ apikey: '  ' })],
  ])('%s', async (_name, path, headers) => {
    const a = await expectSameAnswer(path(), headers());
    expect(a.status).toBe(200);
  });

  it('gzip: the same punches, compressed at the same threshold, sent in one piece with its length', async () => {
    const path = `/api/rest/v1/punches?eventId=${publicEventId}`;
    const fast = await expectSameAnswer(path, { 'accept-encoding': 'gzip, deflate, br' });
    expect(fast.headers['content-encoding']).toBe('gzip');
    // The fast lane compresses in one piece (Content-Length); the pipeline streams (chunked): this is how
    // the test knows the fast lane answered.
    expect(Number(fast.contentLength)).toBeGreaterThan(0);
    expect((await ask(pipeline, path, { 'accept-encoding': 'gzip' })).contentLength).toBeUndefined();
    // A small body stays uncompressed, gzip not acceptable → identity.
    const small = await expectSameAnswer(`/api/rest/v1/punches?eventId=${publicEventId}&afterId=999999`, { 'accept-encoding': 'gzip' });
    expect(small.headers['content-encoding']).toBeUndefined();
    expect((await expectSameAnswer(path, { 'accept-encoding': 'gzip;q=0, identity' })).headers['content-encoding']).toBeUndefined();
  });

  it('counts fast-lane reads in the request metrics', async () => {
    const metric = async () => {
      const text = (await request(ctx.app).get('/metrics').expect(200)).text;
      const line = text.split('\n').find((l) => l.startsWith('http_requests_total{') && l.includes('operation="getPunches"') && l.includes('status="200"'));
      return line ? Number(line.split(' ').pop()) : 0;
    };
    const before = await metric();
    await request(ctx.app).get(`/api/rest/v1/punches?eventId=${publicEventId}`).expect(200);
    await request(ctx.app).get(`/api/rest/v1/punches?eventId=${publicEventId}`).set('accept', 'text/csv').expect(200);
    expect(await metric()).toBe(before + 2);
  });
});

describe('ROC reads (getRocPunches, as ROC readers send them): same answer as the pipeline', () => {
  it.each([
    ['event from 0', () => `/getpunches.asp?unitId=${publicEventId}&lastId=0`, () => ({}), 200],
    ['event after an id', () => `/getpunches.asp?unitId=${publicEventId}&lastId=10`, () => ({}), 200],
    ['event at the head', () => `/getpunches.asp?unitId=${publicEventId}&lastId=999999`, () => ({}), 200],
    ['MeOS: date and zero time, colons unencoded', () => `/getpunches.asp?unitId=${publicEventId}&lastId=0&date=${rocDate()}&time=18:35:00`, () => ({}), 200],
    ['a unit (modem serial)', () => '/getpunches.asp?unitId=F-1&lastId=5', () => ({}), 200],
    // Passed on to the pipeline:
    ['time without date', () => `/getpunches.asp?unitId=${publicEventId}&lastId=0&time=18:35:00`, () => ({}), 400],
    ['lastId missing', () => `/getpunches.asp?unitId=${publicEventId}`, () => ({}), 400],
    ['lastId not a number', () => `/getpunches.asp?unitId=${publicEventId}&lastId=x`, () => ({}), 400],
    ['unknown event', () => '/getpunches.asp?unitId=987654&lastId=0', () => ({}), 404],
    ['private event, anonymous', () => `/getpunches.asp?unitId=${privateEventId}&lastId=0`, () => ({}), 404],
    ['private event with the apikey header', () => `/getpunches.asp?unitId=${privateEventId}&lastId=0`, () => ({ apikey: org.key }), 200],
    ['an Accept header', () => `/getpunches.asp?unitId=${publicEventId}&lastId=0`, () => ({ accept: 'text/plain' }), 200],
    ['undeclared parameter', () => `/getpunches.asp?unitId=${publicEventId}&lastId=0&_=1`, () => ({}), 200],
  ])('%s', async (_name, path, headers, status) => {
    const a = await expectSameAnswer(path(), headers());
    expect(a.status).toBe(status);
  });

  it('the fast lane answers them (the length after the caching headers), gzip, 304 to the ETag, counted in the metrics', async () => {
    const path = `/getpunches.asp?unitId=${publicEventId}&lastId=0`;
    // Both send a Content-Length: the lane writes it after the caching headers, the pipeline's sendText before them.
    const names = async (app: Express) =>
      ((await request(app).get(path)) as unknown as { res: { rawHeaders: string[] } }).res.rawHeaders.join(' ').toLowerCase();
    const [lane, full] = [await names(ctx.app), await names(pipeline)];
    expect([lane.indexOf('content-length') > lane.indexOf('etag'), full.indexOf('content-length') < full.indexOf('etag')]).toEqual([true, true]);
    const fast = await expectSameAnswer(path, { 'accept-encoding': 'gzip' });
    expect(fast.headers['content-encoding']).toBe('gzip');
    const etag = fast.headers.etag!;
    expect((await expectSameAnswer(path, { 'if-none-match': etag })).status).toBe(304);
    const metric = async () => {
      const text = (await request(ctx.app).get('/metrics').expect(200)).text;
      const line = text.split('\n').find((l) => l.startsWith('http_requests_total{') && l.includes('operation="getRocPunches"') && l.includes('status="200"'));
      return line ? Number(line.split(' ').pop()) : 0;
    };
    const before = await metric();
    await request(ctx.app).get(path).expect(200);
    expect(await metric()).toBe(before + 1);
  });
});

describe('requests the fast lane passes on: the pipeline answers them', () => {
  it.each([
    ['no filter', () => '/api/rest/v1/punches?afterId=0', () => ({}), 400],
    ['afterId not a number', () => `/api/rest/v1/punches?eventId=${publicEventId}&afterId=abc`, () => ({}), 400],
    ['negative afterId', () => `/api/rest/v1/punches?eventId=${publicEventId}&afterId=-1`, () => ({}), 400],
    ['afterId repeated', () => `/api/rest/v1/punches?eventId=${publicEventId}&afterId=1&afterId=2`, () => ({}), 400],
    // A public read ignores undeclared parameters (a cache buster), but not a case typo of a declared one.
    ['undeclared parameter', () => `/api/rest/v1/punches?eventId=${publicEventId}&_=1700000000`, () => ({}), 200],
    ['case typo of a parameter', () => `/api/rest/v1/punches?eventId=${publicEventId}&afterid=5`, () => ({}), 400],
    ['eventId not digits', () => '/api/rest/v1/punches?eventId=x1', () => ({}), 400],
    ['unknown event', () => '/api/rest/v1/punches?eventId=987654', () => ({}), 404],
    ['private event, anonymous (as a missing one)', () => `/api/rest/v1/punches?eventId=${privateEventId}`, () => ({}), 404],
    ['private event, another key (as a missing one)', () => `/api/rest/v1/punches?eventId=${privateEventId}`, () => ({ apikey: other.key }), 404],
    ['unknown key', () => `/api/rest/v1/punches?eventId=${publicEventId}`, () => ({ apikey: 'tk_not-a-key' }), 401],
    ['user without a key', () => '/api/rest/v1/punches?user=org', () => ({}), 401],
    ['another user', () => '/api/rest/v1/punches?user=org', () => ({ apikey: other.key }), 403],
    ['not acceptable', () => `/api/rest/v1/punches?eventId=${publicEventId}`, () => ({ accept: 'text/xml' }), 406],
    ['wait=0 (long-poll parameter)', () => `/api/rest/v1/punches?eventId=${publicEventId}&wait=0`, () => ({}), 200],
    ['afterId beyond 15 digits', () => `/api/rest/v1/punches?eventId=${publicEventId}&afterId=1000000000000000`, () => ({}), 200],
    ['a parameter named like an Object property', () => `/api/rest/v1/punches?eventId=${publicEventId}&constructor=1`, () => ({}), 400],
  ])('%s', async (_name, path, headers, status) => {
    const a = await expectSameAnswer(path(), headers());
    expect(a.status).toBe(status);
  });
});

interface UploadAnswer {
  status: number;
  headers: Record<string, string | undefined>;
  body: Record<string, unknown>;
}

const UPLOAD_HEADERS = ['content-type', 'vary', 'www-authenticate', 'content-encoding'];

async function post(app: Express, body: string | Buffer, headers: Record<string, string>): Promise<UploadAnswer> {
  // Raw bytes over a real socket: supertest would re-encode a Buffer sent as JSON.
  const res = await postRaw(app, '/api/rest/v1/punches', { 'content-type': 'application/json', 'accept-encoding': 'identity', ...headers }, Buffer.from(body));
  expect(res.headers.get('x-request-id')).toMatch(/^[\w.-]{1,64}$/);
  const { traceId: _traceId, ...rest } = res.body;
  return { status: res.status, headers: Object.fromEntries(UPLOAD_HEADERS.map((h) => [h, res.headers.get(h) ?? undefined])), body: rest };
}

let cardSeq = 5_000_000;

/**
 * Posts the same upload to both apps; `make` builds the body from a fresh card number per app, so that
 * the second app's batch is not a re-send of the first's.
 */
async function expectSameUpload(make: (card: string) => string | Buffer, headers: Record<string, string>): Promise<UploadAnswer> {
  const fast = await post(ctx.app, make(String(cardSeq++)), headers);
  const slow = await post(pipeline, make(String(cardSeq++)), headers);
  expect(fast).toEqual(slow);
  return fast;
}

const punch = (card: string, extra: Record<string, unknown> = {}) => ({ card, time: localMs(20), code: 77, type: 'Finish', modem: 'F-1', ...extra });

describe('uploads: same answer as the pipeline', () => {
  it.each([
    ['one punch', (c: string) => JSON.stringify([punch(c)]), () => ({ apikey: org.key }), 200],
    ['a batch with a re-sent punch', (c: string) => JSON.stringify([punch(c), punch(c), punch(c, { code: 78 })]), () => ({ apikey: org.key }), 200],
    [
      'charset in the content type',
      (c: string) => JSON.stringify([punch(c)]),
      () => ({ apikey: org.key, 'content-type': 'application/json; charset=utf-8' }),
      200,
    ],
    ['a modem uploaded for the first time', (c: string) => JSON.stringify([punch(c, { modem: `NEW-${c}` })]), () => ({ apikey: org.key }), 200],
    ['card as a JSON integer (pipeline)', (c: string) => JSON.stringify([punch(c, { card: Number(c) })]), () => ({ apikey: org.key }), 200],
    ['an empty batch (pipeline)', () => '[]', () => ({ apikey: org.key }), 200],
    [
      'an invalid punch (stored without it, pipeline)',
      (c: string) => JSON.stringify([punch(c), punch(c, { code: -1, type: 'Lap' })]),
      () => ({ apikey: org.key }),
      200,
    ],
    ['an extra field (rejected alone, pipeline)', (c: string) => JSON.stringify([punch(c, { id: 5 })]), () => ({ apikey: org.key }), 200],
    ['a card above 24 bits (rejected alone, pipeline)', (c: string) => JSON.stringify([punch(c), punch('16777216')]), () => ({ apikey: org.key }), 200],
    ['nested deeper than 32 levels', () => `${'['.repeat(40)}${']'.repeat(40)}`, () => ({ apikey: org.key }), 400],
    ['not an array', (c: string) => JSON.stringify(punch(c)), () => ({ apikey: org.key }), 400],
    ['malformed JSON', () => '[{"card":', () => ({ apikey: org.key }), 400],
    ['malformed JSON with an unknown key: access first', () => '[{"card":', () => ({ apikey: 'tk_unknown' }), 401],
    ['an unknown key', (c: string) => JSON.stringify([punch(c)]), () => ({ apikey: 'tk_unknown' }), 401],
    ['no key', (c: string) => JSON.stringify([punch(c)]), () => ({}), 401],
    ["another user's modem", (c: string) => JSON.stringify([punch(c)]), () => ({ apikey: other.key }), 403],
    [
      'a gzip-encoded batch',
      (c: string) => gzipSync(JSON.stringify([punch(c), punch(c, { code: 79 })])),
      () => ({ apikey: org.key, 'content-encoding': 'gzip' }),
      200,
    ],
    ['gzip that does not inflate', () => Buffer.from('not gzip'), () => ({ apikey: org.key, 'content-encoding': 'gzip' }), 400],
    [
      'more than 10,000 punches',
      (c: string) => JSON.stringify(Array.from({ length: 10_001 }, (_, i) => punch(c, { code: i % 1000 }))),
      () => ({ apikey: org.key }),
      400,
    ],
    ['an unsupported content encoding', (c: string) => JSON.stringify([punch(c)]), () => ({ apikey: org.key, 'content-encoding': 'br' }), 415],
  ])('%s', async (_name, make, headers, status) => {
    const a = await expectSameUpload(make, headers());
    expect(a.status).toBe(status);
  });

  it('stores what it answers: reception time at arrival, ingest metric', async () => {
    const metric = async () => {
      const line = (await request(ctx.app).get('/metrics').expect(200)).text.split('\n').find((l) => l.startsWith('punches_ingested_total'));
      return Number(line?.split(' ').pop() ?? 0);
    };
    const before = await metric();
    const sentAt = Date.now();
    const card = String(cardSeq++);
    const res = await request(ctx.app)
      .post('/api/rest/v1/punches')
      .set('apikey', org.key)
      .send([punch(card, { modem: 'F-2' })])
      .expect(200);
    expect(res.body).toEqual({ received: 1, stored: 1, duplicates: 0, rejected: [] });
    expect(await metric()).toBe(before + 1);
    // Other test files' open transactions on the cluster may delay visibility (the polling rule).
    await waitUntilVisible(ctx);
    const read = await request(ctx.app).get(`/api/rest/v1/punches?modem=F-2&afterId=0`).set('apikey', org.key).expect(200);
    const stored = (read.body as { card: string; receptionTimeUtc: number }[]).find((p) => p.card === card);
    expect(stored?.receptionTimeUtc).toBeGreaterThanOrEqual(sentAt);
    expect(stored?.receptionTimeUtc).toBeLessThanOrEqual(Date.now());
  });
});

describe('uploads with a key that stops working', () => {
  it('writes nothing for a revoked key and answers its 401; the same key worked before', async () => {
    const user = await ctx.createUser('revoked-soon');
    const batch = [{ card: '42', time: localMs(21), code: 99, type: 'Check' as const, modem: 'R-1' }];
    const ok = await request(ctx.app).post('/api/rest/v1/punches').set('apikey', user.key).send(batch).expect(200);
    expect(ok.body).toEqual({ received: 1, stored: 1, duplicates: 0, rejected: [] });
    await ctx.database.pool.query('update api_keys set revoked_at = now() where user_id = $1', [user.id]);
    const next = [{ ...batch[0], card: '43' }];
    await request(ctx.app).post('/api/rest/v1/punches').set('apikey', user.key).send(next).expect(401);
    await request(ctx.app).post('/api/rest/v1/punches').set('apikey', 'x'.repeat(300)).send(next).expect(401);
    const { rows } = await ctx.database.pool.query<{ n: number }>(`select count(*)::int as n from punches where modem = 'R-1'`);
    expect(rows[0].n).toBe(1);
  });
});

/** Seed of the generated requests (fixed, so a failure repeats). */
const FUZZ_SEED = 20261126;

describe('generated requests (spec arbitraries, test/fuzz): same answer as the pipeline', () => {
  const spec = loadSpec(SPEC_FILE) as unknown as Spec;
  const operation = (method: string) => spec.paths['/api/rest/v1/punches'][method] as Schema;

  it('reads: every query parameter valid by its schema, any text, or a value of this test', async () => {
    // `wait` is a long poll (the pipeline's alone) and would hold each request up to its value in seconds.
    const parameters = (operation('get').parameters as unknown[]).map((p) => deref(spec, p)).filter((p) => p.in === 'query' && p.name !== 'wait');
    const known: Record<string, () => string[]> = {
      eventId: () => [String(publicEventId), String(privateEventId)],
      modem: () => ['F-1', 'F-1,F-2', 'F-3'],
      user: () => ['org', 'other'],
    };
    const query = fc.record(
      Object.fromEntries(
        parameters.map((p) => [
          p.name as string,
          fc.oneof(
            valueArb(spec, p.schema).map((v) => String(v)),
            fc.string({ maxLength: 12 }),
            fc.constantFrom(...(known[p.name]?.() ?? ['0'])),
          ),
        ]),
      ),
      { requiredKeys: [] },
    );
    const headers = fc.record(
      {
        apikey: fc.constantFrom('org', 'other', 'admin', ' '),
        accept: fc.constantFrom('text/csv', 'application/json', '*/*', 'text/xml'),
        'accept-encoding': fc.constantFrom('gzip', 'identity'),
      },
      { requiredKeys: [] },
    );
    const keys: Record<string, () => string> = { org: () => org.key, other: () => other.key, admin: () => ctx.adminKey, ' ': () => ' ' };
    await fc.assert(
      fc.asyncProperty(query, headers, async (q, h) => {
        const path = `/api/rest/v1/punches?${new URLSearchParams(q as Record<string, string>).toString()}`;
        await expectSameAnswer(path, { ...h, ...(h.apikey === undefined ? {} : { apikey: keys[h.apikey]() }) });
      }),
      { seed: FUZZ_SEED, numRuns: 60 },
    );
  });

  it('uploads: batches valid by the spec, and batches certainly invalid for it', async () => {
    const body = ((operation('post').requestBody as Schema).content as Record<string, Schema>)['application/json'].schema;
    // Card numbers and first-seen modems are made per app (see expectSameUpload); the rest is generated.
    const valid = (valueArb(spec, body) as fc.Arbitrary<Record<string, unknown>[]>).chain((batch) =>
      fc
        .constantFrom('F-1', 'NEW')
        .map((modem) => (card: string) => JSON.stringify(batch.map((p) => ({ ...p, card, modem: modem === 'NEW' ? `G-${card}` : modem })))),
    );
    const invalid = (invalidBodyArb(spec, body) as fc.Arbitrary<unknown>).map((b) => () => JSON.stringify(b));
    const mistypedField = fc
      .tuple(
        valueArb(spec, body) as fc.Arbitrary<Record<string, unknown>[]>,
        fc.constantFrom('card', 'time', 'code', 'type', 'modem'),
        fc.jsonValue({ maxDepth: 1 }),
      )
      .filter(([batch]) => batch.length > 0)
      .map(
        ([batch, field, value]) =>
          (card: string) =>
            JSON.stringify(batch.map((p, i) => ({ ...p, card, modem: 'F-1', ...(i === 0 ? { [field]: value } : {}) }))),
      );
    await fc.assert(
      fc.asyncProperty(fc.oneof(valid, invalid, mistypedField), fc.constantFrom('org', 'other'), async (make, who) => {
        await expectSameUpload(make, { apikey: who === 'org' ? org.key : other.key });
      }),
      { seed: FUZZ_SEED, numRuns: 60 },
    );
  });
});
