/**
 * Re-send key in time order: the unique constraint `punches_resend` becomes
 * (modem, time, card, code, type) instead of (modem, card, code, time, type). Same columns, so the same
 * punches are duplicates; only where new entries land in the index changes. A modem sends its punches in
 * time order, so new keys now go to the end of the modem's range (a few hot leaf pages per modem) instead
 * of next to each card's earlier punches (a leaf page per card, spread over the whole index, which no longer
 * fits in PostgreSQL's buffers once the table holds millions of punches). `upload_punch_batch` writes its
 * rows in the new key order, so concurrent batches still take the keys in one global order (no deadlock,
 * migration 0005) and a batch's index insertions go left to right.
 *
 * Frozen (docs/database.md): the function is migration 0005's text with only the `order by` of the insert
 * changed, written out in full here and in down() (which restores 0005's), the line of blanks after `begin`
 * included.
 */
import { sql, type Kysely } from 'kysely';

/** Advisory lock key of punch id allocation; a copy of migration 0001's on purpose (a migration imports nothing that can change). */
const PUNCH_ID_LOCK = 7_365_420_001;

/** Rebuilds `punches_resend` in the new column order and writes batches in that order. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table punches drop constraint punches_resend, add constraint punches_resend unique (modem, time, card, code, type)`.execute(db);
  await sql`
      create or replace function upload_punch_batch(
        p_user_id integer, p_admin boolean,
        p_cards text[], p_times bigint[], p_codes integer[], p_types text[], p_modems text[], p_reception bigint[],
        out stored integer, out max_id bigint, out unknown_modems text[], out foreign_modems text[]
      ) language plpgsql as $fn$
      declare
        v_ids bigint[];
        v_seq regclass := pg_get_serial_sequence('punches', 'id')::regclass;
      begin
        
        select coalesce(array_agg(s.serial order by s.serial) filter (where m.serial is null), '{}'),
               coalesce(array_agg(s.serial order by s.serial) filter (where m.user_id <> p_user_id and not p_admin), '{}')
          into unknown_modems, foreign_modems
          from (select distinct unnest(p_modems) as serial) s
          left join modems m on m.serial = s.serial;
        if cardinality(unknown_modems) > 0 or cardinality(foreign_modems) > 0 then
          stored := 0;
          return;
        end if;
        perform pg_advisory_lock(${sql.lit(PUNCH_ID_LOCK)});
        perform pg_current_xact_id();
        select array_agg(nextval(v_seq) order by g) into v_ids
          from generate_series(1, cardinality(p_cards)) g;
        perform pg_advisory_unlock(${sql.lit(PUNCH_ID_LOCK)});
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
    `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table punches drop constraint punches_resend, add constraint punches_resend unique (modem, card, code, time, type)`.execute(db);
  await sql`
      create or replace function upload_punch_batch(
        p_user_id integer, p_admin boolean,
        p_cards text[], p_times bigint[], p_codes integer[], p_types text[], p_modems text[], p_reception bigint[],
        out stored integer, out max_id bigint, out unknown_modems text[], out foreign_modems text[]
      ) language plpgsql as $fn$
      declare
        v_ids bigint[];
        v_seq regclass := pg_get_serial_sequence('punches', 'id')::regclass;
      begin
        
        select coalesce(array_agg(s.serial order by s.serial) filter (where m.serial is null), '{}'),
               coalesce(array_agg(s.serial order by s.serial) filter (where m.user_id <> p_user_id and not p_admin), '{}')
          into unknown_modems, foreign_modems
          from (select distinct unnest(p_modems) as serial) s
          left join modems m on m.serial = s.serial;
        if cardinality(unknown_modems) > 0 or cardinality(foreign_modems) > 0 then
          stored := 0;
          return;
        end if;
        perform pg_advisory_lock(${sql.lit(PUNCH_ID_LOCK)});
        perform pg_current_xact_id();
        select array_agg(nextval(v_seq) order by g) into v_ids
          from generate_series(1, cardinality(p_cards)) g;
        perform pg_advisory_unlock(${sql.lit(PUNCH_ID_LOCK)});
        with ins as (
          insert into punches (id, card, time, code, type, modem, reception_time_utc) overriding system value
          select v_ids[t.ord], t.card, t.time, t.code, t.type, t.modem, t.rt
          from unnest(p_cards, p_times, p_codes, p_types, p_modems, p_reception) with ordinality
               as t(card, time, code, type, modem, rt, ord)
          order by t.modem, t.card, t.code, t.time, t.type, t.ord
          on conflict on constraint punches_resend do nothing
          returning id
        )
        select count(*)::int, max(ins.id) into stored, max_id from ins;
      end
      $fn$;
    `.execute(db);
}
