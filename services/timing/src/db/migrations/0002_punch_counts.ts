/**
 * Punch counters for a cheap, exact `X-Total-Count` (docs/decisions.md §7), and the one-call upload function.
 *
 * `punch_counts` holds signed deltas per (modem, id bucket, txid) at two bucket sizes (`shift` 16: ids
 * `bucket << 16 …`, 65,536 ids; `shift` 10: 1,024 ids). Statement-level triggers with transition tables add
 * one row per (modem, bucket, txid) and level for every INSERT/DELETE/UPDATE statement on `punches`: +n for
 * new rows, −n for removed ones, each carrying the *punch rows'* `txid`. So, for any snapshot, the sum of
 * the deltas that are MVCC-visible and have `txid < pg_snapshot_xmin(pg_current_snapshot())` equals the
 * number of punches visible under the same rule the pages use (punches.repository.ts): a delta commits or
 * rolls back with the rows it counts and is filtered by the same txid. No unique key, no upsert: uploads
 * only append, so concurrent uploads never wait for each other's counter rows (and the trigger adds no lock
 * to the advisory-lock section beyond one small insert).
 *
 * `compact_punch_counts()` folds the deltas of ended transactions (txid below the statement's xmin) into
 * one row per (modem, shift, bucket) with txid 0, deleting them in the same statement: every later
 * snapshot has an xmin at least as high, so it counts those rows either way; snapshots from before the
 * compaction's commit still see the old deltas. Concurrent compactions are safe: a delta is deleted (and
 * re-added in sum) by exactly one of them.
 */
import { sql, type Kysely } from 'kysely';
import { applyFunctionVersion } from '../functions';

/** Creates the counters (backfilled), their triggers, the compaction and `upload_punch_batch`. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
      create table punch_counts (
        modem text not null,
        shift smallint not null check (shift in (10, 16)),
        bucket bigint not null,
        n bigint not null,
        txid xid8 not null
      );
      create index punch_counts_modem on punch_counts (modem, shift, bucket) include (n, txid);
    `.execute(db);
  await applyFunctionVersion(db, 'punch_counts_add', 1);
  await applyFunctionVersion(db, 'punch_counts_remove', 1);
  await sql`
      create trigger punch_counts_insert after insert on punches
        referencing new table as new_rows for each statement execute function punch_counts_add();
      create trigger punch_counts_delete after delete on punches
        referencing old table as old_rows for each statement execute function punch_counts_remove();
      create trigger punch_counts_update_old after update on punches
        referencing old table as old_rows for each statement execute function punch_counts_remove();
      create trigger punch_counts_update_new after update on punches
        referencing new table as new_rows for each statement execute function punch_counts_add();

      -- Deltas not folded yet (txid <> 0) are few between compactions: a small partial index finds them.
      create index punch_counts_pending on punch_counts (modem, shift, bucket) where txid <> '0'::xid8;
    `.execute(db);
  await applyFunctionVersion(db, 'compact_punch_counts', 1);

  // Backfill after the triggers exist: creating them waited for every running insert into punches, so
  // this statement's snapshot holds every row not counted by a trigger. Rows of ended transactions
  // (txid below this statement's xmin) fold into txid 0, others keep their txid (see the module comment).
  await sql`
      with xm as (select pg_snapshot_xmin(pg_current_snapshot()) as x),
      p as (select modem, id, case when txid < xm.x then '0'::xid8 else txid end as t from punches, xm)
      insert into punch_counts (modem, shift, bucket, n, txid)
      select modem, 16::int2, id >> 16, count(*), t from p group by modem, id >> 16, t
      union all
      select modem, 10::int2, id >> 10, count(*), t from p group by modem, id >> 10, t
    `.execute(db);

  // One call per upload (docs/decisions.md §7): ownership check of the batch's distinct modems before the critical
  // section (a read takes no xid), then the gap-free insert of insert_punch_batch. Nothing is written
  // when a modem is unknown (the caller registers it in its own statement and calls again) or belongs to
  // another user (p_admin false): registering here would take this transaction's xid outside the lock.
  await applyFunctionVersion(db, 'upload_punch_batch', 1);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
      drop function upload_punch_batch;
      drop trigger punch_counts_insert on punches;
      drop trigger punch_counts_delete on punches;
      drop trigger punch_counts_update_old on punches;
      drop trigger punch_counts_update_new on punches;
      drop function punch_counts_add, punch_counts_remove, compact_punch_counts;
      drop table punch_counts;
    `.execute(db);
}
