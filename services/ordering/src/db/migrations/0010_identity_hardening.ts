import { sql, type Kysely } from 'kysely';

/**
 * Identity hardening (ordering README "Accounts, e-mail verification and sign-in limits"): `users.token_version`, carried by access tokens as `ver` and
 * raised by every role, password or active-flag change, so that tokens issued before the change are
 * refused at once; and `email_verifications`, the pending e-mail changes of `users/update-profile`, each
 * confirmed by a mailed single-use token (stored as SHA-256) before the address replaces `users.email`.
 * A pending address reserves nothing: the unique index stays on `users.email` alone.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table users add column token_version integer not null default 0`.execute(db);
  await sql`
    create table email_verifications (
      id bigint generated always as identity primary key,
      user_id integer not null references users (id) on delete cascade,
      email text not null,
      token_hash text not null unique,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz
    )`.execute(db);
  await sql`create index email_verifications_user_idx on email_verifications (user_id) where used_at is null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table email_verifications`.execute(db);
  await sql`alter table users drop column token_version`.execute(db);
}
