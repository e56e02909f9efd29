--
-- PostgreSQL database dump
--

\restrict


SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: timing; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA timing;


--
-- Name: active_key_owner(bytea); Type: FUNCTION; Schema: timing; Owner: -
--

CREATE FUNCTION timing.active_key_owner(p_key_hash bytea) RETURNS TABLE(key_id integer, user_id integer, user_name text, role text)
    LANGUAGE sql STABLE
    AS $$
        select k.id, u.id, u.user_name, u.role
          from api_keys k join users u on u.id = k.user_id
          where k.key_hash = p_key_hash and k.revoked_at is null
      $$;


--
-- Name: compact_punch_counts(); Type: FUNCTION; Schema: timing; Owner: -
--

CREATE FUNCTION timing.compact_punch_counts(OUT merged integer) RETURNS integer
    LANGUAGE sql
    SET search_path TO 'timing', 'pg_temp'
    AS $$
        with xm as (select pg_snapshot_xmin(pg_current_snapshot()) as x),
        dirty as (
          select distinct c.modem, c.shift, c.bucket from punch_counts c, xm
          where c.txid <> '0'::xid8 and c.txid < xm.x
        ),
        gone as (
          delete from punch_counts c using dirty d, xm
          where c.modem = d.modem and c.shift = d.shift and c.bucket = d.bucket and c.txid < xm.x
          returning c.modem, c.shift, c.bucket, c.n
        ),
        ins as (
          insert into punch_counts (modem, shift, bucket, n, txid)
          select modem, shift, bucket, sum(n), '0'::xid8 from gone group by modem, shift, bucket having sum(n) <> 0
          returning 1
        )
        select (select count(*)::int from gone) - (select count(*)::int from ins);
      $$;


--
-- Name: punch_counts_add(); Type: FUNCTION; Schema: timing; Owner: -
--

CREATE FUNCTION timing.punch_counts_add() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'timing', 'pg_temp'
    AS $$
      begin
        insert into timing.punch_counts (modem, shift, bucket, n, txid)
        select modem, 19::int2, id >> 19, count(*), txid from new_rows group by modem, id >> 19, txid
        union all
        select modem, 16::int2, id >> 16, count(*), txid from new_rows group by modem, id >> 16, txid
        union all
        select modem, 13::int2, id >> 13, count(*), txid from new_rows group by modem, id >> 13, txid
        union all
        select modem, 10::int2, id >> 10, count(*), txid from new_rows group by modem, id >> 10, txid;
        return null;
      end
      $$;


--
-- Name: punch_counts_remove(); Type: FUNCTION; Schema: timing; Owner: -
--

CREATE FUNCTION timing.punch_counts_remove() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'timing', 'pg_temp'
    AS $$
      begin
        insert into timing.punch_counts (modem, shift, bucket, n, txid)
        select modem, 19::int2, id >> 19, -count(*), txid from old_rows group by modem, id >> 19, txid
        union all
        select modem, 16::int2, id >> 16, -count(*), txid from old_rows group by modem, id >> 16, txid
        union all
        select modem, 13::int2, id >> 13, -count(*), txid from old_rows group by modem, id >> 13, txid
        union all
        select modem, 10::int2, id >> 10, -count(*), txid from old_rows group by modem, id >> 10, txid;
        return null;
      end
      $$;


--
-- Name: punch_visible_xmin(); Type: FUNCTION; Schema: timing; Owner: -
--

