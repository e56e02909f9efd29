-- upload_punches_by_key, version 1: applied by migration 0015_quota_in_upload. Frozen once merged (docs/database.md "Function texts").
-- upload_punch_batch_by_key version 2 calling upload_punches: the key is checked (active_key_owner) in the
-- upload's own statement; an unknown or revoked key returns a null key_id and stores nothing.
create or replace function upload_punches_by_key(
  p_key_hash bytea, p_quota bigint,
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
          from upload_punches(user_id, role = 'admin', p_quota, p_cards, p_times, p_codes, p_types, p_modems, p_reception) b;
      end
      $fn$;
