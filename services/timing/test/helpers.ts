/**
 * Test harness of the timing service: a fresh database per test file, migrations applied, the real app
 * with response validation on (and the fast lane unless {@link useFastLane} turned it off), an admin key, and helpers to create users with keys.
 */
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import request from 'supertest';
import { createDatabase, createLogger, migrateToLatest, type Database } from '@sports-timing/shared';
import { createTestDatabase, type TestDatabase } from '@sports-timing/shared/src/testing';
import { createApp } from '../src/app';
import { composeTiming, type TimingComposition } from '../src/composition';
import type { TimingQuotas } from '../src/config';
import { migrations } from '../src/db/migrations';
import type { DB } from '../src/db/schema';
import type { Role } from '../src/auth/principal';
import { createUserWithKey } from '../src/users/users.service';
import type { KeyUses } from '../src/users/key-uses';
import { PUNCH_SESSION_SETTINGS } from '../src/punches/punches.repository';
import { testConnectTimeoutMs, testTime } from '@sports-timing/shared/src/test-time';

/** A user created for a test, with its first key. */
export interface TestUser {
  id: number;
  userName: string;
  key: string;
}

/** A running test context. */
export interface TimingTestContext {
  app: Express;
  /** The app's composition (composition.ts): its punch service, event writes, caches and hub. */
  timing: TimingComposition;
  database: Database<DB>;
  testDb: TestDatabase;
  /** The app's record of key uses (`lastUsedAt`; the composition's); `settled()` waits for the writes it started. */
  keyUses: KeyUses;
  /** Key of user `admin` (role admin); empty when started with `withAdmin: false`. */
  adminKey: string;
  /** Creates a user (role `user` unless given) and returns it with its first key. */
  createUser(userName: string, role?: Role): Promise<TestUser>;
  close(): Promise<void>;
}

/**
 * Whether {@link startTiming} builds the app with the fast lane (the app's default). A test file that sets it
 * to false and then loads other test files (`require`, after the call) runs their cases through the Express
 * pipeline alone, where the validator checks the answers too (punches.pipeline.test.ts).
 */
let fastLane = true;

/** Sets the fast-lane switch of the apps {@link startTiming} builds from now on in this test file. */
export function useFastLane(on: boolean): void {
  fastLane = on;
}

/** Creates database, schema, admin (unless `withAdmin: false`) and app (with `quotas` when given). Call `close()` in afterAll. */
export async function startTiming(opts: { poolSize?: number; withAdmin?: boolean; quotas?: TimingQuotas } = {}): Promise<TimingTestContext> {
  const testDb = await createTestDatabase('timing');
  const logger = createLogger('timing-test');
  const database = createDatabase<DB>({
    url: testDb.url,
    schema: 'timing',
    logger,
    max: opts.poolSize,
    settings: PUNCH_SESSION_SETTINGS,
    connectTimeoutMs: testConnectTimeoutMs(),
  });
  await migrateToLatest(database, migrations);
  const timing = composeTiming({ database, logger, validateResponses: true, fastLane, quotas: opts.quotas });
  const keyUses = timing.keyUses;
  const app = createApp(timing);
  const createUser = async (userName: string, role: Role = 'user'): Promise<TestUser> => {
    const created = await createUserWithKey(database.db, { userName, role });
    return { id: created.user.id, userName, key: created.key.key };
  };
  const adminKey = opts.withAdmin === false ? '' : (await createUser('admin', 'admin')).key;
  return {
    app,
    timing,
    database,
    testDb,
    keyUses,
    adminKey,
    createUser,
    async close() {
      await keyUses.settled();
      await database.close();
      await testDb.drop();
    },
  };
}

/** Header row of the punch CSV format. */
export const CSV_HEADER = 'id,card,time,code,type,modem,receptionTimeUtc';

/** A punch as read back (JSON). */
export interface ReadPunch {
  id: number;
  card: string;
  time: number;
  code: number;
  type: string;
  modem: string;
  receptionTimeUtc: number;
}

