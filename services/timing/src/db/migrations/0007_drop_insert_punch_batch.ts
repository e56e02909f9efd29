/**
 * Drops `insert_punch_batch` (migration 0001), the first gap-free insert: since migration 0002 uploads call
 * `upload_punch_batch`, and nothing calls it any more.
 *
 * Frozen (docs/database.md): down() recreates it with migration 0001's text (`insert_punch_batch` version 1, src/db/functions/).
 */
import { sql, type Kysely } from 'kysely';
import { applyFunctionVersion } from '../functions';

/** Drops the unused `insert_punch_batch`. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop function insert_punch_batch`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await applyFunctionVersion(db, 'insert_punch_batch', 1);
}
