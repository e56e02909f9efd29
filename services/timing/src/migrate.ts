/**
 * Migration-only entry point (the Kubernetes migration Job, a release step): applies the pending migrations of
 * the timing schema to `TIMING_DATABASE_URL` / `DATABASE_URL` under the shared advisory lock, prints what it
 * applied and exits 0 (1 with the reason on failure). The server applies the same migrations at start, so
 * running this first only moves the work (and the lock wait) out of the rollout.
 *   node --conditions=dist services/timing/dist/migrate.js     (compiled)   ·   tsx services/timing/src/migrate.ts
 */
import { createDatabase, createLogger, envReader, migrateToLatest } from '@sports-timing/shared';
import { migrations } from './db/migrations';
import type { DB } from './db/schema';

async function main(): Promise<void> {
  const e = envReader();
  const url = e.url('TIMING_DATABASE_URL', ['postgres', 'postgresql']) ?? e.url('DATABASE_URL', ['postgres', 'postgresql']);
  // No embedded fallback here: migrating a throw-away database would hide a missing setting in a deployment.
  if (!url) throw new Error('TIMING_DATABASE_URL or DATABASE_URL must be set');
  const logger = createLogger('timing-migrate');
  const database = createDatabase<DB>({ url, schema: 'timing', logger, applicationName: 'timing-migrate' });
  try {
    const applied = await migrateToLatest(database, migrations);
    logger.info({ applied }, applied.length ? 'migrations applied' : 'schema already up to date');
  } finally {
    await database.close();
  }
}

main().catch((err) => {
  // eslint-disable-next-line no-console
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