CREATE FUNCTION timing.punch_visible_xmin() RETURNS xid8
    LANGUAGE plpgsql STABLE
    SET search_path TO 'timing', 'pg_temp'
    AS $$
      declare
        v_snap pg_snapshot := pg_current_snapshot();
        v_cache text[] := string_to_array(nullif(current_setting('timing.punch_strangers', true), ''), ' ');
        v_known xid8[] := coalesce(v_cache[2:]::xid8[], '{}');
        v_now float8;
        v_min xid8;
        v_running integer;
      begin
        select min(x.x) filter (where x.x <> all (v_known)), count(*) into v_min, v_running from pg_snapshot_xip(v_snap) x;
        if v_running = 0 then
          return pg_snapshot_xmin(v_snap);
        end if;
        v_now := extract(epoch from clock_timestamp());
        if v_min is not null and (v_cache is null or not v_now - v_cache[1]::float8 between 0 and 0.1) then
          -- One read of the lock table (one call of pg_lock_status(), so one consistent picture): a running
          -- xid's own lock, and whether its backend holds the writer lock in this database.
          with l as materialized (
            select t.locktype, t.pid, t.transactionid from pg_catalog.pg_locks t
            where t.granted and t.pid is not null
              and ((t.locktype = 'transactionid' and t.mode = 'ExclusiveLock')
                or (t.locktype = 'advisory' and t.classid = 1 and t.objid = 3070452706 and t.objsubid = 1
                    and t.database = (select d.oid from pg_catalog.pg_database d where d.datname = pg_catalog.current_database())))
          )
          select coalesce(array_agg(s.x), '{}') into v_known from pg_snapshot_xip(v_snap) s(x)
            where s.x = any (v_known) or xid(s.x) in (select x.transactionid from l x
                                                      where x.locktype = 'transactionid' and not exists (select from l w where w.locktype = 'advisory' and w.pid = x.pid));
          perform set_config('timing.punch_strangers', array_to_string(array[v_now::text] || v_known::text[], ' '), false);
          select min(x.x) into v_min from pg_snapshot_xip(v_snap) x where x.x <> all (v_known);
        end if;
        return least(v_min, pg_snapshot_xmax(v_snap), pg_current_xact_id_if_assigned());
      end
      $$;


--
-- Name: punch_writer_begin(); Type: FUNCTION; Schema: timing; Owner: -
--

CREATE FUNCTION timing.punch_writer_begin() RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'timing', 'pg_temp'
    AS $$
      begin
        if coalesce(current_setting('timing.punch_writer', true), '') <> 'on' then
          if pg_current_xact_id_if_assigned() is not null then
            raise exception 'punches can only be inserted by a transaction that took the punch writer lock before its first write'
              using errcode = '55000', hint = 'Call timing.punch_writer_begin() (or insert the punches) before any other write of the transaction.';
          end if;
          perform pg_advisory_xact_lock_shared(7365420002);
          perform set_config('timing.punch_writer', 'on', true);
        end if;
      end
      $$;


--
-- Name: punches_writer_guard(); Type: FUNCTION; Schema: timing; Owner: -
--

CREATE FUNCTION timing.punches_writer_guard() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'timing', 'pg_temp'
    AS $$
      begin
        perform timing.punch_writer_begin();
        return null;
      end
      $$;


--
-- Name: upload_punch_batch(integer, boolean, text[], bigint[], integer[], text[], text[], bigint[]); Type: FUNCTION; Schema: timing; Owner: -
--

CREATE FUNCTION timing.upload_punch_batch(p_user_id integer, p_admin boolean, p_cards text[], p_times bigint[], p_codes integer[], p_types text[], p_modems text[], p_reception bigint[], OUT stored integer, OUT max_id bigint, OUT unknown_modems text[], OUT foreign_modems text[]) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'timing', 'pg_temp'
    AS $$
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
      end
      $$;


--
-- Name: upload_punch_batch_by_key(bytea, text[], bigint[], integer[], text[], text[], bigint[]); Type: FUNCTION; Schema: timing; Owner: -
--

CREATE FUNCTION timing.upload_punch_batch_by_key(p_key_hash bytea, p_cards text[], p_times bigint[], p_codes integer[], p_types text[], p_modems text[], p_reception bigint[], OUT key_id integer, OUT user_id integer, OUT user_name text, OUT role text, OUT stored integer, OUT max_id bigint, OUT unknown_modems text[], OUT foreign_modems text[]) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'timing', 'pg_temp'
    AS $$
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
      $$;


--
-- Name: upload_punches(integer, boolean, bigint, text[], bigint[], integer[], text[], text[], bigint[]); Type: FUNCTION; Schema: timing; Owner: -
--

