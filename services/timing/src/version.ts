/**
 * The version record (`getVersions`): `publicApiVersion` is the interface version of
 * `specs/timing.yaml` (`info.version`), `internalApiVersion` the service's package version.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadSpec } from '@sports-timing/shared';

/** Absolute path of the timing OpenAPI document. */
export const SPEC_FILE = path.join(__dirname, '../../../specs/timing.yaml');

const pkg = JSON.parse(readFileSync(path.join(__dirname, '../package.json'), 'utf8')) as { version: string };

/** `{ internalApiVersion, publicApiVersion }` as served by `GET /api/rest/v1/public/versions`. */
export function versionRecord(spec = loadSpec(SPEC_FILE)): { internalApiVersion: string; publicApiVersion: string } {
  const info = spec.info as { version: string };
  return { internalApiVersion: pkg.version, publicApiVersion: info.version };
}
