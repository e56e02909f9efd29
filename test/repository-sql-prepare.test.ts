/**
 * The checked-in repository statements are real statements of the real schemas (docs/database.md
 * "Checked-in SQL"): every statement the placeholder calls record is prepared (`PREPARE`, which parses,
 * resolves every table, column and function and infers the parameter types, without running it) on a
 * freshly migrated database of its service. A rendering that drifted from what PostgreSQL accepts, or a
 * recorder that captured something other than the statement text, fails here.
 */
import { sql } from 'kysely';
import { createDatabase, createLogger, migrateToLatest, type Database } from '@sports-timing/shared';
import { createTestDatabase, type TestDatabase } from '@sports-timing/shared/src/testing';
import { REPOSITORIES, recordCalls } from '../scripts/sql-render';
import { migrations as orderingMigrations } from '../services/ordering/src/db/migrations';
import { migrations as timingMigrations } from '../services/timing/src/db/migrations';
import { testConnectTimeoutMs } from '@sports-timing/shared/src/test-time';

const SERVICES = { ordering: orderingMigrations, timing: timingMigrations } as const;

/** Calls whose statements `PREPARE` cannot take, and why (checked still: they must stay exactly these). */
const NOT_PREPARABLE: Record<string, string> = {
  'services/timing/src/punches/punch-upload.repository.ts notifyNewPunches': 'one simple-query text of four statements (begin; set local; notify; commit)',
};
const opened: { database: Database<unknown>; testDb: TestDatabase }[] = [];

afterAll(async () => {
  for (const { database, testDb } of opened) {
    await database.close();
    await testDb.drop();
  }
});

/** A fresh database of `service` with its migrations applied. */
async function migrated(service: keyof typeof SERVICES): Promise<Database<unknown>> {
  const testDb = await createTestDatabase(service);
  const database = createDatabase<unknown>({
    connectTimeoutMs: testConnectTimeoutMs(),
    url: testDb.url,
    schema: service,
    logger: createLogger(`${service}-sql-test`),
  });
  opened.push({ database, testDb });
  await migrateToLatest(database, SERVICES[service]);
  return database;
}

test.each(Object.keys(SERVICES) as (keyof typeof SERVICES)[])('every recorded %s repository statement prepares on the migrated schema', async (service) => {
  const database = await migrated(service);
  const failures: string[] = [];
  const skipped: string[] = [];
  let prepared = 0;
  for (const r of REPOSITORIES.filter((x) => x.file.startsWith(`services/${service}/`))) {
    for (const { fn, variant, statements } of await recordCalls(r)) {
      if (`${r.file} ${fn}` in NOT_PREPARABLE) {
        skipped.push(`${r.file} ${fn}`);
        continue;
      }
      for (const s of statements) {
        try {
          await sql.raw(`prepare checked_in_statement as ${s.sql}`).execute(database.db);
          await sql.raw('deallocate checked_in_statement').execute(database.db);
          prepared++;
        } catch (e) {
          failures.push(`${r.file} ${fn}${variant ? ` (${variant})` : ''}: ${String(e)}`);
        }
      }
    }
  }
  expect(failures).toEqual([]);
  expect(skipped).toEqual(Object.keys(NOT_PREPARABLE).filter((k) => k.startsWith(`services/${service}/`)));
  expect(prepared).toBeGreaterThan(service === 'ordering' ? 150 : 30);
});

test('negative control: a statement naming a column the schema lacks does not prepare', async () => {
  const database = await migrated('ordering');
  await expect(
    sql.raw('prepare checked_in_statement as select "no_such_column" from "localized_countries" where "culture" = $1').execute(database.db),
  ).rejects.toThrow(/no_such_column/);
});
