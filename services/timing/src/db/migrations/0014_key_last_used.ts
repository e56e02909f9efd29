/**
 * `api_keys.last_used_at`: when a key last authenticated a request, written at most once a minute per key
 * (users/key-uses.ts; docs/decisions.md §5 "Key last used"). Null for a key never used since this migration.
 * A nullable column without a default: adding it rewrites nothing, and no index covers it, so its updates
 * stay heap-only (HOT) and leave the `key_hash` lookup's index alone.
 *
 * Frozen (docs/database.md): down() drops the column.
 */
import { sql, type Kysely } from 'kysely';

/** Adds `api_keys.last_used_at`. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table api_keys add column last_used_at timestamptz null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table api_keys drop column last_used_at`.execute(db);
}
