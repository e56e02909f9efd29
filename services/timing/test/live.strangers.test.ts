/**
 * Live punches while a stranger holds a transaction id (migration 0012, docs/decisions.md §5 "Own writers'
 * horizon"): a transaction elsewhere on the cluster that holds an xid — in another database of the server,
 * through `LOCK TABLE … ACCESS EXCLUSIVE`, or idle in transaction in the timing database — no longer keeps new
 * punches from an SSE stream, a long-poll and a plain `afterId` poller. Each case waits for the punch on all
 * three and then proves that the stranger was still open all along; the old rule (`txid` below the snapshot's
 * xmin) still hides the punch at that moment, the negative control. The horizon still waits for the
 * service's own writers (else polling would skip punches), and the writer guard refuses a punch insert that
 * did not take the writer lock before its transaction's first write. Real PostgreSQL, real HTTP.
 */
import pg from 'pg';
import { createTestDatabase, testNote, type TestDatabase } from '@sports-timing/shared/src/testing';
import type { Punch } from '../../../packages/timing-client/src';
import { readVisibilityWait } from '../src/punches/punch-visibility.repository';
import { startTiming, type TimingTestContext } from './helpers';
import { client as clientOf, headId, punches, startInstance, until, type Instance } from './live-helpers';

let ctx: TimingTestContext;
let inst: Instance;
let other: TestDatabase;

beforeAll(async () => {
  ctx = await startTiming();
  inst = await startInstance(ctx);
  other = await createTestDatabase('stranger');
  // The web shop's table the second stranger locks (the ordering schema is not in the timing database).
  await ctx.database.pool.query('create schema if not exists ordering; create table if not exists ordering.orders (id int primary key)');
});
afterAll(async () => {
  await inst?.close();
  await ctx?.close();
  await other?.drop();
});

/** A session of its own on the test database, with the service's search path (the counter triggers need it). */
async function timingSession(): Promise<pg.Client> {
  const session = new pg.Client({ connectionString: ctx.testDb.url, options: '-c search_path=timing' });
  await session.connect();
  return session;
}

/** A session with an open transaction that holds an xid. */
interface Stranger {
  session: pg.Client;
  xid: string;
  pid: number;
}

/** Opens a session on `url`, begins a transaction, runs `statement` and checks that the transaction now has an xid. */
async function openStranger(url: string, statement: string): Promise<Stranger> {
  const session = new pg.Client({ connectionString: url });
  await session.connect();
  await session.query('begin');
  await session.query(statement);
  const { rows } = await session.query<{ xid: string | null; pid: number }>('select pg_current_xact_id_if_assigned()::text as xid, pg_backend_pid() as pid');
  expect(rows[0].xid).not.toBeNull();
  return { session, xid: rows[0].xid!, pid: rows[0].pid };
}

/** PostgreSQL's status of transaction `xid` (cluster-wide): 'in progress', 'committed' or 'aborted'. */
async function xactStatus(xid: string): Promise<string> {
  const { rows } = await ctx.database.pool.query<{ s: string }>('select pg_xact_status($1::xid8) as s', [xid]);
  return rows[0].s;
}

/** Whether punch `id` passes the rule the readers used before migration 0012 (the cluster-wide snapshot xmin). */
async function oldRuleShows(id: number): Promise<boolean> {
  const { rows } = await ctx.database.pool.query<{ v: boolean }>('select txid < pg_snapshot_xmin(pg_current_snapshot()) as v from punches where id = $1', [id]);
  return rows[0].v;
}

const strangers: [string, () => Promise<Stranger>][] = [
  ['a transaction holding an xid in another database of the server', () => openStranger(other.url, 'select pg_current_xact_id()')],
  ['LOCK TABLE ordering.orders IN ACCESS EXCLUSIVE MODE', () => openStranger(ctx.testDb.url, 'lock table ordering.orders in access exclusive mode')],
  ['an idle-in-transaction session in the timing database holding an xid', () => openStranger(ctx.testDb.url, 'create temporary table scratch (x int)')],
];

