/**
 * SQL of the transactional outbox. Functions take the executor first so callers pass their transaction.
 */
import { sql, type Kysely, type Selectable } from 'kysely';
import type { DB } from '../db/schema';
import type { MailPayload } from '../mail/mailer';
import type { OutboxMessagesTable } from './outbox.tables';

/** A stored outbox row. */
export type OutboxMessage = Selectable<OutboxMessagesTable>;

/** Inserts a message unless one with the same dedupe key exists; wakes dispatchers on commit. Returns whether it was new. */
export async function insertMessage(db: Kysely<DB>, m: { dedupeKey: string; messageId: string; payload: MailPayload }): Promise<boolean> {
  const r = await db
    .insertInto('outbox_messages')
    .values({ dedupe_key: m.dedupeKey, message_id: m.messageId, payload: JSON.stringify(m.payload) })
    .onConflict((oc) => oc.column('dedupe_key').doNothing())
    .returning('id')
    .executeTakeFirst();
  // NOTIFY is transactional: listeners hear it only if (and when) the enqueuing transaction commits.
  if (r) await sql`select pg_notify('outbox', '')`.execute(db);
  return !!r;
}

/**
 * Claims up to `limit` due messages for `leaseSeconds` (short transaction; the send happens outside any
 * transaction so no lock or snapshot is held during network I/O). Several dispatchers never claim the same row.
 */
export async function claimDue(db: Kysely<DB>, limit: number, leaseSeconds: number): Promise<OutboxMessage[]> {
  const r = await sql<OutboxMessage>`
    update outbox_messages set locked_until = now() + make_interval(secs => ${leaseSeconds}), attempts = attempts + 1
    where id in (
      select id from outbox_messages
      where sent_at is null and next_attempt_at <= now() and (locked_until is null or locked_until < now())
      order by next_attempt_at, id
      limit ${limit}
      for update skip locked)
    returning *`.execute(db);
  return r.rows;
}

/** Marks a claimed message as sent. */
export async function markSent(db: Kysely<DB>, id: number): Promise<void> {
  await db.updateTable('outbox_messages').set({ sent_at: new Date(), locked_until: null, last_error: null }).where('id', '=', id).execute();
}

/** Releases a claimed message for a later attempt at `nextAttemptAt`. */
export async function markFailed(db: Kysely<DB>, id: number, error: string, nextAttemptAt: Date): Promise<void> {
  await db.updateTable('outbox_messages').set({ locked_until: null, last_error: error.slice(0, 500), next_attempt_at: nextAttemptAt }).where('id', '=', id).execute();
}

/** Number of messages not yet sent (for metrics and status). */
export async function countPending(db: Kysely<DB>): Promise<number> {
  const r = await db.selectFrom('outbox_messages').select((eb) => eb.fn.countAll<number>().as('n')).where('sent_at', 'is', null).executeTakeFirstOrThrow();
  return Number(r.n);
}
