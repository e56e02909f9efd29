/**
 * The service version record (`getVersion`, schema `ServiceVersion`): name, package version, and the interface
 * version of `specs/ordering.yaml` (`info.version`).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** Absolute path of the ordering OpenAPI document. */
export const SPEC_FILE = path.join(__dirname, '../../../specs/ordering.yaml');

/** Version of this service's package. */
export const PACKAGE_VERSION = (JSON.parse(readFileSync(path.join(__dirname, '../package.json'), 'utf8')) as { version: string }).version;
