/**
 * Handlers of the versions and health operations (`getVersions`, `getHealthz`, `getReadyz`).
 */
import type { Handlers } from '@sports-timing/shared';
import type { operations } from '../generated/openapi';

/** Version and health handlers bound to a version record. */
export function versionHandlers(record: { internalApiVersion: string; publicApiVersion: string }): Handlers<operations> {
  return {
    getVersions(_req, res) {
      res.json(record);
    },
  };
}
