/**
 * `upload_punch_batch_by_key`: the key lookup of `authenticateKey` and `upload_punch_batch`
 * (migration 0002) in one call, so that a modem's single-punch upload is one database round trip. It
 * returns the key's principal (all null for an unknown or revoked key, and then writes nothing) next to
 * the upload's result; unknown and foreign modems are reported, not written, exactly as by
 * `upload_punch_batch`, which it calls.
 */
import { sql, type Kysely } from 'kysely';

/** Creates `upload_punch_batch_by_key`. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
      create function upload_punch_batch_by_key(
        p_key_hash bytea,
        p_cards text[], p_times bigint[], p_codes integer[], p_types text[], p_modems text[], p_reception bigint[],
        out key_id integer, out user_id integer, out user_name text, out role text,
        out stored integer, out max_id bigint, out unknown_modems text[], out foreign_modems text[]
      ) language plpgsql as $fn$
      begin
        select k.id, u.id, u.user_name, u.role into key_id, user_id, user_name, role
          from api_keys k join users u on u.id = k.user_id
          where k.key_hash = p_key_hash and k.revoked_at is null;
        if key_id is null then
          stored := 0;
          unknown_modems := '{}';
          foreign_modems := '{}';
          return;
        end if;
        select b.stored, b.max_id, b.unknown_modems, b.foreign_modems into stored, max_id, unknown_modems, foreign_modems
          from upload_punch_batch(user_id, role = 'admin', p_cards, p_times, p_codes, p_types, p_modems, p_reception) b;
      end
      $fn$;
    `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop function upload_punch_batch_by_key`.execute(db);
}
