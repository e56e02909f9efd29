/**
 * Migrations of the `timing` schema, applied in name order at start (see migrateToLatest).
 */
import type { Migration } from 'kysely';

/** All migrations by name. */
export const migrations: Record<string, Migration> = {};
