/**
 * A fourth counter level: `shift` 19 (524,288 ids) above the coarse level 16 of migration 0002. Without it a
 * count from the middle of a large event summed one coarse row per modem for every 65,536 ids of the rest of
 * the event's id span (≈100 rows per modem for the middle of a 10 M-punch event); with it, at most 8 rows per
 * modem at level 16 plus one per 524,288 ids (the timing README, "Exact totals without `count(*)`";
 * SCALING.md, "Ten years of punches").
 *
 * The new level is derived from the coarse deltas (same modem and txid, bucket >> 3), so it has exactly their
 * visibility. The table lock first waits for uploads in flight and keeps new ones out until this commits:
 * no upload can then write coarse deltas without their top-level twins.
 */
import { sql, type Kysely } from 'kysely';
import { applyFunctionVersion } from '../functions';

/** Adds level 19 to the counters and their triggers. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`lock table punches in share row exclusive mode`.execute(db);
  await sql`
      alter table punch_counts drop constraint punch_counts_shift_check;
      alter table punch_counts add constraint punch_counts_shift_check check (shift in (10, 13, 16, 19));
      insert into punch_counts (modem, shift, bucket, n, txid)
      select modem, 19::int2, bucket >> 3, sum(n), txid from punch_counts where shift = 16 group by modem, bucket >> 3, txid;
    `.execute(db);
  await applyFunctionVersion(db, 'punch_counts_add', 3);
  await applyFunctionVersion(db, 'punch_counts_remove', 3);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`lock table punches in share row exclusive mode`.execute(db);
  await sql`delete from punch_counts where shift = 19`.execute(db);
  await applyFunctionVersion(db, 'punch_counts_add', 2);
  await applyFunctionVersion(db, 'punch_counts_remove', 2);
  await sql`
      alter table punch_counts drop constraint punch_counts_shift_check;
      alter table punch_counts add constraint punch_counts_shift_check check (shift in (10, 13, 16));
    `.execute(db);
}
