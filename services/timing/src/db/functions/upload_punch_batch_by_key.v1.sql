-- upload_punch_batch_by_key, version 1: applied by migration 0004_upload_by_key. Frozen once merged (docs/database.md "Function texts").
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
