/**
 * Migration-only entry point of the timing service (the Kubernetes migration Job, a release step): applies the
 * pending migrations of the `timing` schema to `TIMING_DATABASE_URL` / `DATABASE_URL` and exits. The server applies
 * the same migrations at start, so running this first only moves the work (and the lock wait) out of the rollout.
 *   node --conditions=dist services/timing/dist/migrate.js     (compiled)   ·   tsx services/timing/src/migrate.ts
 */
import { runMigrationCli } from '@sports-timing/shared';
import { migrations } from './db/migrations';

runMigrationCli({ service: 'timing', schema: 'timing', urlVariable: 'TIMING_DATABASE_URL', migrations });
