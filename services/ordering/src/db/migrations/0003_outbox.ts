import { sql, type Kysely } from 'kysely';

/** The transactional outbox (docs/decisions.md §6): messages written in the business transaction, sent after commit. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table outbox_messages (
      id bigint generated always as identity primary key,
      kind text not null default 'mail' check (kind in ('mail')),
      dedupe_key text not null unique,
      message_id text not null,
      payload jsonb not null,
      attempts integer not null default 0,
      next_attempt_at timestamptz not null default now(),
      locked_until timestamptz,
      sent_at timestamptz,
      last_error text,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index outbox_messages_pending_idx on outbox_messages (next_attempt_at, id) where sent_at is null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table outbox_messages`.execute(db);
}
