/**
 * Shared answers (punches/read-cache.ts) are exact: under 16 concurrent uploaders, groups of pollers ask the
 * same question at once (same event, same `afterId`, the way live clients at the head do) through the
 * cached read, and every answer is checked against what the database held at some moment within that request.
 *
 * The check: before and after each request the test takes a lower and an upper bound of the readers' horizon:
 * x1, the snapshot's xmin before it (every later horizon is at least that), and x2, the own-writers horizon
 * (`punch_visible_xmin()`, with stranger lists read afresh) after its answer. Once all uploads have ended,
 * the final rows of the event (id, txid) say what any snapshot shows: with the gap-free protocol, the punches
 * a snapshot with horizon X exposes after `afterId` are exactly those with `txid < X`, an id prefix. So an
 * answer of m < 1000 punches must be the first m punches after afterId, hold
 * every punch with `txid < x1`, none with `txid >= x2`, and never split an upload's transaction; its
 * X-Total-Count must be m (a full page: between the counts at x1 and x2).
 *
 * Negative control: a naive cache that answers a repeated request with the answer of the first one (no
 * snapshot check) fails the same check under the same load, so the check does catch a stale answer.
 */
import { DEFAULT_QUOTAS } from '../src/config';
import { createEvent } from '../src/events/events.service';
import { createPunchService, readPunches, uploadPunches, type PunchService } from '../src/punches/punches.service';
import type { PunchReadCache } from '../src/punches/read-cache';
import { authenticateKey } from '../src/users/users.service';
import { startTiming, waitUntilVisible, type TimingTestContext } from './helpers';
import { testTime } from '@sports-timing/shared/src/test-time';

const UPLOADERS = 16;
const GROUPS = 3;
const POLLERS_PER_GROUP = 6;
const RUN_MS = 3_000;
const MAX_RUN_MS = 30_000;
const MIN_OBSERVATIONS = 200;
const MODEMS = ['RC-1', 'RC-2', 'RC-3', 'RC-4'];

let ctx: TimingTestContext;

beforeAll(async () => {
  ctx = await startTiming({ poolSize: UPLOADERS + 8 });
});
afterAll(async () => {
  await ctx.close();
});

/** One request as the checker sees it. */
interface Observation {
  afterId: number;
  ids: number[];
  total: number;
  /** Bounds of the readers' horizon: the snapshot's xmin just before the request, the fresh own-writers horizon just after its answer. */
  x1: bigint;
  x2: bigint;
}

/** A lower bound of every horizon from now on: the snapshot's xmin (the readers' horizon is never below it). */
async function horizonFloor(): Promise<bigint> {
  const { rows } = await ctx.database.pool.query<{ x: string }>('select pg_snapshot_xmin(pg_current_snapshot())::text as x');
  return BigInt(rows[0].x);
}

/**
 * An upper bound of the horizon any reader used before now: the own-writers horizon with the strangers read
 * afresh (not the session's list), the higher of two such reads. One read alone can fall short when a
 * stranger ends between its snapshot and its lock read (it then counts as a writer); the second read's
 * snapshot no longer lists that one.
 */
async function horizonNow(): Promise<bigint> {
  const fresh = "select set_config('timing.punch_strangers', '', false); select timing.punch_visible_xmin()::text as x";
  const results = (await ctx.database.pool.query(`${fresh}; ${fresh}`)) as unknown as { rows: { x: string }[] }[];
  const [a, b] = [BigInt(results[1].rows[0].x), BigInt(results[3].rows[0].x)];
  return a > b ? a : b;
}

function idsOfCsv(body: string): number[] {
  return body
    .split('\n')
    .slice(1)
    .filter((l) => l !== '')
    .map((l) => Number(l.split(',')[0]));
}

/** What is wrong with an observation given the final rows of the scope in id order; null when it is exact. */
function violation(o: Observation, rows: { id: number; txid: bigint }[]): string | null {
  const after = rows.filter((r) => r.id > o.afterId);
  const m = o.ids.length;
  for (let i = 0; i < m; i++) if (after[i]?.id !== o.ids[i]) return `not the first ${m} punches after ${o.afterId} (at ${i}: ${o.ids[i]} vs ${after[i]?.id})`;
  const below = (x: bigint) => after.filter((r) => r.txid < x).length;
  const atStart = below(o.x1);
  const atEnd = below(o.x2);
  if (m < 1000) {
    if (m < atStart) return `${m} punches, but ${atStart} were visible when the request started`;
    if (m > atEnd) return `${m} punches, but only ${atEnd} were visible when it ended`;
    if (m > 0 && m < after.length && after[m - 1].txid === after[m].txid) return `splits the transaction of ${after[m - 1].id}, ${after[m].id}`;
    if (o.total !== m) return `X-Total-Count ${o.total} for ${m} punches`;
  } else if (o.total < atStart || o.total > atEnd) {
    return `X-Total-Count ${o.total} outside ${atStart}…${atEnd}`;
  }
  return null;
}

