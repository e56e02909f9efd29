/**
 * A third counter level: `shift` 13 (8,192 ids) between the coarse (16) and fine (10) buckets of
 * migration 0002, so that a count from the middle of a large event sums at most 8 buckets per modem at the
 * two lower levels instead of 64 at the fine one.
 *
 * The new level is derived from the fine deltas (same modem and txid, bucket >> 3), so it has exactly their
 * visibility. The table lock first waits for uploads in flight and keeps new ones out until this commits:
 * no upload can then write fine deltas without their mid-level twins.
 */
import { sql, type Kysely } from 'kysely';
import { applyFunctionVersion } from '../functions';

/** Adds level 13 to the counters and their triggers. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`lock table punches in share row exclusive mode`.execute(db);
  await sql`
      alter table punch_counts drop constraint punch_counts_shift_check;
      alter table punch_counts add constraint punch_counts_shift_check check (shift in (10, 13, 16));
      insert into punch_counts (modem, shift, bucket, n, txid)
      select modem, 13::int2, bucket >> 3, sum(n), txid from punch_counts where shift = 10 group by modem, bucket >> 3, txid;
    `.execute(db);
  await applyFunctionVersion(db, 'punch_counts_add', 2);
  await applyFunctionVersion(db, 'punch_counts_remove', 2);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`lock table punches in share row exclusive mode`.execute(db);
  await sql`delete from punch_counts where shift = 13`.execute(db);
  await applyFunctionVersion(db, 'punch_counts_add', 1);
  await applyFunctionVersion(db, 'punch_counts_remove', 1);
  await sql`
      alter table punch_counts drop constraint punch_counts_shift_check;
      alter table punch_counts add constraint punch_counts_shift_check check (shift in (10, 16));
    `.execute(db);
}
