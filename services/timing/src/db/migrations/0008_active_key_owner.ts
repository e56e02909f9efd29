/**
 * One definition of an active API key for both ways a key is checked: `active_key_owner(key_hash)` returns
 * the key's id and its user (id, name, role) when the key exists and is not revoked, else no row.
 * `authenticateKey` (users.repository.ts `findActiveKeyOwner`) selects from it, and
 * `upload_punch_batch_by_key` (migration 0004: the fast lane's one-call upload) now calls it instead of its
 * own copy of the lookup, so a change to the key rules is made once, in a migration replacing this function.
 *
 * Frozen (docs/database.md): down() restores migration 0004's text of `upload_punch_batch_by_key`, written
 * out in full, and drops `active_key_owner`.
 */
import { sql, type Kysely } from 'kysely';

/** Creates `active_key_owner` and makes `upload_punch_batch_by_key` use it. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
      create function active_key_owner(p_key_hash bytea)
      returns table (key_id integer, user_id integer, user_name text, role text)
      language sql stable as $fn$
        select k.id, u.id, u.user_name, u.role
          from api_keys k join users u on u.id = k.user_id
          where k.key_hash = p_key_hash and k.revoked_at is null
      $fn$;
    `.execute(db);
  await sql`
      create or replace function upload_punch_batch_by_key(
        p_key_hash bytea,
        p_cards text[], p_times bigint[], p_codes integer[], p_types text[], p_modems text[], p_reception bigint[],
        out key_id integer, out user_id integer, out user_name text, out role text,
        out stored integer, out max_id bigint, out unknown_modems text[], out foreign_modems text[]
      ) language plpgsql as $fn$
      begin
        select o.key_id, o.user_id, o.user_name, o.role into key_id, user_id, user_name, role
          from active_key_owner(p_key_hash) o;
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
  await sql`
      create or replace function upload_punch_batch_by_key(
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
  await sql`drop function active_key_owner`.execute(db);
}
