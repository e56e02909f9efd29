import { sql, type Kysely } from 'kysely';

/** Users of the ordering service (DESIGN §6 identity). Further identity tables are added here too. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table users (
      id integer generated always as identity primary key,
      user_name text not null,
      email text not null,
      first_name text,
      last_name text,
      culture text not null default 'en',
      roles text[] not null default '{customer}',
      user_group text not null default 'public' check (user_group in ('public', 'retailer', 'internal')),
      erp_retailer_entity_id text,
      is_active boolean not null default true,
      password_hash text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      check (roles <@ array['admin', 'support', 'retailer', 'customer']::text[])
    )`.execute(db);
  await sql`create unique index users_user_name_key on users (lower(user_name))`.execute(db);
  await sql`create index users_email_idx on users (lower(email))`.execute(db);
}
