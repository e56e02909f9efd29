import { sql, type Kysely } from 'kysely';

/**
 * Due jobs indexed by kind (docs/outbox.md "Lanes"): every lane claims its own kind only, so its claim
 * descends to its kind's due jobs directly instead of walking past every other kind's (a backlog of e-mail
 * made each empty lane's claim read all of it).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index outbox_messages_due_idx on outbox_messages (kind, next_attempt_at, id) where sent_at is null and dead_at is null`.execute(db);
  await sql`drop index outbox_messages_pending_idx`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create index outbox_messages_pending_idx on outbox_messages (next_attempt_at, id) where sent_at is null and dead_at is null`.execute(db);
  await sql`drop index outbox_messages_due_idx`.execute(db);
}
