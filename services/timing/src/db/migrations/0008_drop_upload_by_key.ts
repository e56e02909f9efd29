/**
 * Drops `upload_punch_batch_by_key` (migration 0004), which authenticated fast-lane uploads inside the
 * upload's own call: that was a second copy of the key rules of `authenticateKey` (users.service.ts). Every
 * upload now authenticates there and then calls `upload_punch_batch`, so nothing calls it any more.
 *
 * Frozen (docs/database.md): down() recreates it with migration 0004's text, written out in full.
 */
import { sql, type Kysely, type Migration } from 'kysely';

/** Drops the unused `upload_punch_batch_by_key`. */
export const m0008DropUploadByKey: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`drop function upload_punch_batch_by_key`.execute(db);
  },
  async down(db: Kysely<unknown>): Promise<void> {
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
  },
};