/**
 * Checks a JSON punch array against the spec's Punch schema by hand: the fast lane sends PostgreSQL-built
 * text, which the validator's response check (it hooks `res.json`) does not see; the pipeline's answers it
 * checks as well (`sendText` in tests, punches.pipeline.test.ts).
 */
export function expectPunchArray(body: unknown): asserts body is ReadPunch[] {
  expect(Array.isArray(body)).toBe(true);
  for (const p of body as Record<string, unknown>[]) {
    expect(Object.keys(p).sort()).toEqual(['card', 'code', 'id', 'modem', 'receptionTimeUtc', 'time', 'type']);
    expect(Number.isInteger(p.id) && (p.id as number) > 0).toBe(true);
    expect(typeof p.card).toBe('string');
    expect(Number.isInteger(p.time)).toBe(true);
    expect(Number.isInteger(p.code)).toBe(true);
    expect(['Unknown', 'Control', 'Start', 'Finish', 'Check', 'Clear']).toContain(p.type);
    expect(typeof p.modem).toBe('string');
    expect(Number.isInteger(p.receptionTimeUtc)).toBe(true);
  }
}

/** Parses the CSV of a punch read exactly as MeOS does: skip the header, split on commas, parseInt id, card, time, code, then type. */
export function parseCsvLikeMeos(text: string): { id: number; card: number; time: number; code: number; type: string; modem: string }[] {
  const lines = text.split('\n');
  const out: { id: number; card: number; time: number; code: number; type: string; modem: string }[] = [];
  for (const line of lines.slice(1)) {
    if (line.trim() === '') continue;
    const f = line.split(',');
    out.push({ id: parseInt(f[0], 10), card: parseInt(f[1], 10), time: parseInt(f[2], 10), code: parseInt(f[3], 10), type: f[4], modem: f[5] });
  }
  return out;
}

/** Local wall-clock ms of 2020-02-01 at the given hour/minute (the "as if UTC" convention of the API). */
export function localMs(hour: number, minute = 0, second = 0): number {
  return Date.UTC(2020, 1, 1, hour, minute, second);
}

/**
 * Waits until every stored punch is visible to readers. Punches become readable once no older upload of
 * the service is in flight (the own-writers horizon, punch-visibility.repository.ts); test files share one
 * cluster and run in parallel, but only transactions of this test file's database that took the punch
 * writer lock can delay visibility. Tests that read right after writing wait here.
 */
export async function waitUntilVisible(ctx: TimingTestContext, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + testTime(timeoutMs);
  for (;;) {
    const { rows } = await ctx.database.pool.query<{ n: number }>('select count(*)::int as n from punches where txid >= (select timing.punch_visible_xmin())');
    if (rows[0].n === 0) return;
    if (Date.now() > deadline) throw new Error(`${rows[0].n} punches still invisible after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Uploads punches as JSON with `key`; expects 200, waits until they are readable, returns the counts. */
export async function upload(
  ctx: TimingTestContext,
  key: string,
  punches: object[],
): Promise<{ received: number; stored: number; duplicates: number; rejected: { index: number; reason: string }[] }> {
  const res = await request(ctx.app).post('/api/rest/v1/punches').set('apikey', key).send(punches);
  if (res.status !== 200) throw new Error(`upload failed: ${res.status} ${res.text}`);
  await waitUntilVisible(ctx);
  return res.body as { received: number; stored: number; duplicates: number; rejected: { index: number; reason: string }[] };
}

/** Number of rows in `punches`. */
export async function punchCount(ctx: TimingTestContext): Promise<number> {
  const { rows } = await ctx.database.pool.query<{ n: number }>('select count(*)::int as n from punches');
  return rows[0].n;
}

/**
 * POSTs raw bytes (superagent would JSON-encode a Buffer sent as application/json) through a
 * short-lived listener; returns status, headers and the parsed JSON body.
 */
export async function postRaw(
  app: Express,
  path: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers, body });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}
