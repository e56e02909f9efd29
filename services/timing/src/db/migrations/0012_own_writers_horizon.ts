/**
 * The readers' visibility horizon depends only on the service's own writers (docs/decisions.md §5, "Own
 * writers' horizon"; the timing README, "Gap-free polling"). Until now a punch was exposed once its writer's
 * xid was below the snapshot's xmin, which is cluster-wide: any transaction holding an xid anywhere on the
 * server (another database, a `LOCK TABLE`, an idle-in-transaction session) froze the visible head.
 *
 * - `punch_writer_begin()`: every transaction that inserts punches takes the shared advisory lock
 *   `PUNCH_WRITER_LOCK` (transaction level) *before it has an xid*, and marks itself in the transaction-local
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
 *   {@link STRANGERS_REFRESH_S}: reading it costs several times a tail poll. A refresh keeps the known
 *   strangers that still run, so one session's horizon never moves back. An xid is unknown (counts as a
 *   writer) when it ended between the snapshot and the read, is not in the lock table yet, or belongs to a
 *   prepared transaction (no backend). Without running xids the horizon is the snapshot's xmin (always so on
 *   a standby, whose snapshots list no xids).
 *
 * Frozen (docs/database.md): `upload_punch_batch` is migration 0006's text with the blank line after
 * `begin` replaced by the call; down() restores 0006's text and drops the rest. `create or replace` drops the
 * `search_path` migration 0011 gave the upload function, so up() and down() set it again (and up() gives it to
 * the new functions too).
 */
import { sql, type Kysely } from 'kysely';

/** Advisory lock key of punch id allocation; a copy of migration 0001's on purpose (a migration imports nothing that can change). */
const PUNCH_ID_LOCK = 7_365_420_001;

/**
 * Advisory lock key held (shared, transaction level) by every transaction that inserts punches. In `pg_locks`
 * a bigint key shows as `classid` (high 32 bits) 1, `objid` (low 32 bits) 3,070,452,706, `objsubid` 1.
 */
const PUNCH_WRITER_LOCK = 7_365_420_002;
const WRITER_CLASSID = Math.floor(PUNCH_WRITER_LOCK / 2 ** 32);
const WRITER_OBJID = PUNCH_WRITER_LOCK % 2 ** 32;

/** Most seconds a session reuses the strangers it read from `pg_locks`. */
const STRANGERS_REFRESH_S = 0.1;

/** `upload_punch_batch` of migration 0006 with `first` in place of the line of blanks after `begin`. */
function uploadFunction(first: string): string {
  return `
      create or replace function upload_punch_batch(
        p_user_id integer, p_admin boolean,
        p_cards text[], p_times bigint[], p_codes integer[], p_types text[], p_modems text[], p_reception bigint[],
        out stored integer, out max_id bigint, out unknown_modems text[], out foreign_modems text[]
      ) language plpgsql as $fn$
      declare
        v_ids bigint[];
        v_seq regclass := pg_get_serial_sequence('punches', 'id')::regclass;
      begin
        ${first}
        select coalesce(array_agg(s.serial order by s.serial) filter (where m.serial is null), '{}'),
               coalesce(array_agg(s.serial order by s.serial) filter (where m.user_id <> p_user_id and not p_admin), '{}')
          into unknown_modems, foreign_modems
          from (select distinct unnest(p_modems) as serial) s
          left join modems m on m.serial = s.serial;
        if cardinality(unknown_modems) > 0 or cardinality(foreign_modems) > 0 then
          stored := 0;
          return;
        end if;
        perform pg_advisory_lock(${PUNCH_ID_LOCK});
        perform pg_current_xact_id();
        select array_agg(nextval(v_seq) order by g) into v_ids
          from generate_series(1, cardinality(p_cards)) g;
        perform pg_advisory_unlock(${PUNCH_ID_LOCK});
        with ins as (
          insert into punches (id, card, time, code, type, modem, reception_time_utc) overriding system value
          select v_ids[t.ord], t.card, t.time, t.code, t.type, t.modem, t.rt
          from unnest(p_cards, p_times, p_codes, p_types, p_modems, p_reception) with ordinality
               as t(card, time, code, type, modem, rt, ord)
          order by t.modem, t.time, t.card, t.code, t.type, t.ord
          on conflict on constraint punches_resend do nothing
          returning id
        )
        select count(*)::int, max(ins.id) into stored, max_id from ins;
      end
      $fn$;
    `;
}

