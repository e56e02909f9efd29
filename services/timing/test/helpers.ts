/**
 * Test harness of the timing service: a fresh database per test file, migrations applied, the real app
 * with response validation on, an admin key, and helpers to create users with keys.
 */
import type { Express } from 'express';
import { createDatabase, createLogger, migrateToLatest, type Database } from '@sports-timing/shared';
import { createTestDatabase, type TestDatabase } from '@sports-timing/shared/src/testing';
import { createApp } from '../src/app';
import { migrations } from '../src/db/migrations';
import type { DB } from '../src/db/schema';
import type { Role } from '../src/auth/principal';
import { createUserWithKey } from '../src/users/users.service';

/** A user created for a test, with its first key. */
export interface TestUser {
  id: number;
  userName: string;
  key: string;
}

/** A running test context. */
export interface TimingTestContext {
  app: Express;
  database: Database<DB>;
  testDb: TestDatabase;
  /** Key of user `admin` (role admin). */
  adminKey: string;
  /** Creates a user (role `user` unless given) and returns it with its first key. */
  createUser(userName: string, role?: Role): Promise<TestUser>;
  close(): Promise<void>;
}

/** Creates database, schema, admin and app. Call `close()` in afterAll. */
export async function startTiming(opts: { poolSize?: number } = {}): Promise<TimingTestContext> {
  const testDb = await createTestDatabase('timing');
  const logger = createLogger('timing-test');
  const database = createDatabase<DB>({ url: testDb.url, schema: 'timing', logger, max: opts.poolSize });
  await migrateToLatest(database, migrations);
  const app = createApp({ database, logger, validateResponses: true });
  const createUser = async (userName: string, role: Role = 'user'): Promise<TestUser> => {
    const created = await createUserWithKey(database.db, { userName, role });
    return { id: created.user.id, userName, key: created.key.key };
  };
  const admin = await createUser('admin', 'admin');
  return {
    app,
    database,
    testDb,
    adminKey: admin.key,
    createUser,
    async close() {
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
 * Checks a JSON punch array against the spec's Punch schema by hand: punch reads send PostgreSQL-built
 * text, which the validator's response check (it hooks `res.json`) does not see.
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
