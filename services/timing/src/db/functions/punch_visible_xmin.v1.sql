-- punch_visible_xmin, version 1: applied by migration 0012_own_writers_horizon. Frozen once merged (docs/database.md "Function texts").
-- classid 1, objid 3070452706, objsubid 1: the writer lock key 7365420002 as pg_locks shows it (high and low 32 bits).
-- 0.1: most seconds a session reuses the strangers it read from pg_locks.
create or replace function punch_visible_xmin() returns xid8 language plpgsql stable as $fn$
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
        if v_min is not null and (v_cache is null or not v_now - v_cache[1]::float8 between 0 and 0.1) then
          -- One read of the lock table (one call of pg_lock_status(), so one consistent picture): a running
          -- xid's own lock, and whether its backend holds the writer lock in this database.
          with l as materialized (
            select t.locktype, t.pid, t.transactionid from pg_catalog.pg_locks t
            where t.granted and t.pid is not null
              and ((t.locktype = 'transactionid' and t.mode = 'ExclusiveLock')
                or (t.locktype = 'advisory' and t.classid = 1 and t.objid = 3070452706 and t.objsubid = 1
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
