/**
 * The readers' visibility horizon depends only on the service's own writers (docs/decisions.md §5, "Own
 * writers' horizon"; the timing README, "Gap-free polling"). Until now a punch was exposed once its writer's
 * xid was below the snapshot's xmin, which is cluster-wide: any transaction holding an xid anywhere on the
 * server (another database, a `LOCK TABLE`, an idle-in-transaction session) froze the visible head.
 *
 * - `punch_writer_begin()`: every transaction that inserts punches takes the shared advisory lock
 *   7,365,420,002 (transaction level) *before it has an xid*, and marks itself in the transaction-local
 *   setting `timing.punch_writer`. So while a writer's xid is running, its backend holds that lock (it is
 *   released at the end of the transaction, after the xid's own lock; on a subtransaction's rollback lock and
 *   mark go together). It refuses (55000) a transaction that already has an xid and has not taken the lock.
 * - The statement trigger `punches_writer_guard` calls it before every INSERT (and COPY) into `punches`, so no
 *   path can write punches without the protocol: a plain insert as the transaction's first write takes the
 *   lock itself; one after another write fails loudly instead of breaking the readers' guarantee.
 * - `upload_punch_batch` calls it first (its critical section assigns the xid before the insert).
 * - `punch_visible_xmin()`: the readers' horizon. The snapshot's running xids (xip) minus the known
 *   *strangers*, xids that were running while their backend held no writer lock (so they never insert a
 *   punch: the guard refuses them); its minimum, else the snapshot's xmax (or the reader's own xid). Strangers
 *   come from one read of `pg_locks` and are kept in the session setting `timing.punch_strangers` (the
 *   time read, then the strangers' full xids; a full xid is never reused, so an old list stays true). The lock
 *   table is read again only when xids of unknown standing are running and the list is older than
 *   0.1 s: reading it costs several times a tail poll. A refresh keeps the known
 *   strangers that still run, so one session's horizon never moves back. An xid is unknown (counts as a
 *   writer) when it ended between the snapshot and the read, is not in the lock table yet, or belongs to a
 *   prepared transaction (no backend). Without running xids the horizon is the snapshot's xmin (always so on
 *   a standby, whose snapshots list no xids).
 *
 * Frozen (docs/database.md): the texts are versions of src/db/functions/: `punch_writer_begin`,
 * `punches_writer_guard` and `punch_visible_xmin` version 1, `upload_punch_batch` version 4 (version 3, migration
 * 0006's, with the blank line after `begin` replaced by the call); down() restores version 3 and drops the rest.
 * `create or replace` drops the `search_path` migration 0011 gave the upload function, so up() and down() set it
 * again (and up() gives it to the new functions too).
 */
import { sql, type Kysely } from 'kysely';
import { applyFunctionVersion } from '../functions';

/** Creates the writer lock's functions and guard, the readers' horizon, and makes the upload take the lock. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await applyFunctionVersion(db, 'punch_writer_begin', 1);
  await applyFunctionVersion(db, 'punches_writer_guard', 1);
  await sql`create trigger punches_writer_guard before insert on punches for each statement execute function punches_writer_guard()`.execute(db);
  await applyFunctionVersion(db, 'punch_visible_xmin', 1);
  await applyFunctionVersion(db, 'upload_punch_batch', 4);
  await setSearchPath(db, ['upload_punch_batch', 'punch_writer_begin', 'punches_writer_guard', 'punch_visible_xmin']);
}

/** `alter function <f> set search_path = <schema>, pg_temp` for every overload of `names` in the current schema (as migration 0011 does). */
async function setSearchPath(db: Kysely<unknown>, names: string[]): Promise<void> {
  await sql
    .raw(
      `do $do$ declare f regprocedure; begin
        for f in select p.oid::regprocedure from pg_proc p
          where p.pronamespace = current_schema()::regnamespace and p.proname in (${names.map((n) => `'${n}'`).join(', ')})
        loop execute format('alter function %s set search_path = %I, pg_temp', f, current_schema()); end loop;
      end $do$`,
    )
    .execute(db);
}

/** Restores migration 0006's `upload_punch_batch` and drops the horizon, the guard and the writer functions. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await applyFunctionVersion(db, 'upload_punch_batch', 3);
  await setSearchPath(db, ['upload_punch_batch']);
  await sql`
      drop function punch_visible_xmin();
      drop trigger punches_writer_guard on punches;
      drop function punches_writer_guard(), punch_writer_begin();
    `.execute(db);
}
