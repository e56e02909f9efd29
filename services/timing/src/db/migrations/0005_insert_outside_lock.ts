/**
 * Shorter critical section of the gap-free upload (punches.repository.ts): `upload_punch_batch`
 * now allocates only the transaction id and the batch's punch ids under the advisory lock, and inserts
 * after releasing it, so concurrent uploads insert (index entries, counter trigger) in parallel instead of
 * one after another.
 *
 * Why the polling guarantee still holds: it needs, for any two uploads A and B, xid(A) < xid(B) exactly
 * when every id of A is below every id of B — an order fixed at allocation, which stays serialized. Where
 * and when the rows are written afterwards does not matter: a reader shows B's rows only once every
 * transaction with a lower xid, A included, has ended.
 *
 * Rows are written in the order of the re-send key (modem, card, code, time, type), then batch position:
 * two concurrent batches that share punches then wait for each other's key in one global order and cannot
 * deadlock (they could when each wrote in its own batch order). Ids still follow the batch order, and of two
 * equal punches in one batch the first is stored, as before.
 *
 * Frozen (docs/database.md): the function texts are written out in full, down to the line of blanks after
 * `begin` in up(), which the text applied to existing databases has (schema.sql compares byte for byte).
 */
import { sql, type Kysely } from 'kysely';

/** Advisory lock key of punch id allocation; a copy of migration 0001's on purpose (a migration imports nothing that can change). */
const PUNCH_ID_LOCK = 7_365_420_001;

/** Replaces `upload_punch_batch` (same signature and results). */
export async function up(db: Kysely<unknown>): Promise<void> {
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

/** Restores migration 0002's function. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
      create or replace function upload_punch_batch(
        p_user_id integer, p_admin boolean,
        p_cards text[], p_times bigint[], p_codes integer[], p_types text[], p_modems text[], p_reception bigint[],
        out stored integer, out max_id bigint, out unknown_modems text[], out foreign_modems text[]
      ) language plpgsql as $fn$
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
        perform pg_advisory_unlock(${sql.lit(PUNCH_ID_LOCK)});
      end
      $fn$;
    `.execute(db);
}
