/**
 * Shorter critical section of the gap-free upload (punches.repository.ts): `upload_punch_batch`
 * now allocates only the transaction id and the batch's punch ids under the advisory lock, and inserts
 * after releasing it, so concurrent uploads insert (index entries, counter trigger) in parallel instead of
 * one after another.
 *
 * Why the polling guarantee still holds: it needs, for any two uploads A and B, xid(A) < xid(B) exactly
 * when every id of A is below every id of B — an order fixed at allocation, which stays serialized. Where
 * and when the rows are written afterwards does not matter: a reader shows B's rows only once every
 * transaction with a lower xid, A included, has ended.
 *
 * Rows are written in the order of the re-send key (modem, card, code, time, type), then batch position:
 * two concurrent batches that share punches then wait for each other's key in one global order and cannot
 * deadlock (they could when each wrote in its own batch order). Ids still follow the batch order, and of two
 * equal punches in one batch the first is stored, as before.
 *
 * Frozen (docs/database.md): up() applies `upload_punch_batch` version 2 (src/db/functions/), down() version 1
 * (migration 0002's); version 2 keeps the line of blanks after `begin` that existing databases have.
 */
import { sql, type Kysely } from 'kysely';
import { applyFunctionVersion } from '../functions';

/** Replaces `upload_punch_batch` (same signature and results). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await applyFunctionVersion(db, 'upload_punch_batch', 2);
}

/** Restores migration 0002's function. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await applyFunctionVersion(db, 'upload_punch_batch', 1);
}
