/**
 * Re-send key in time order: the unique constraint `punches_resend` becomes
 * (modem, time, card, code, type) instead of (modem, card, code, time, type). Same columns, so the same
 * punches are duplicates; only where new entries land in the index changes. A modem sends its punches in
 * time order, so new keys now go to the end of the modem's range (a few hot leaf pages per modem) instead
 * of next to each card's earlier punches (a leaf page per card, spread over the whole index, which no longer
 * fits in PostgreSQL's buffers once the table holds millions of punches). `upload_punch_batch` writes its
 * rows in the new key order, so concurrent batches still take the keys in one global order (no deadlock,
 * migration 0005) and a batch's index insertions go left to right.
 *
 * Frozen (docs/database.md): up() applies `upload_punch_batch` version 3 (src/db/functions/), version 2 with
 * only the `order by` of the insert changed; down() restores version 2.
 */
import { sql, type Kysely } from 'kysely';
import { applyFunctionVersion } from '../functions';

/** Rebuilds `punches_resend` in the new column order and writes batches in that order. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table punches drop constraint punches_resend, add constraint punches_resend unique (modem, time, card, code, type)`.execute(db);
  await applyFunctionVersion(db, 'upload_punch_batch', 3);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table punches drop constraint punches_resend, add constraint punches_resend unique (modem, card, code, time, type)`.execute(db);
  await applyFunctionVersion(db, 'upload_punch_batch', 2);
}
