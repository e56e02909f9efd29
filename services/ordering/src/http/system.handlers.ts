/**
 * Handlers of the version and health operations.
 */
import { healthz, loadProcessConfig, readyz, type Handlers } from '@sports-timing/shared';
import type { OrderingDeps } from '../context';
import type { operations } from '../generated/openapi';
import { PACKAGE_VERSION } from '../version';

/** Version and health handlers; `apiVersion` is the spec's `info.version`. */
export function systemHandlers(ctx: OrderingDeps, apiVersion: string): Handlers<operations> {
  return {
    getVersion(_req, res) {
      res.json({
        name: 'ordering',
        version: PACKAGE_VERSION,
        apiVersion,
        commit: loadProcessConfig().gitCommit ?? null,
        buildTime: loadProcessConfig().buildTime ?? null,
      });
    },
    getHealthz: healthz,
    getReadyz: readyz(ctx.database.pool),
  };
}
