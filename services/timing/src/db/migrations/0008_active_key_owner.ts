/**
 * One definition of an active API key for both ways a key is checked: `active_key_owner(key_hash)` returns
 * the key's id and its user (id, name, role) when the key exists and is not revoked, else no row.
 * `authenticateKey` (users.repository.ts `findActiveKeyOwner`) selects from it, and
 * `upload_punch_batch_by_key` (migration 0004: the fast lane's one-call upload) now calls it instead of its
 * own copy of the lookup, so a change to the key rules is made once, in a migration replacing this function.
 *
 * Frozen (docs/database.md): up() applies `active_key_owner` version 1 and `upload_punch_batch_by_key` version 2
 * (src/db/functions/); down() restores version 1 of the latter (migration 0004's) and drops `active_key_owner`.
 */
import { sql, type Kysely } from 'kysely';
import { applyFunctionVersion } from '../functions';

/** Creates `active_key_owner` and makes `upload_punch_batch_by_key` use it. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await applyFunctionVersion(db, 'active_key_owner', 1);
  await applyFunctionVersion(db, 'upload_punch_batch_by_key', 2);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await applyFunctionVersion(db, 'upload_punch_batch_by_key', 1);
  await sql`drop function active_key_owner`.execute(db);
}