/** Creates the writer lock's functions and guard, the readers' horizon, and makes the upload take the lock. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql
    .raw(
      `
      create function punch_writer_begin() returns void language plpgsql as $fn$
      begin
        if coalesce(current_setting('timing.punch_writer', true), '') <> 'on' then
          if pg_current_xact_id_if_assigned() is not null then
            raise exception 'punches can only be inserted by a transaction that took the punch writer lock before its first write'
              using errcode = '55000', hint = 'Call timing.punch_writer_begin() (or insert the punches) before any other write of the transaction.';
          end if;
          perform pg_advisory_xact_lock_shared(${PUNCH_WRITER_LOCK});
          perform set_config('timing.punch_writer', 'on', true);
        end if;
      end
      $fn$;

      create function punches_writer_guard() returns trigger language plpgsql as $fn$
      begin
        perform timing.punch_writer_begin();
        return null;
      end
      $fn$;
      create trigger punches_writer_guard before insert on punches for each statement execute function punches_writer_guard();

      create function punch_visible_xmin() returns xid8 language plpgsql stable as $fn$
      declare
        v_snap pg_snapshot := pg_current_snapshot();
        v_cache text[] := string_to_array(nullif(current_setting('timing.punch_strangers', true), ''), ' ');
        v_known xid8[] := coalesce(v_cache[2:]::xid8[], '{}');
        v_now float8;
        v_min xid8;
        v_running integer;
      begin
        select min(x.x) filter (where x.x <> all (v_known)), count(*) into v_min, v_running from pg_snapshot_xip(v_snap) x;
        if v_running = 0 then
          return pg_snapshot_xmin(v_snap);
        end if;
        v_now := extract(epoch from clock_timestamp());
        if v_min is not null and (v_cache is null or not v_now - v_cache[1]::float8 between 0 and ${STRANGERS_REFRESH_S}) then
          -- One read of the lock table (one call of pg_lock_status(), so one consistent picture): a running
          -- xid's own lock, and whether its backend holds the writer lock in this database.
          with l as materialized (
            select t.locktype, t.pid, t.transactionid from pg_catalog.pg_locks t
            where t.granted and t.pid is not null
              and ((t.locktype = 'transactionid' and t.mode = 'ExclusiveLock')
                or (t.locktype = 'advisory' and t.classid = ${WRITER_CLASSID} and t.objid = ${WRITER_OBJID} and t.objsubid = 1
                    and t.database = (select d.oid from pg_catalog.pg_database d where d.datname = pg_catalog.current_database())))
          )
          select coalesce(array_agg(s.x), '{}') into v_known from pg_snapshot_xip(v_snap) s(x)
            where s.x = any (v_known) or xid(s.x) in (select x.transactionid from l x
                                                      where x.locktype = 'transactionid' and not exists (select from l w where w.locktype = 'advisory' and w.pid = x.pid));
          perform set_config('timing.punch_strangers', array_to_string(array[v_now::text] || v_known::text[], ' '), false);
          select min(x.x) into v_min from pg_snapshot_xip(v_snap) x where x.x <> all (v_known);
        end if;
        return least(v_min, pg_snapshot_xmax(v_snap), pg_current_xact_id_if_assigned());
      end
      $fn$;
    `,
    )
    .execute(db);
  await sql.raw(uploadFunction('perform timing.punch_writer_begin();')).execute(db);
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
  await sql.raw(uploadFunction('')).execute(db);
  await setSearchPath(db, ['upload_punch_batch']);
  await sql`
      drop function punch_visible_xmin();
      drop trigger punches_writer_guard on punches;
      drop function punches_writer_guard(), punch_writer_begin();
    `.execute(db);
}
