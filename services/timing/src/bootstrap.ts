/**
 * Start-up tasks after migrations (docs/decisions.md §3): the bootstrap admin on a fresh database, then the demo data.
 */
import path from 'node:path';
import type { Logger } from 'pino';
import { devSecret } from '@sports-timing/shared';
import type { TimingComposition } from './composition';
import type { TimingConfig } from './config';
import { generateApiKey } from './auth/keys';
import { loadDemoData } from './demo/load';
import { ensureBootstrapAdmin } from './users/users.service';

/** Name of the development admin key file under `<dataDir>/keys/`. @internal */
export const DEV_ADMIN_KEY_FILE = 'timing-admin-api-key';

/**
 * Creates `admin` with TIMING_BOOTSTRAP_API_KEY (or, when unset in development and test, a development key kept in
 * `<DATA_DIR>/keys/timing-admin-api-key` and logged once) if no user exists; loads the demo data when enabled.
 * With `APP_ENV=staging` or `production` no key is generated: without TIMING_BOOTSTRAP_API_KEY no admin is
 * created, and one warning line names the variable (README "What production changes"). The demo data goes
 * through the app's own punch service and event writes (`timing`, composition.ts).
 */
export async function runStartupTasks(timing: Pick<TimingComposition, 'database' | 'punches' | 'events'>, config: TimingConfig, logger: Logger): Promise<void> {
  const { database } = timing;
  const configured = config.bootstrapApiKey;
  if (configured !== undefined) await ensureBootstrapAdmin(database.db, { key: configured }, logger);
  else if (config.deployment) await ensureBootstrapAdmin(database.db, null, logger);
  else {
    const dir = path.join(config.dataDir, 'keys');
    const key = devSecret(dir, DEV_ADMIN_KEY_FILE, undefined, generateApiKey);
    await ensureBootstrapAdmin(database.db, { key, generatedIn: path.join(dir, DEV_ADMIN_KEY_FILE) }, logger);
  }
  if (config.demoData) await loadDemoData(timing, logger);
}