CREATE FUNCTION timing.upload_punches(p_user_id integer, p_admin boolean, p_quota bigint, p_cards text[], p_times bigint[], p_codes integer[], p_types text[], p_modems text[], p_reception bigint[], OUT stored integer, OUT max_id bigint, OUT unknown_modems text[], OUT foreign_modems text[]) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'timing', 'pg_temp'
    AS $$
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
      $$;


--
-- Name: upload_punches_by_key(bytea, bigint, text[], bigint[], integer[], text[], text[], bigint[]); Type: FUNCTION; Schema: timing; Owner: -
--

CREATE FUNCTION timing.upload_punches_by_key(p_key_hash bytea, p_quota bigint, p_cards text[], p_times bigint[], p_codes integer[], p_types text[], p_modems text[], p_reception bigint[], OUT key_id integer, OUT user_id integer, OUT user_name text, OUT role text, OUT stored integer, OUT max_id bigint, OUT unknown_modems text[], OUT foreign_modems text[]) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'timing', 'pg_temp'
    AS $$
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
      $$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: api_keys; Type: TABLE; Schema: timing; Owner: -
--

CREATE TABLE timing.api_keys (
    id integer NOT NULL,
    user_id integer NOT NULL,
    key_hash bytea NOT NULL,
    prefix text NOT NULL,
    name text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    revoked_at timestamp with time zone,
    last_used_at timestamp with time zone
);


--
-- Name: api_keys_id_seq; Type: SEQUENCE; Schema: timing; Owner: -
--

ALTER TABLE timing.api_keys ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME timing.api_keys_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: event_modems; Type: TABLE; Schema: timing; Owner: -
--

CREATE TABLE timing.event_modems (
    event_id integer NOT NULL,
    modem text NOT NULL
);


--
-- Name: events; Type: TABLE; Schema: timing; Owner: -
--

CREATE TABLE timing.events (
    id integer NOT NULL,
    name text NOT NULL,
    owner_id integer NOT NULL,
    is_public boolean DEFAULT false NOT NULL,
    from_ms bigint,
    to_ms bigint,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT events_window CHECK (((from_ms IS NULL) OR (to_ms IS NULL) OR (from_ms <= to_ms)))
);


--
-- Name: events_id_seq; Type: SEQUENCE; Schema: timing; Owner: -
--

ALTER TABLE timing.events ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME timing.events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: kysely_migration; Type: TABLE; Schema: timing; Owner: -
--

CREATE TABLE timing.kysely_migration (
    name character varying(255) NOT NULL,
    "timestamp" character varying(255) NOT NULL
);


--
-- Name: kysely_migration_lock; Type: TABLE; Schema: timing; Owner: -
--

CREATE TABLE timing.kysely_migration_lock (
    id character varying(255) NOT NULL,
    is_locked integer DEFAULT 0 NOT NULL
);


--
-- Name: modems; Type: TABLE; Schema: timing; Owner: -
--

