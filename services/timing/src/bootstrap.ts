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
 * Creates `admin` with TIMING_BOOTSTRAP_API_KEY (or, when unset, a development key kept in
 * `.data/keys/timing-admin-api-key` and logged once) if no user exists; loads the demo data when enabled.
 */
export async function runStartupTasks(database: Database<DB>, config: TimingConfig, logger: Logger): Promise<void> {
  const configured = config.bootstrapApiKey;
  const key = configured ?? devSecret(path.join(config.dataDir, 'keys'), DEV_ADMIN_KEY_FILE, undefined, generateApiKey);
  await ensureBootstrapAdmin(database.db, key, configured === undefined, logger);
  if (config.demoData) await loadDemoData({ db: database.db, pool: database.pool }, logger);
}
