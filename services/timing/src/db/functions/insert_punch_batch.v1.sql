-- insert_punch_batch, version 1: applied by migration 0001_timing. Frozen once merged (docs/database.md "Function texts").
-- 7365420001: the advisory lock key of punch id allocation (migration 0001). Dropped by migration 0007.
create or replace function insert_punch_batch(
  p_cards text[], p_times bigint[], p_codes integer[], p_types text[], p_modems text[], p_reception bigint[],
  out stored integer, out max_id bigint
) language plpgsql as $fn$
      begin
        perform pg_advisory_lock(7365420001);
        perform pg_current_xact_id();
        with ins as (
          insert into punches (card, time, code, type, modem, reception_time_utc)
          select t.card, t.time, t.code, t.type, t.modem, t.rt
          from unnest(p_cards, p_times, p_codes, p_types, p_modems, p_reception) with ordinality
               as t(card, time, code, type, modem, rt, ord)
          order by t.ord
          on conflict on constraint punches_resend do nothing
          returning id
        )
        select count(*)::int, max(ins.id) into stored, max_id from ins;
        perform pg_advisory_unlock(7365420001);
      end
      $fn$;