CREATE TABLE timing.modems (
    serial text NOT NULL,
    user_id integer NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: punch_counts; Type: TABLE; Schema: timing; Owner: -
--

CREATE TABLE timing.punch_counts (
    modem text NOT NULL,
    shift smallint NOT NULL,
    bucket bigint NOT NULL,
    n bigint NOT NULL,
    txid xid8 NOT NULL,
    CONSTRAINT punch_counts_shift_check CHECK ((shift = ANY (ARRAY[10, 13, 16, 19])))
)
WITH (autovacuum_vacuum_scale_factor='0', autovacuum_vacuum_threshold='10000', autovacuum_vacuum_insert_scale_factor='0', autovacuum_vacuum_insert_threshold='10000', autovacuum_analyze_scale_factor='0', autovacuum_analyze_threshold='10000', autovacuum_vacuum_cost_delay='0');


--
-- Name: punches; Type: TABLE; Schema: timing; Owner: -
--

CREATE TABLE timing.punches (
    id bigint NOT NULL,
    card text NOT NULL,
    "time" bigint NOT NULL,
    code integer NOT NULL,
    type text NOT NULL,
    modem text NOT NULL,
    reception_time_utc bigint NOT NULL,
    txid xid8 DEFAULT pg_current_xact_id() NOT NULL
);


--
-- Name: punches_id_seq; Type: SEQUENCE; Schema: timing; Owner: -
--

ALTER TABLE timing.punches ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME timing.punches_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: upload_quota; Type: TABLE; Schema: timing; Owner: -
--

CREATE TABLE timing.upload_quota (
    user_id integer NOT NULL,
    day date NOT NULL,
    punches bigint NOT NULL,
    CONSTRAINT upload_quota_punches_check CHECK ((punches >= 0))
);


--
-- Name: users; Type: TABLE; Schema: timing; Owner: -
--

CREATE TABLE timing.users (
    id integer NOT NULL,
    user_name text NOT NULL,
    role text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT users_role_check CHECK ((role = ANY (ARRAY['admin'::text, 'user'::text])))
);


--
-- Name: users_id_seq; Type: SEQUENCE; Schema: timing; Owner: -
--

ALTER TABLE timing.users ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME timing.users_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: api_keys api_keys_key_hash_key; Type: CONSTRAINT; Schema: timing; Owner: -
--

ALTER TABLE ONLY timing.api_keys
    ADD CONSTRAINT api_keys_key_hash_key UNIQUE (key_hash);


--
-- Name: api_keys api_keys_pkey; Type: CONSTRAINT; Schema: timing; Owner: -
--

ALTER TABLE ONLY timing.api_keys
    ADD CONSTRAINT api_keys_pkey PRIMARY KEY (id);


--
-- Name: event_modems event_modems_pkey; Type: CONSTRAINT; Schema: timing; Owner: -
--

ALTER TABLE ONLY timing.event_modems
    ADD CONSTRAINT event_modems_pkey PRIMARY KEY (event_id, modem);


--
-- Name: events events_pkey; Type: CONSTRAINT; Schema: timing; Owner: -
--

ALTER TABLE ONLY timing.events
    ADD CONSTRAINT events_pkey PRIMARY KEY (id);


--
-- Name: kysely_migration_lock kysely_migration_lock_pkey; Type: CONSTRAINT; Schema: timing; Owner: -
--

ALTER TABLE ONLY timing.kysely_migration_lock
    ADD CONSTRAINT kysely_migration_lock_pkey PRIMARY KEY (id);


--
-- Name: kysely_migration kysely_migration_pkey; Type: CONSTRAINT; Schema: timing; Owner: -
--

ALTER TABLE ONLY timing.kysely_migration
    ADD CONSTRAINT kysely_migration_pkey PRIMARY KEY (name);


--
-- Name: modems modems_pkey; Type: CONSTRAINT; Schema: timing; Owner: -
--

ALTER TABLE ONLY timing.modems
    ADD CONSTRAINT modems_pkey PRIMARY KEY (serial);


--
-- Name: punches punches_pkey; Type: CONSTRAINT; Schema: timing; Owner: -
--

ALTER TABLE ONLY timing.punches
    ADD CONSTRAINT punches_pkey PRIMARY KEY (id);


--
-- Name: punches punches_resend; Type: CONSTRAINT; Schema: timing; Owner: -
--

ALTER TABLE ONLY timing.punches
    ADD CONSTRAINT punches_resend UNIQUE (modem, "time", card, code, type);


--
-- Name: upload_quota upload_quota_pkey; Type: CONSTRAINT; Schema: timing; Owner: -
--

ALTER TABLE ONLY timing.upload_quota
    ADD CONSTRAINT upload_quota_pkey PRIMARY KEY (user_id, day);


--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: timing; Owner: -
--

ALTER TABLE ONLY timing.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);


--
-- Name: users users_user_name_key; Type: CONSTRAINT; Schema: timing; Owner: -
--

ALTER TABLE ONLY timing.users
    ADD CONSTRAINT users_user_name_key UNIQUE (user_name);


--
-- Name: api_keys_user_id; Type: INDEX; Schema: timing; Owner: -
--

