/**
 * `upload_punch_batch_by_key`: the key lookup of `authenticateKey` and `upload_punch_batch`
 * (migration 0002) in one call, so that a modem's single-punch upload is one database round trip. It
 * returns the key's principal (all null for an unknown or revoked key, and then writes nothing) next to
 * the upload's result; unknown and foreign modems are reported, not written, exactly as by
 * `upload_punch_batch`, which it calls.
 */
import { sql, type Kysely } from 'kysely';
import { applyFunctionVersion } from '../functions';

/** Creates `upload_punch_batch_by_key`. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await applyFunctionVersion(db, 'upload_punch_batch_by_key', 1);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop function upload_punch_batch_by_key`.execute(db);
}
