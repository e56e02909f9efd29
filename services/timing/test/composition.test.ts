/**
 * Two timing apps in one process share nothing unless composed to (docs/architecture.md "Composition root of
 * timing"): each composition (composition.ts) has its own read caches, bounded by its own
 * `TIMING_READ_CACHE_MB`, its own event cache, dropped only by its own writes and its own LISTEN session, and the
 * limits of its own spec — even when both apps run on the very same pool, the key the old per-pool registries
 * shared state by.
 */
import type { Express } from 'express';
import request from 'supertest';
import { createLogger, loadSpec, parameterSchemaOf, responseSchemaOf } from '@sports-timing/shared';
import { testTime } from '@sports-timing/shared/src/test-time';
import { createApp } from '../src/app';
import { composeTiming, type TimingComposition } from '../src/composition';
import { startPunchListener } from '../src/live/listener';
import type { PunchReadCache } from '../src/punches/read-cache';
import { SPEC_FILE } from '../src/version';
import { startTiming, upload, type TestUser, type TimingTestContext } from './helpers';
import type { components } from '../src/generated/openapi';

let ctx: TimingTestContext;
let owner: TestUser;
const logger = createLogger('timing-composition-test', 'silent');

/** Longer than any test here: a cached event only goes by invalidation, never by age. */
const HOUR_MS = 3_600_000;

beforeAll(async () => {
  ctx = await startTiming();
  owner = await ctx.createUser('owner');
  await upload(ctx, owner.key, [
    { card: '1001', time: 1_600_000_000_000, code: 31, type: 'Control', modem: 'CA-1' },
    { card: '1002', time: 1_600_000_001_000, code: 32, type: 'Control', modem: 'CB-1' },
  ]);
});

afterAll(async () => {
  await ctx?.close();
});

/** A composition on the test database (the same pool as every other app here) and its app. */
function composed(extra: { readCacheBytes?: number } = {}): { timing: TimingComposition; app: Express } {
  const timing = composeTiming({ database: ctx.database, logger, eventCacheTtlMs: HOUR_MS, ...extra });
  return { timing, app: createApp(timing) };
}

function primary(timing: TimingComposition): PunchReadCache {
  const cache = timing.punches.caches.primary;
  if (cache === null) throw new Error('read cache off');
  return cache;
}

async function createEvent(modems: string[]): Promise<number> {
  const res = await request(ctx.app)
    .post('/api/rest/v1/events')
    .set('apikey', owner.key)
    .send({ name: `e-${modems.join('-')}`, public: true, modems });
  expect(res.status).toBe(201);
  return (res.body as components['schemas']['Event']).id;
}

/** The modems of the punches app `app` answers for the event. */
async function modemsRead(app: Express, eventId: number): Promise<string[]> {
  const res = await request(app).get(`/api/rest/v1/punches?eventId=${eventId}`).expect(200);
  return (res.body as components['schemas']['Punch'][]).map((p) => p.modem);
}

it('each app honours its own TIMING_READ_CACHE_MB and keeps its answers to itself', async () => {
  const eventId = await createEvent(['CA-1', 'CB-1']);
  // The first app's bound is too small to keep any answer; the second's is the default. With one cache per
  // pool, the first bound would have applied to both.
  const tiny = composed({ readCacheBytes: 100 });
  const roomy = composed();
  expect(primary(tiny.timing)).not.toBe(primary(roomy.timing));
  expect(tiny.timing.punches.notifier).not.toBe(roomy.timing.punches.notifier);
  for (let i = 0; i < 2; i++) expect(await modemsRead(tiny.app, eventId)).toEqual(['CA-1', 'CB-1']);
  expect(primary(tiny.timing).stats).toMatchObject({ hits: 0, computed: 2 });
  // The roomy app computes its own first answer (nothing of the tiny one's), then serves it again.
  for (let i = 0; i < 2; i++) expect(await modemsRead(roomy.app, eventId)).toEqual(['CA-1', 'CB-1']);
  expect(primary(roomy.timing).stats).toMatchObject({ hits: 1, computed: 1 });
  // Off in one app (0) is off there only.
  const off = composed({ readCacheBytes: 0 });
  expect(off.timing.punches.caches.primary).toBeNull();
  expect(await modemsRead(off.app, eventId)).toEqual(['CA-1', 'CB-1']);
  expect(primary(roomy.timing).stats).toMatchObject({ hits: 1, computed: 1 });
});

