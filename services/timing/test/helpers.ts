/**
 * Test harness of the timing service: a fresh database per test file, migrations applied, the real app
 * with response validation on.
 */
import type { Express } from 'express';
import { createDatabase, createLogger, migrateToLatest, type Database } from '@sports-timing/shared';
import { createTestDatabase, type TestDatabase } from '@sports-timing/shared/src/testing';
import { createApp } from '../src/app';
import { migrations } from '../src/db/migrations';
import type { DB } from '../src/db/schema';

/** A running test context. */
export interface TimingTestContext {
  app: Express;
  database: Database<DB>;
  testDb: TestDatabase;
  close(): Promise<void>;
}

/** Creates database, schema and app. Call `close()` in afterAll. */
export async function startTiming(): Promise<TimingTestContext> {
  const testDb = await createTestDatabase('timing');
  const logger = createLogger('timing-test');
  const database = createDatabase<DB>({ url: testDb.url, schema: 'timing', logger });
  await migrateToLatest(database, migrations);
  const app = createApp({ database, logger, validateResponses: true });
  return {
    app,
    database,
    testDb,
    async close() {
      await database.close();
      await testDb.drop();
    },
  };
}
