import { sql, type Kysely } from 'kysely';

/**
 * Identity and licensing tables of the ordering service (docs/decisions.md §6 identity; the `auth`, `users` and
 * `licensing` operations): users, rotating refresh tokens, registered service clients and licenses. Secrets are
 * stored only as hashes: passwords with scrypt, refresh tokens, client secrets, client identifiers and license
 * secrets with SHA-256 (they are 256-bit random values, so a slow hash adds nothing).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table users (
      id integer generated always as identity primary key,
      user_name text not null,
      email text not null,
      email_verified boolean not null default false,
      first_name text,
      last_name text,
      culture text not null default 'en',
      roles text[] not null default '{customer}',
      user_group text not null default 'public' check (user_group in ('public', 'retailer', 'internal')),
      erp_retailer_entity_id text,
      is_active boolean not null default true,
      password_hash text,
      last_login_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      check (roles <@ array['admin', 'support', 'retailer', 'customer']::text[] and cardinality(roles) >= 1),
      check (not ('retailer' = any(roles)) or (user_group = 'retailer' and erp_retailer_entity_id is not null))
    )`.execute(db);
  await sql`create unique index users_user_name_key on users (lower(user_name))`.execute(db);
  await sql`create unique index users_email_key on users (lower(email))`.execute(db);

  // One row per issued refresh token; a rotation marks the old row used and inserts its successor in the
  // same family. Presenting a used token again revokes the whole family (RFC 6819 §5.2.2.3).
  await sql`
    create table refresh_tokens (
      id bigint generated always as identity primary key,
      token_hash text not null unique,
      family_id uuid not null,
      user_id integer not null references users (id) on delete cascade,
      scope text,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz,
      revoked_at timestamptz
    )`.execute(db);
  await sql`create index refresh_tokens_family_idx on refresh_tokens (family_id)`.execute(db);
  await sql`create index refresh_tokens_user_idx on refresh_tokens (user_id) where revoked_at is null`.execute(db);

  await sql`
    create table service_clients (
      id integer generated always as identity primary key,
      name text not null,
      client_id text not null unique,
      secret_hash text not null,
      identifier_hash text unique,
      roles text[] not null default '{}',
      user_group text not null default 'public' check (user_group in ('public', 'retailer', 'internal')),
      is_active boolean not null default true,
      created_at timestamptz not null default now(),
      check (roles <@ array['admin', 'support', 'retailer', 'customer']::text[])
    )`.execute(db);
  await sql`create unique index service_clients_name_key on service_clients (lower(name))`.execute(db);

  // `seq` orders licenses by creation (ids are random UUIDs). A free license has no e-mail; assignment is
  // a conditional update, so one license is never given to two addresses.
  await sql`
    create table licenses (
      id uuid primary key,
      seq bigint generated always as identity unique,
      product text not null check (product in ('sportidentConfigPlus', 'sportidentCenterPro', 'sportidentReaderApp', 'resultsManager')),
      secret_hash text not null unique,
      email text,
      assigned_at timestamptz,
      license_key text,
      key_issued_at timestamptz,
      keys_issued integer not null default 0,
      created_at timestamptz not null default now(),
      check ((email is null) = (assigned_at is null))
    )`.execute(db);
  await sql`create index licenses_free_idx on licenses (product, seq) where email is null`.execute(db);
  await sql`create index licenses_email_idx on licenses (lower(email), product)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table licenses, service_clients, refresh_tokens, users`.execute(db);
}
