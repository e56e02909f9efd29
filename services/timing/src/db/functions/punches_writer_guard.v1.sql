-- punches_writer_guard, version 1: applied by migration 0012_own_writers_horizon. Frozen once merged (docs/database.md "Function texts").
create or replace function punches_writer_guard() returns trigger language plpgsql as $fn$
      begin
        perform timing.punch_writer_begin();
        return null;
      end
      $fn$;