/** A punch service without shared answers (`readCacheBytes: 0`) on the test app's database and event cache. */
function uncached(): PunchService {
  return createPunchService({ db: ctx.database.db, pool: ctx.database.pool, readCacheBytes: 0, events: ctx.timing.eventCache, limits: ctx.timing.limits });
}

/** The cache of the primary pool of `service` (on by default: the service's own bound, 64 MiB). */
function primaryCache(service: PunchService): PunchReadCache {
  if (service.caches.primary === null) throw new Error('the read cache is off');
  return service.caches.primary;
}

/**
 * Runs uploaders and groups of pollers; each group's pollers ask for the group's `afterId` together, then the
 * group moves on to the highest id received, unless `advance(group)` is false (clients re-reading one range).
 * `read` is the read under test. Returns the observations and the final rows.
 */
async function run(
  read: (afterId: number) => Promise<{ ids: number[]; total: number }>,
  advance: (group: number) => boolean,
): Promise<{ observations: Observation[]; rows: { id: number; txid: bigint }[] }> {
  const deps = uncached();
  const caller = await authenticateKey(ctx.database.db, ctx.adminKey, ctx.keyUses);
  let stop = false;
  let seq = 0;
  const uploader = async (u: number) => {
    while (!stop) {
      const size = Math.random() < 0.4 ? 1 : 2 + Math.floor(Math.random() * 9);
      const batch = Array.from({ length: size }, () => ({
        card: String(2_000_000 + u),
        time: 1_580_000_000_000 + seq++,
        code: 31 + (seq % 90),
        type: 'Control' as const,
        modem: MODEMS[seq % MODEMS.length],
      }));
      await uploadPunches(deps, caller, batch, Date.now());
    }
  };
  const observations: Observation[] = [];
  const group = async (g: number) => {
    let afterId = 0;
    while (!stop) {
      const answers = await Promise.all(
        Array.from({ length: POLLERS_PER_GROUP }, async () => {
          const x1 = await horizonFloor();
          const { ids, total } = await read(afterId);
          const x2 = await horizonNow();
          observations.push({ afterId, ids, total, x1, x2 });
          return ids;
        }),
      );
      if (advance(g)) afterId = Math.max(afterId, ...answers.flat());
    }
  };
  const running = [...Array.from({ length: UPLOADERS }, (_, u) => uploader(u)), ...Array.from({ length: GROUPS }, (_, g) => group(g))];
  // At least RUN_MS and MIN_OBSERVATIONS (a loaded machine polls slowly), at most MAX_RUN_MS.
  const started = Date.now();
  while (Date.now() - started < MAX_RUN_MS && (Date.now() - started < RUN_MS || observations.length < MIN_OBSERVATIONS))
    await new Promise((r) => setTimeout(r, 100));
  stop = true;
  await Promise.all(running);
  await waitUntilVisible(ctx);
  const { rows } = await ctx.database.pool.query<{ id: string; txid: string }>('select id, txid::text from punches where modem = any($1::text[]) order by id', [
    MODEMS,
  ]);
  return { observations, rows: rows.map((r) => ({ id: Number(r.id), txid: BigInt(r.txid) })) };
}

