/**
 * HTTP caching of punch reads (src/http/read-caching.ts, docs/decisions.md §7) on every read path — `getPunches`
 * JSON and CSV through the fast lane and the pipeline, the Center's public read, the ROC reads, long-polls and
 * the SSE stream — against the real app on real PostgreSQL: which answers say `public, max-age=N` with a weak
 * `ETag`, the `304` to a matching `If-None-Match` (GET and HEAD) while nothing changed and the `200` once a
 * punch or the event changed, and `private, no-store` without an `ETag` for everything read with a key.
 */
import type { Express } from 'express';
import request from 'supertest';
import { createLogger } from '@sports-timing/shared';
import { createApp } from '../src/app';
import { loadTimingConfig } from '../src/config';
import { localMs, startTiming, upload, type TestUser, type TimingTestContext } from './helpers';

let ctx: TimingTestContext;
let pipeline: Express;
let owner: TestUser;
let publicEvent: number;
let privateEvent: number;

const ETAG = /^W\/"[A-Za-z0-9_-]{22}"$/;
const VARY = 'Accept, Accept-Encoding, apikey, Origin';

function punch(modem: string, i: number) {
  return { modem, card: String(500_000 + i), time: localMs(10, 0, i), code: 31 + (i % 20), type: 'Control' };
}

beforeAll(async () => {
  ctx = await startTiming();
  pipeline = createApp({ database: ctx.database, logger: createLogger('timing-test'), validateResponses: true, fastLane: false });
  owner = await ctx.createUser('cache-owner');
  publicEvent = (
    await request(ctx.app)
      .post('/api/rest/v1/events')
      .set('apikey', owner.key)
      .send({ name: 'Open', public: true, modems: ['HC-1'] })
      .expect(201)
  ).body.id as number;
  privateEvent = (
    await request(ctx.app)
      .post('/api/rest/v1/events')
      .set('apikey', owner.key)
      .send({ name: 'Closed', public: false, modems: ['HC-9'] })
      .expect(201)
  ).body.id as number;
  await upload(ctx, owner.key, [punch('HC-1', 1), punch('HC-1', 2), punch('HC-9', 3)]);
}, 60_000);
afterAll(async () => ctx?.close());

/** Both ways a `getPunches` read is answered: the fast lane (default app) and the Express pipeline. */
const lanes: [string, () => Express][] = [
  ['fast lane', () => ctx.app],
  ['pipeline', () => pipeline],
];

