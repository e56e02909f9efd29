/**
 * Migration 0011 (counter maintenance): a bulk load into `timing.punches` from a session with the default
 * `search_path` (as psql, `COPY` or a restore would run it) keeps the counters exact, which failed before it
 * (negative control: the same load after migration 0010 only fails in the counter trigger); the counter table
 * carries its own autovacuum settings and the functions their `search_path`.
 */
import { Migrator } from 'kysely';
import pg from 'pg';
import { createDatabase, createLogger } from '@sports-timing/shared';
import { createTestDatabase, type TestDatabase } from '@sports-timing/shared/src/testing';
import { migrations } from '../src/db/migrations';
import type { DB } from '../src/db/schema';
import { testConnectTimeoutMs } from '@sports-timing/shared/src/test-time';

let testDb: TestDatabase;
beforeAll(async () => {
  testDb = await createTestDatabase('timing');
});
afterAll(() => testDb.drop());

/** `n` punches of modem `modem` inserted in one statement from a session without any `search_path` of ours. */
async function bulkLoad(modem: string, n: number): Promise<void> {
  const client = new pg.Client({ connectionString: testDb.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ search_path: string }>('show search_path');
    expect(rows[0].search_path).toBe('"$user", public');
    await client.query(
      `insert into timing.punches (card, time, code, type, modem, reception_time_utc)
       select (1000000 + g)::text, 1700000000000 + g, 31, 'Control', $1, 1700000000000 + g from generate_series(1, $2::int) g`,
      [modem, n],
    );
  } finally {
    await client.end();
  }
}

test('a bulk load with the default search_path keeps the counters exact (it failed before migration 0011)', async () => {
  const database = createDatabase<DB>({ connectTimeoutMs: testConnectTimeoutMs(), url: testDb.url, schema: 'timing', logger: createLogger('test') });
  const migrator = new Migrator({ db: database.db, provider: { getMigrations: () => Promise.resolve(migrations) }, migrationTableSchema: 'timing' });
  try {
    await database.pool.query('create schema if not exists timing');
    const before = await migrator.migrateTo('0010_punch_counts_top_level');
    expect(before.error).toBeUndefined();
    await expect(bulkLoad('bulk-before', 10)).rejects.toMatchObject({ code: '42P01' }); // relation "punch_counts" does not exist
    const after = await migrator.migrateToLatest();
    expect(after.error).toBeUndefined();
    expect(after.results?.map((r) => r.migrationName)).toContain('0011_counter_maintenance');

    await bulkLoad('bulk', 5_000);
    const counts = await database.pool.query<{ punches: number; counted: number }>(`
      select (select count(*)::int from punches where modem = 'bulk') as punches,
             (select coalesce(sum(n), 0)::int from punch_counts where modem = 'bulk' and shift = 10) as counted`);
    expect(counts.rows[0]).toEqual({ punches: 5_000, counted: 5_000 });

    const settings = await database.pool.query<{ reloptions: string[] }>(`select reloptions from pg_class where oid = 'timing.punch_counts'::regclass`);
    expect(settings.rows[0].reloptions).toEqual(expect.arrayContaining(['autovacuum_vacuum_scale_factor=0', 'autovacuum_vacuum_threshold=10000']));
    const paths = await database.pool.query<{ proname: string; proconfig: string[] }>(
      `select proname, proconfig from pg_proc where pronamespace = 'timing'::regnamespace and proname in ('punch_counts_add', 'upload_punch_batch_by_key') order by proname`,
    );
    for (const p of paths.rows) expect(p.proconfig).toEqual(['search_path=timing, pg_temp']);
  } finally {
    await database.close();
  }
});