it("an event change drops the cached event of the app that wrote it, and not another app's", async () => {
  const eventId = await createEvent(['CA-1']);
  const a = composed();
  const b = composed();
  expect(a.timing.eventCache).not.toBe(b.timing.eventCache);
  expect(await modemsRead(a.app, eventId)).toEqual(['CA-1']);
  expect(await modemsRead(b.app, eventId)).toEqual(['CA-1']);
  await request(a.app)
    .put(`/api/rest/v1/events/${eventId}`)
    .set('apikey', owner.key)
    .send({ name: 'moved', public: true, modems: ['CB-1'] })
    .expect(200);
  // A's write dropped A's copy at once; B (no LISTEN session, entries kept for an hour) still has its own.
  expect(await modemsRead(a.app, eventId)).toEqual(['CB-1']);
  expect(await modemsRead(b.app, eventId)).toEqual(['CA-1']);
  // What B's LISTEN session does on the NOTIFY of that write: drop B's copy.
  b.timing.eventCache.invalidate(eventId);
  expect(await modemsRead(b.app, eventId)).toEqual(['CB-1']);
});

it("a LISTEN session invalidates its own app's event cache only", async () => {
  const eventId = await createEvent(['CA-1']);
  const listening = composed();
  const deaf = composed();
  const listener = startPunchListener(ctx.database.url, listening.timing, logger);
  try {
    await listener.ready;
    expect(await modemsRead(listening.app, eventId)).toEqual(['CA-1']);
    expect(await modemsRead(deaf.app, eventId)).toEqual(['CA-1']);
    // A third app changes the event; its NOTIFY reaches the listening app's session.
    await request(ctx.app)
      .put(`/api/rest/v1/events/${eventId}`)
      .set('apikey', owner.key)
      .send({ name: 'moved', public: true, modems: ['CB-1'] })
      .expect(200);
    const deadline = Date.now() + testTime(10_000);
    while ((await modemsRead(listening.app, eventId))[0] !== 'CB-1') {
      if (Date.now() > deadline) throw new Error('the listening app never saw the event change');
      await new Promise((r) => setTimeout(r, 20));
    }
    // The other app's copy was not touched by that session (the process-wide invalidation would have dropped it).
    expect(await modemsRead(deaf.app, eventId)).toEqual(['CA-1']);
  } finally {
    await listener.stop();
  }
});

it("an app over a modified spec enforces that spec's limits, and only that app", async () => {
  const spec = loadSpec(SPEC_FILE);
  parameterSchemaOf(spec, 'getPunches', 'modem')['x-max-list-items'] = 2;
  const strict = composeTiming({ database: ctx.database, logger, spec });
  expect(strict.limits.maxModemsPerQuery).toBe(2);
  expect(strict.spec).toBe(spec);
  const app = createApp(strict);
  const res = await request(app).get('/api/rest/v1/punches?modem=CA-1,CB-1,CC-1').expect(400);
  expect(res.text).toContain('at most 2 serial numbers');
  await request(app).get('/api/rest/v1/punches?modem=CA-1,CB-1').expect(200);
  // Every other app keeps the checked-in spec's limit (200).
  expect(ctx.timing.limits.maxModemsPerQuery).toBeGreaterThan(3);
  await request(ctx.app).get('/api/rest/v1/punches?modem=CA-1,CB-1,CC-1').expect(200);
});

it('refuses a spec whose page size the page statements were not built with', () => {
  const spec = loadSpec(SPEC_FILE);
  responseSchemaOf(spec, 'getPunches').maxItems = 10;
  expect(() => composeTiming({ database: ctx.database, logger, spec })).toThrow(/page size must stay 1000/);
});