describe.each(strangers.map(([name, open], i) => ({ name, open, modem: `STR-${i + 1}` })))('while $name', ({ name, open, modem }) => {
  it('a new punch reaches an SSE stream, a long-poll and a plain poller before the stranger ends', async () => {
    const c = clientOf(inst, ctx.adminKey);
    await c.uploadPunches(punches(modem, 1)); // registers the modem
    const afterId = await headId(ctx, c, modem);
    const stranger = await open();
    const ac = new AbortController();
    try {
      const streamed: Punch[] = [];
      const following = c.stream({ modem: [modem] }, (p) => void streamed.push(p), { afterId, signal: ac.signal });
      const held = c.readPunches({ modem: [modem] }, { afterId, wait: 30 });
      await until(() => inst.hub.connections === 2);

      const sent = performance.now();
      const uploaded = await c.uploadPunches(punches(modem, 1));
      expect(uploaded.stored).toBe(1);

      const page = await held;
      const heldMs = performance.now() - sent;
      expect(page.punches).toHaveLength(1);
      const id = page.punches[0].id;
      expect(id).toBeGreaterThan(afterId);
      await until(() => streamed.length > 0, 60_000);
      const streamMs = performance.now() - sent;
      expect(streamed.map((p) => p.id)).toEqual([id]);
      let polled: number[] = [];
      while (polled.length === 0) polled = (await c.readPunches({ modem: [modem] }, { afterId })).punches.map((p) => p.id);
      expect(polled).toEqual([id]);
      testNote(`${name}: upload → long-poll ${heldMs.toFixed(0)} ms, → stream ${streamMs.toFixed(0)} ms, then the poller at once`);

      // The proof: the stranger's transaction is still open, and the old rule still hides the punch.
      expect(await xactStatus(stranger.xid)).toBe('in progress');
      expect(await oldRuleShows(id)).toBe(false);
      // Nor is the stranger what the exported wait names, once the reading session has seen it (a session reads
      // the lock table again at most every 0.1 s, and a stranger it has not seen yet counts as a writer meanwhile).
      let waitsOn = (await readVisibilityWait(ctx.database.pool)).waitsOn ?? '';
      for (let i = 0; i < 50 && waitsOn.includes(`pid ${stranger.pid} `); i++) {
        await new Promise((r) => setTimeout(r, 100));
        waitsOn = (await readVisibilityWait(ctx.database.pool)).waitsOn ?? '';
      }
      expect(waitsOn).not.toContain(`pid ${stranger.pid} `);
      ac.abort();
      expect(await following).toBe(id);
    } finally {
      ac.abort();
      await stranger.session.query('rollback');
      await stranger.session.end();
    }
  }, 90_000);
});

it("still waits for the service's own writer in flight, and shows its punches once it ends", async () => {
  const c = clientOf(inst, ctx.adminKey);
  const modem = 'STR-W';
  await c.uploadPunches(punches(modem, 1));
  const afterId = await headId(ctx, c, modem);
  // A writer that took the lock and its xid (as upload_punch_batch's critical section does) but has not
  // committed: a punch uploaded after it may be read only once it ended, or polling could skip its punches.
  const writer = await timingSession();
  try {
    await writer.query('begin');
    const pid = (await writer.query<{ pid: number }>('select timing.punch_writer_begin(), pg_current_xact_id(), pg_backend_pid() as pid')).rows[0].pid;
    const uploaded = await c.uploadPunches(punches(modem, 1));
    expect(uploaded.stored).toBe(1);
    const { rows } = await ctx.database.pool.query<{ id: string; v: boolean }>(
      'select id, txid < timing.punch_visible_xmin() as v from punches where modem = $1 and id > $2',
      [modem, afterId],
    );
    expect(rows.map((r) => r.v)).toEqual([false]);
    expect((await c.readPunches({ modem: [modem] }, { afterId })).punches).toEqual([]);
    // What the head waits on is named in /readyz and exported (the readings are reused for a second).
    let ready: { punchVisibility?: { waitSeconds: number; waitsOn?: string } } = {};
    while (!ready.punchVisibility?.waitsOn?.startsWith(`pid ${pid} `)) ready = (await (await fetch(`${inst.url}/readyz`)).json()) as typeof ready;
    expect(ready.punchVisibility.waitSeconds).toBeGreaterThanOrEqual(0);
    const gauge = (await (await fetch(`${inst.url}/metrics`)).text()).split('\n').find((l) => l.startsWith('punch_visibility_wait_seconds'));
    expect(gauge).toMatch(/^punch_visibility_wait_seconds\{service="timing"\} \d/);
    const inserted = await writer.query<{ id: string }>(
      `insert into timing.punches (card, time, code, type, modem, reception_time_utc) values ('7', 1, 31, 'Control', $1, 1) returning id`,
      [modem],
    );
    await writer.query('commit');
    let ids: number[] = [];
    while (ids.length < 2) ids = (await c.readPunches({ modem: [modem] }, { afterId })).punches.map((p) => p.id);
    expect(ids).toEqual([Number(rows[0].id), Number(inserted.rows[0].id)].sort((x, y) => x - y));
  } finally {
    await writer.end();
  }
});

