-- punch_writer_begin, version 1: applied by migration 0012_own_writers_horizon. Frozen once merged (docs/database.md "Function texts").
-- 7365420002: the advisory lock key every transaction that inserts punches holds (shared, transaction level).
create or replace function punch_writer_begin() returns void language plpgsql as $fn$
      begin
        if coalesce(current_setting('timing.punch_writer', true), '') <> 'on' then
          if pg_current_xact_id_if_assigned() is not null then
            raise exception 'punches can only be inserted by a transaction that took the punch writer lock before its first write'
              using errcode = '55000', hint = 'Call timing.punch_writer_begin() (or insert the punches) before any other write of the transaction.';
          end if;
          perform pg_advisory_xact_lock_shared(7365420002);
          perform set_config('timing.punch_writer', 'on', true);
        end if;
      end
      $fn$;