it(
  'serves identical concurrent polls one answer, always one the database gave within the request',
  async () => {
    const caller = await authenticateKey(ctx.database.db, ctx.adminKey, ctx.keyUses);
    const eventId = (await createEvent(ctx.timing.events, caller, { name: 'popular', public: true, modems: MODEMS }, DEFAULT_QUOTAS.eventsPerUser)).id;
    const cached: PunchService = ctx.timing.punches;
    // The service's own bound: a tiny one would keep no answer, and only joined computations would be tested.
    const stats = primaryCache(cached).stats;
    const before = { ...stats };
    // Groups 0 and 2 follow the head like live clients; group 1 keeps re-reading from the start (its questions
    // repeat while punches arrive, so a stale cached answer would show).
    const { observations, rows } = await run(
      async (afterId) => {
        const page = await readPunches(cached, null, { eventId: String(eventId), afterId }, 'csv');
        return { ids: idsOfCsv(page.body.toString()), total: page.total };
      },
      (g) => g !== 1,
    );
    expect(rows.length).toBeGreaterThan(500);
    expect(observations.length).toBeGreaterThanOrEqual(MIN_OBSERVATIONS);
    const wrong = observations.map((o) => violation(o, rows)).filter((v) => v !== null);
    expect(wrong).toEqual([]);
    // The answers were really shared: most requests did not run the page statement themselves.
    const computed = stats.computed - before.computed;
    const shared = stats.hits - before.hits + (stats.joined - before.joined);
    expect(computed + shared).toBe(observations.length);
    expect(shared).toBeGreaterThan(observations.length / 3);
    // Every poller received every punch: the groups end at the newest id.
    const last = rows[rows.length - 1].id;
    const page = await readPunches(cached, null, { eventId: String(eventId), afterId: last }, 'csv');
    expect(idsOfCsv(page.body.toString())).toEqual([]);
  },
  testTime(60_000),
);

it(
  'negative control: a cache without the snapshot check serves answers the database no longer gives',
  async () => {
    const caller = await authenticateKey(ctx.database.db, ctx.adminKey, ctx.keyUses);
    // Same modems as the first test: its punches are left out by starting after them (baseline).
    const fresh = uncached();
    const eventId = (await createEvent(ctx.timing.events, caller, { name: 'naive', public: true, modems: MODEMS }, DEFAULT_QUOTAS.eventsPerUser)).id;
    const naive = new Map<number, Promise<{ ids: number[]; total: number }>>();
    const baseline = (await ctx.database.pool.query<{ m: string }>('select coalesce(max(id), 0)::text as m from punches')).rows[0].m;
    // The groups keep asking for the same range, so every repeated question meets the first answer.
    const { observations, rows } = await run(
      (afterId) => {
        const from = Math.max(afterId, Number(baseline));
        let answer = naive.get(from);
        if (answer === undefined) {
          answer = readPunches(fresh, null, { eventId: String(eventId), afterId: from }, 'csv').then((page) => ({
            ids: idsOfCsv(page.body.toString()),
            total: page.total,
          }));
          naive.set(from, answer);
        }
        return answer;
      },
      () => false,
    );
    const relevant = observations.map((o) => ({ ...o, afterId: Math.max(o.afterId, Number(baseline)) }));
    const wrong = relevant.map((o) => violation(o, rows)).filter((v) => v !== null);
    expect(wrong.length).toBeGreaterThan(0);
  },
  testTime(60_000),
);

it('a cached answer is served while the head stays, and never once a punch became visible', async () => {
  const caller = await authenticateKey(ctx.database.db, ctx.adminKey, ctx.keyUses);
  const modems = ['HIT-1'];
  const eventId = (await createEvent(ctx.timing.events, caller, { name: 'hits', public: true, modems }, DEFAULT_QUOTAS.eventsPerUser)).id;
  const cached: PunchService = ctx.timing.punches;
  const stats = primaryCache(cached).stats;
  const punch = (n: number) => ({ card: '8000001', time: 1_600_000_000_000 + n, code: 31 + n, type: 'Control' as const, modem: 'HIT-1' });
  const read = async () => idsOfCsv((await readPunches(cached, null, { eventId: String(eventId), afterId: 0 }, 'csv')).body.toString());
  await uploadPunches(cached, caller, [punch(1)], Date.now());
  await waitUntilVisible(ctx);
  const first = await read();
  expect(first).toHaveLength(1);
  const hitsBefore = stats.hits;
  // Nothing arrived: the identical read is the cached answer.
  expect(await read()).toEqual(first);
  expect(stats.hits).toBe(hitsBefore + 1);
  // A punch became visible: the probe sees the new head, so the cached answer is not served.
  await uploadPunches(cached, caller, [punch(2)], Date.now());
  await waitUntilVisible(ctx);
  const after = await read();
  expect(after).toHaveLength(2);
  expect(after.slice(0, 1)).toEqual(first);
  expect(stats.hits).toBe(hitsBefore + 1);
});