it("evaluates the horizon in the caller's snapshot, never in a newer one", async () => {
  // A repeatable-read reader keeps its snapshot; an upload committed after it must stay hidden from it, or a
  // page could expose ids whose lower neighbours that snapshot cannot see.
  const reader = await timingSession();
  try {
    await reader.query('begin isolation level repeatable read');
    const before = (await reader.query<{ x: string }>('select pg_snapshot_xmax(pg_current_snapshot())::text as x')).rows[0].x;
    const c = clientOf(inst, ctx.adminKey);
    expect((await c.uploadPunches(punches('STR-S', 1))).stored).toBe(1);
    const { rows } = await ctx.database.pool.query<{ t: string }>(`select txid::text as t from punches where modem = 'STR-S'`);
    const after = (
      await reader.query<{ h: string; seen: number }>(
        `select timing.punch_visible_xmin()::text as h, (select count(*)::int from punches where modem = 'STR-S') as seen`,
      )
    ).rows[0];
    expect(after.seen).toBe(0);
    expect(BigInt(after.h)).toBeLessThanOrEqual(BigInt(before));
    expect(BigInt(after.h)).toBeLessThanOrEqual(BigInt(rows[0].t));
    await reader.query('rollback');
  } finally {
    await reader.end();
  }
});

describe('the writer guard on punches', () => {
  const insert = `insert into timing.punches (card, time, code, type, modem, reception_time_utc) values ('8', 2, 31, 'Control', 'STR-G', 2)`;

  it('refuses a punch insert after the transaction has an xid without the writer lock, and stores nothing', async () => {
    const session = await timingSession();
    try {
      await session.query('begin');
      await session.query('create temporary table before_punches (x int)');
      await expect(session.query(insert)).rejects.toMatchObject({ code: '55000' });
      await session.query('rollback');
      // A rolled-back savepoint gives the writer lock back: the next insert of that transaction is refused too.
      await session.query('begin');
      await session.query('savepoint s');
      await session.query(insert);
      await session.query('rollback to savepoint s');
      await expect(session.query(insert)).rejects.toMatchObject({ code: '55000' });
      await session.query('rollback');
    } finally {
      await session.end();
    }
    const { rows } = await ctx.database.pool.query<{ n: number }>(`select count(*)::int as n from punches where modem = 'STR-G'`);
    expect(rows[0].n).toBe(0);
  });

  it('takes the writer lock itself when the insert is the first write of the transaction', async () => {
    const session = await timingSession();
    try {
      await session.query('begin');
      await session.query(insert);
      const { rows } = await session.query<{ n: number }>(
        `select count(*)::int as n from pg_locks where pid = pg_backend_pid() and locktype = 'advisory' and granted
           and classid = 1 and objid = 3070452706 and objsubid = 1`,
      );
      expect(rows[0].n).toBe(1);
      await session.query('rollback');
    } finally {
      await session.end();
    }
  });
});