describe.each(lanes)('getPunches through the %s', (_name, app) => {
  it.each(['application/json', 'text/csv'])('a public read (%s) is public with a weak ETag, and 304 to it while nothing changed', async (accept) => {
    const url = `/api/rest/v1/punches?eventId=${publicEvent}&afterId=0`;
    const first = await request(app()).get(url).set('Accept', accept).expect(200);
    expect(first.headers['cache-control']).toBe('public, max-age=1, stale-while-revalidate=1');
    expect(first.headers.vary).toBe(VARY);
    const etag = first.headers.etag;
    expect(etag).toMatch(ETAG);
    // Same read, same tag (no body is hashed: the tag comes from the head and the read).
    expect((await request(app()).get(url).set('Accept', accept).expect(200)).headers.etag).toBe(etag);

    const hit = await request(app()).get(url).set('Accept', accept).set('If-None-Match', etag).expect(304);
    expect(hit.text ?? '').toBe('');
    expect(hit.headers.etag).toBe(etag);
    expect(hit.headers['cache-control']).toBe('public, max-age=1, stale-while-revalidate=1');
    expect(hit.headers.vary).toBe(VARY);
    // A list naming it, the strong form, and `*` match too; another tag does not.
    await request(app()).get(url).set('Accept', accept).set('If-None-Match', `W/"AAAAAAAAAAAAAAAAAAAAAA", ${etag}`).expect(304);
    await request(app()).get(url).set('Accept', accept).set('If-None-Match', etag.slice(2)).expect(304);
    await request(app()).get(url).set('Accept', accept).set('If-None-Match', '*').expect(304);
    const miss = await request(app()).get(url).set('Accept', accept).set('If-None-Match', 'W/"AAAAAAAAAAAAAAAAAAAAAA"').expect(200);
    expect(miss.headers.etag).toBe(etag);
    expect(miss.headers['x-total-count']).toBe('2');
  });

  it('JSON and CSV, and different afterIds, have different tags', async () => {
    const json = await request(app()).get(`/api/rest/v1/punches?eventId=${publicEvent}`).set('Accept', 'application/json').expect(200);
    const csv = await request(app()).get(`/api/rest/v1/punches?eventId=${publicEvent}`).set('Accept', 'text/csv').expect(200);
    const later = await request(app()).get(`/api/rest/v1/punches?eventId=${publicEvent}&afterId=${json.body[0].id}`).expect(200);
    expect(new Set([json.headers.etag, csv.headers.etag, later.headers.etag]).size).toBe(3);
    await request(app()).get(`/api/rest/v1/punches?eventId=${publicEvent}`).set('Accept', 'text/csv').set('If-None-Match', json.headers.etag).expect(200);
  });

  it('an If-None-Match the spec does not admit (a TAB, over 1024 characters) is a 400', async () => {
    const url = `/api/rest/v1/punches?eventId=${publicEvent}`;
    for (const bad of ['W/"1.a\tb"', `W/"${'a'.repeat(1030)}"`]) {
      const res = await request(app()).get(url).set('If-None-Match', bad).expect(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
  });

  it('a read with a key is private, no-store, without an ETag, and never a 304', async () => {
    const url = `/api/rest/v1/punches?eventId=${publicEvent}`;
    const anonymous = await request(app()).get(url).expect(200);
    for (const res of [
      await request(app()).get(url).set('apikey', owner.key).set('If-None-Match', anonymous.headers.etag).expect(200),
      await request(app()).get(`/api/rest/v1/punches?eventId=${privateEvent}`).set('apikey', owner.key).set('If-None-Match', '*').expect(200),
      await request(app()).get(`/api/rest/v1/punches?modem=HC-9`).set('apikey', owner.key).expect(200),
    ]) {
      expect(res.headers['cache-control']).toBe('private, no-store');
      expect(res.headers.etag).toBeUndefined();
      expect(res.headers.vary).toBe(VARY);
    }
  });
});

describe('getPunches validators follow the data', () => {
  it('a new punch changes the tag: the old one gets the new page, the new one a 304', async () => {
    const url = `/api/rest/v1/punches?eventId=${publicEvent}&afterId=0`;
    const before = await request(ctx.app).get(url).expect(200);
    await upload(ctx, owner.key, [punch('HC-1', 10)]);
    const after = await request(ctx.app).get(url).set('If-None-Match', before.headers.etag).expect(200);
    expect(after.headers.etag).toMatch(ETAG);
    expect(after.headers.etag).not.toBe(before.headers.etag);
    expect(after.body).toHaveLength(before.body.length + 1);
    await request(ctx.app).get(url).set('If-None-Match', after.headers.etag).expect(304);
  });

  it('an edited event (another modem, no new punch) changes the tag', async () => {
    const url = `/api/rest/v1/punches?eventId=${publicEvent}&afterId=0`;
    const before = await request(pipeline).get(url).expect(200);
    // Edited through the app that reads: its own write drops its cached event (another app learns of it
    // through its LISTEN session, composition.test.ts).
    await request(pipeline)
      .put(`/api/rest/v1/events/${publicEvent}`)
      .set('apikey', owner.key)
      .send({ name: 'Open', public: true, modems: ['HC-1', 'HC-9'] })
      .expect(200);
    const after = await request(pipeline).get(url).set('If-None-Match', before.headers.etag).expect(200);
    expect(after.headers.etag).not.toBe(before.headers.etag);
    expect(after.body.map((p: { modem: string }) => p.modem)).toContain('HC-9');
    await request(pipeline)
      .put(`/api/rest/v1/events/${publicEvent}`)
      .set('apikey', owner.key)
      .send({ name: 'Open', public: true, modems: ['HC-1'] })
      .expect(200);
  });

  it('HEAD answers 304 to a matching If-None-Match, and 200 with the same headers otherwise', async () => {
    const url = `/api/rest/v1/punches?eventId=${publicEvent}`;
    const get = await request(ctx.app).get(url).expect(200);
    const head = await request(ctx.app).head(url).expect(200);
    expect(head.headers.etag).toBe(get.headers.etag);
    expect(head.headers['cache-control']).toBe('public, max-age=1, stale-while-revalidate=1');
    await request(ctx.app).head(url).set('If-None-Match', get.headers.etag).expect(304);
  });

  it('a long-poll is no-store without an ETag, also when it answers at once', async () => {
    for (const url of [`/api/rest/v1/punches?eventId=${publicEvent}&wait=1`, `/api/rest/v1/punches?eventId=${publicEvent}&afterId=999999999&wait=1`]) {
      const res = await request(ctx.app).get(url).set('If-None-Match', '*').expect(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers.etag).toBeUndefined();
    }
  });

  it('the SSE stream is no-store and unbuffered', async () => {
    const res = await request(ctx.app).head(`/api/rest/v1/punches/stream?eventId=${publicEvent}`).set('Accept', 'text/event-stream').expect(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-accel-buffering']).toBe('no');
    expect(res.headers.etag).toBeUndefined();
  });

  it('max-age follows the app option (TIMING_PUNCH_MAX_AGE_SECONDS, default 1)', async () => {
    expect(loadTimingConfig({}).punchMaxAgeSeconds).toBe(1);
    expect(loadTimingConfig({ TIMING_PUNCH_MAX_AGE_SECONDS: '7' }).punchMaxAgeSeconds).toBe(7);
    expect(() => loadTimingConfig({ TIMING_PUNCH_MAX_AGE_SECONDS: '3601' })).toThrow(/TIMING_PUNCH_MAX_AGE_SECONDS/);
    for (const fastLane of [true, false]) {
      const app = createApp({ database: ctx.database, logger: createLogger('timing-test'), fastLane, punchMaxAgeSeconds: 7 });
      const res = await request(app).get(`/api/rest/v1/punches?eventId=${publicEvent}`).expect(200);
      expect(res.headers['cache-control']).toBe('public, max-age=7, stale-while-revalidate=7');
    }
  });
});

describe('getPublicEventPunches (the Center public read)', () => {
  it('is public with a tag per limit, 304 to a matching If-None-Match; private with a key', async () => {
    const url = `/api/rest/v1/public/events/${publicEvent}/punches?afterId=0`;
    const all = await request(ctx.app).get(url).expect(200);
    expect(all.headers['cache-control']).toBe('public, max-age=1, stale-while-revalidate=1');
    expect(all.headers.vary).toBe(VARY);
    expect(all.headers.etag).toMatch(ETAG);
    const one = await request(ctx.app).get(`${url}&limit=1`).expect(200);
    expect(one.headers.etag).toMatch(ETAG);
    expect(one.headers.etag).not.toBe(all.headers.etag);
    await request(ctx.app).get(url).set('If-None-Match', all.headers.etag).expect(304);
    await request(ctx.app).head(url).set('If-None-Match', all.headers.etag).expect(304);
    await request(ctx.app).get(`${url}&limit=1`).set('If-None-Match', all.headers.etag).expect(200);
    const keyed = await request(ctx.app).get(url).set('apikey', owner.key).set('If-None-Match', all.headers.etag).expect(200);
    expect(keyed.headers['cache-control']).toBe('private, no-store');
    expect(keyed.headers.etag).toBeUndefined();
  });
});

describe('ROC reads', () => {
  it('getpunches.asp is public with a weak ETag and 304 while nothing changed; a new punch changes it', async () => {
    const url = `/getpunches.asp?unitId=${publicEvent}&lastId=0`;
    const first = await request(ctx.app).get(url).expect(200);
    expect(first.headers['cache-control']).toBe('public, max-age=1, stale-while-revalidate=1');
    expect(first.headers.vary).toBe(VARY);
    expect(first.headers.etag).toMatch(ETAG);
    await request(ctx.app).get(url).set('If-None-Match', first.headers.etag).expect(304);
    await request(ctx.app).head(url).set('If-None-Match', first.headers.etag).expect(304);
    await upload(ctx, owner.key, [punch('HC-1', 20)]);
    const after = await request(ctx.app).get(url).set('If-None-Match', first.headers.etag).expect(200);
    expect(after.text.length).toBeGreaterThan(first.text.length);
    expect(after.headers.etag).not.toBe(first.headers.etag);
  });

  it('the read with the key in the path, and with the apikey header, is private, no-store, without an ETag', async () => {
    const pub = await request(ctx.app).get(`/getpunches.asp?unitId=${publicEvent}&lastId=0`).expect(200);
    for (const res of [
      await request(ctx.app).get(`/roc/key/${owner.key}/getpunches.asp?unitId=${privateEvent}&lastId=0`).set('If-None-Match', '*').expect(200),
      await request(ctx.app).get(`/roc/key/${owner.key}/getpunches.asp?unitId=${publicEvent}&lastId=0`).set('If-None-Match', pub.headers.etag).expect(200),
      await request(ctx.app).get(`/getpunches.asp?unitId=${publicEvent}&lastId=0`).set('apikey', owner.key).set('If-None-Match', pub.headers.etag).expect(200),
    ]) {
      expect(res.headers['cache-control']).toBe('private, no-store');
      expect(res.headers.etag).toBeUndefined();
    }
  });
});
