-- active_key_owner, version 1: applied by migration 0008_active_key_owner. Frozen once merged (docs/database.md "Function texts").
create or replace function active_key_owner(p_key_hash bytea)
returns table (key_id integer, user_id integer, user_name text, role text)
language sql stable as $fn$
        select k.id, u.id, u.user_name, u.role
          from api_keys k join users u on u.id = k.user_id
          where k.key_hash = p_key_hash and k.revoked_at is null
      $fn$;