CREATE INDEX api_keys_user_id ON timing.api_keys USING btree (user_id);


--
-- Name: event_modems_modem; Type: INDEX; Schema: timing; Owner: -
--

CREATE INDEX event_modems_modem ON timing.event_modems USING btree (modem);


--
-- Name: events_owner_id; Type: INDEX; Schema: timing; Owner: -
--

CREATE INDEX events_owner_id ON timing.events USING btree (owner_id);


--
-- Name: modems_user_id; Type: INDEX; Schema: timing; Owner: -
--

CREATE INDEX modems_user_id ON timing.modems USING btree (user_id);


--
-- Name: punch_counts_modem; Type: INDEX; Schema: timing; Owner: -
--

CREATE INDEX punch_counts_modem ON timing.punch_counts USING btree (modem, shift, bucket) INCLUDE (n, txid);


--
-- Name: punch_counts_pending; Type: INDEX; Schema: timing; Owner: -
--

CREATE INDEX punch_counts_pending ON timing.punch_counts USING btree (modem, shift, bucket) WHERE (txid <> '0'::xid8);


--
-- Name: punches_modem_id; Type: INDEX; Schema: timing; Owner: -
--

CREATE INDEX punches_modem_id ON timing.punches USING btree (modem, id);


--
-- Name: punches punch_counts_delete; Type: TRIGGER; Schema: timing; Owner: -
--

CREATE TRIGGER punch_counts_delete AFTER DELETE ON timing.punches REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION timing.punch_counts_remove();


--
-- Name: punches punch_counts_insert; Type: TRIGGER; Schema: timing; Owner: -
--

CREATE TRIGGER punch_counts_insert AFTER INSERT ON timing.punches REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION timing.punch_counts_add();


--
-- Name: punches punch_counts_update_new; Type: TRIGGER; Schema: timing; Owner: -
--

CREATE TRIGGER punch_counts_update_new AFTER UPDATE ON timing.punches REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION timing.punch_counts_add();


--
-- Name: punches punch_counts_update_old; Type: TRIGGER; Schema: timing; Owner: -
--

CREATE TRIGGER punch_counts_update_old AFTER UPDATE ON timing.punches REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION timing.punch_counts_remove();


--
-- Name: punches punches_writer_guard; Type: TRIGGER; Schema: timing; Owner: -
--

CREATE TRIGGER punches_writer_guard BEFORE INSERT ON timing.punches FOR EACH STATEMENT EXECUTE FUNCTION timing.punches_writer_guard();


--
-- Name: api_keys api_keys_user_id_fkey; Type: FK CONSTRAINT; Schema: timing; Owner: -
--

ALTER TABLE ONLY timing.api_keys
    ADD CONSTRAINT api_keys_user_id_fkey FOREIGN KEY (user_id) REFERENCES timing.users(id) ON DELETE CASCADE;


--
-- Name: event_modems event_modems_event_id_fkey; Type: FK CONSTRAINT; Schema: timing; Owner: -
--

ALTER TABLE ONLY timing.event_modems
    ADD CONSTRAINT event_modems_event_id_fkey FOREIGN KEY (event_id) REFERENCES timing.events(id) ON DELETE CASCADE;


--
-- Name: events events_owner_id_fkey; Type: FK CONSTRAINT; Schema: timing; Owner: -
--

ALTER TABLE ONLY timing.events
    ADD CONSTRAINT events_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES timing.users(id);


--
-- Name: modems modems_user_id_fkey; Type: FK CONSTRAINT; Schema: timing; Owner: -
--

ALTER TABLE ONLY timing.modems
    ADD CONSTRAINT modems_user_id_fkey FOREIGN KEY (user_id) REFERENCES timing.users(id);


--
-- Name: upload_quota upload_quota_user_id_fkey; Type: FK CONSTRAINT; Schema: timing; Owner: -
--

ALTER TABLE ONLY timing.upload_quota
    ADD CONSTRAINT upload_quota_user_id_fkey FOREIGN KEY (user_id) REFERENCES timing.users(id) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--

\unrestrict
