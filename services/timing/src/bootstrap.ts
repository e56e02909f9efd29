/**
 * Start-up tasks after migrations (docs/decisions.md §3): the bootstrap admin on a fresh database, then the demo data.
 */
import path from 'node:path';
import type { Logger } from 'pino';
import { devSecret, type Database } from '@sports-timing/shared';
import type { DB } from './db/schema';
import type { TimingConfig } from './config';
import { generateApiKey } from './auth/keys';
import { loadDemoData } from './demo/load';
import { ensureBootstrapAdmin } from './users/users.service';

/** Name of the development admin key file under `<dataDir>/keys/`. */
export const DEV_ADMIN_KEY_FILE = 'timing-admin-api-key';

/**
 * Creates `admin` with TIMING_BOOTSTRAP_API_KEY (or, when unset in development and test, a development key kept in
 * `<DATA_DIR>/keys/timing-admin-api-key` and logged once) if no user exists; loads the demo data when enabled.
 * With `APP_ENV=staging` or `production` no key is generated: without TIMING_BOOTSTRAP_API_KEY no admin is
 * created, and one warning line names the variable (README "What production changes").
 */
export async function runStartupTasks(database: Database<DB>, config: TimingConfig, logger: Logger): Promise<void> {
  const configured = config.bootstrapApiKey;
  if (configured !== undefined) await ensureBootstrapAdmin(database.db, { key: configured }, logger);
  else if (config.deployment) await ensureBootstrapAdmin(database.db, null, logger);
  else {
    const dir = path.join(config.dataDir, 'keys');
    const key = devSecret(dir, DEV_ADMIN_KEY_FILE, undefined, generateApiKey);
    await ensureBootstrapAdmin(database.db, { key, generatedIn: path.join(dir, DEV_ADMIN_KEY_FILE) }, logger);
  }
  if (config.demoData) await loadDemoData({ db: database.db, pool: database.pool }, logger);
}
