/**
 * Drops `insert_punch_batch` (migration 0001), the first gap-free insert: since migration 0002 uploads call
 * `upload_punch_batch`, and nothing calls it any more.
 *
 * Frozen (docs/database.md): down() recreates it with migration 0001's text, written out in full.
 */
import { sql, type Kysely } from 'kysely';

/** Advisory lock key of punch id allocation; a copy of migration 0001's on purpose (a migration imports nothing that can change). */
const PUNCH_ID_LOCK = 7_365_420_001;

/** Drops the unused `insert_punch_batch`. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop function insert_punch_batch`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
      create function insert_punch_batch(
        p_cards text[], p_times bigint[], p_codes integer[], p_types text[], p_modems text[], p_reception bigint[],
        out stored integer, out max_id bigint
      ) language plpgsql as $fn$
      begin
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
