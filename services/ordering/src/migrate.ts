/**
 * Migration-only entry point of the ordering service (the Kubernetes migration Job, a release step): applies the
 * pending migrations of the `ordering` schema to `ORDERING_DATABASE_URL` / `DATABASE_URL` and exits. The server applies
 * the same migrations at start, so running this first only moves the work (and the lock wait) out of the rollout.
 *   node --conditions=dist services/ordering/dist/migrate.js     (compiled)   ·   tsx services/ordering/src/migrate.ts
 */
import { runMigrationCli } from '@sports-timing/shared';
import { migrations } from './db/migrations';

runMigrationCli({ service: 'ordering', schema: 'ordering', urlVariable: 'ORDERING_DATABASE_URL', migrations });
