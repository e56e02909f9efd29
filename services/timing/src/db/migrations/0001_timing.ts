/**
 * Initial `timing` schema (docs/decisions.md §5): users, API keys, modems, events and their modems, punches.
 *
 * Punches carry `txid` (the inserting transaction's id, xid8) so that readers can hide punches whose id
 * could still be overtaken by an earlier, uncommitted upload; see punches.repository.ts for the protocol.
 */
import { sql, type Kysely } from 'kysely';
import { applyFunctionVersion } from '../functions';

/** Creates the tables, indexes and the `insert_punch_batch` function (dropped by migration 0007) of the timing schema. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
      create table users (
        id integer generated always as identity primary key,
        user_name text not null unique,
        role text not null check (role in ('admin', 'user')),
        created_at timestamptz not null default now()
      );

      create table api_keys (
        id integer generated always as identity primary key,
        user_id integer not null references users (id) on delete cascade,
        -- SHA-256 of the whole key: keys are 256-bit random, so a fast hash is enough and allows lookup by hash.
        key_hash bytea not null unique,
        prefix text not null,
        name text not null,
        created_at timestamptz not null default now(),
        revoked_at timestamptz
      );
      create index api_keys_user_id on api_keys (user_id);

      create table modems (
        serial text primary key,
        user_id integer not null references users (id),
        created_at timestamptz not null default now()
      );
      create index modems_user_id on modems (user_id);

      create table events (
        id integer generated always as identity primary key,
        name text not null,
        owner_id integer not null references users (id),
        is_public boolean not null default false,
        from_ms bigint,
        to_ms bigint,
        created_at timestamptz not null default now(),
        constraint events_window check (from_ms is null or to_ms is null or from_ms <= to_ms)
      );
      create index events_owner_id on events (owner_id);

      create table event_modems (
        event_id integer not null references events (id) on delete cascade,
        modem text not null references modems (serial),
        primary key (event_id, modem)
      );
      create index event_modems_modem on event_modems (modem);

      -- No foreign key to modems: the upload path registers modems first, and a per-row key check would
      -- cost on the hot insert path without protecting anything the service does not already ensure.
      create table punches (
        id bigint generated always as identity primary key,
        card text not null,
        time bigint not null,
        code integer not null,
        type text not null,
        modem text not null,
        reception_time_utc bigint not null,
        txid xid8 not null default pg_current_xact_id(),
        constraint punches_resend unique (modem, card, code, time, type)
      );
      create index punches_modem_id on punches (modem, id);
    `.execute(db);
  // The gap-free upload (see punches.repository.ts): xid and ids are allocated inside one critical
  // section, which ends before the commit so that commits of concurrent uploads proceed in parallel.
  // Called as a single autocommitted statement: the whole critical section costs no client round trip.
  // On error the session keeps the lock; the caller then closes that connection.
  await applyFunctionVersion(db, 'insert_punch_batch', 1);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop function insert_punch_batch; drop table punches, event_modems, events, modems, api_keys, users`.execute(db);
}
