-- upload_punches, version 1: applied by migration 0015_quota_in_upload. Frozen once merged (docs/database.md "Function texts").
-- upload_punch_batch version 4 with the daily upload quota charged in the same statement: p_quota is the most
-- punches a non-admin user stores per UTC day (null: no limit); only the newly stored punches are charged, after
-- the insert and outside the id lock; beyond the quota it raises SQLSTATE TQ429 and the statement stores nothing.
-- 7365420001: the advisory lock key of punch id allocation (migration 0001).
create or replace function upload_punches(
  p_user_id integer, p_admin boolean, p_quota bigint,
  p_cards text[], p_times bigint[], p_codes integer[], p_types text[], p_modems text[], p_reception bigint[],
  out stored integer, out max_id bigint, out unknown_modems text[], out foreign_modems text[]
) language plpgsql as $fn$
      declare
        v_ids bigint[];
        v_seq regclass := pg_get_serial_sequence('punches', 'id')::regclass;
      begin
        perform timing.punch_writer_begin();
        select coalesce(array_agg(s.serial order by s.serial) filter (where m.serial is null), '{}'),
               coalesce(array_agg(s.serial order by s.serial) filter (where m.user_id <> p_user_id and not p_admin), '{}')
          into unknown_modems, foreign_modems
          from (select distinct unnest(p_modems) as serial) s
          left join modems m on m.serial = s.serial;
        if cardinality(unknown_modems) > 0 or cardinality(foreign_modems) > 0 then
          stored := 0;
          return;
        end if;
        perform pg_advisory_lock(7365420001);
        perform pg_current_xact_id();
        select array_agg(nextval(v_seq) order by g) into v_ids
          from generate_series(1, cardinality(p_cards)) g;
        perform pg_advisory_unlock(7365420001);
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
        if p_quota is not null and not p_admin and stored > 0 then
          insert into upload_quota as q (user_id, day, punches)
            values (p_user_id, (now() at time zone 'utc')::date, stored)
            on conflict (user_id, day) do update set punches = q.punches + excluded.punches
              where q.punches + excluded.punches <= p_quota;
          if not found or stored > p_quota then
            raise exception 'daily upload quota of % punches reached', p_quota using errcode = 'TQ429';
          end if;
        end if;
      end
      $fn$;
