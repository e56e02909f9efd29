/**
 * Migrations are applied at start and must be safe when several instances start together:
 * the advisory lock serializes them, so exactly one applies each migration and none fails.
 */
import { sql, type Migration } from 'kysely';
import { createDatabase, createLogger, migrateToLatest } from '../src';
import { createTestDatabase } from '../src/testing';
import { testConnectTimeoutMs } from '@sports-timing/shared/src/test-time';

const migrations: Record<string, Migration> = {
  '0001_first': {
    async up(db) {
      await sql`create table widgets (id integer primary key, name text not null)`.execute(db);
      await sql`select pg_sleep(0.2)`.execute(db); // widen the window in which a second instance could interfere
    },
  },
  '0002_second': {
    async up(db) {
      await sql`alter table widgets add column size integer`.execute(db);
    },
  },
};

test('eight instances migrating one fresh database at once apply every migration exactly once', async () => {
  const testDb = await createTestDatabase('migrate');
  const instances = Array.from({ length: 8 }, () =>
    createDatabase({ connectTimeoutMs: testConnectTimeoutMs(), url: testDb.url, schema: 'widgets_svc', logger: createLogger('test') }),
  );
  try {
    const results = await Promise.all(instances.map((d) => migrateToLatest(d, migrations)));
    expect(results.flat().sort()).toEqual(['0001_first', '0002_second']);
    const { rows } = await instances[0].pool.query(`select name from widgets_svc.kysely_migration order by name`);
    expect(rows.map((r) => r.name)).toEqual(['0001_first', '0002_second']);
    // A later start finds nothing to do.
    expect(await migrateToLatest(instances[0], migrations)).toEqual([]);
  } finally {
    await Promise.all(instances.map((d) => d.close()));
    await testDb.drop();
  }
});
