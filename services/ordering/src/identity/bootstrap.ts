/**
 * Bootstrap of the first administrator (docs/decisions.md §3): on a fresh database, user `admin` (roles [admin],
 * group internal) with `BOOTSTRAP_ADMIN_PASSWORD`; without it, outside production, a generated password
 * kept in `<dataDir>/keys/ordering-admin-password` and printed once to the log when the user is created.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Logger } from 'pino';
import { devSecret, type Database } from '@sports-timing/shared';
import type { OrderingConfig } from '../config';
import type { DB } from '../db/schema';
import { anyUserExists } from './users.repository';
import { createBootstrapAdmin } from './users.service';

/** Creates the bootstrap admin when no user exists; returns whether it did. */
export async function bootstrapAdmin(opts: { database: Database<DB>; config: OrderingConfig; logger: Logger }): Promise<boolean> {
  const { database, config, logger } = opts;
  if (await anyUserExists(database.db)) return false;
  let password = config.bootstrapAdminPassword;
  let generated = false;
  if (!password) {
    if (config.environment === 'production') {
      logger.warn('no users and no BOOTSTRAP_ADMIN_PASSWORD: no administrator was created');
      return false;
    }
    password = devSecret(path.join(config.dataDir, 'keys'), 'ordering-admin-password', undefined, () => randomBytes(18).toString('base64url'));
    generated = true;
  }
  const created = await createBootstrapAdmin(database.db, password);
  if (created && generated) {
    // Development only, on purpose: the one time the generated password is shown.
    const file = path.join(config.dataDir, 'keys', 'ordering-admin-password');
    logger.info(
      { userName: 'admin', developmentPassword: password, file },
      `created bootstrap user admin with a generated development password (shown once; stored in ${file})`,
    );
  } else if (created) {
    logger.info({ userName: 'admin' }, 'created bootstrap user admin from BOOTSTRAP_ADMIN_PASSWORD');
  }
  return created;
}
