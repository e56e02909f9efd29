/**
 * Reads of the outbox that only tests need: dead jobs and one job by kind and dedupe key.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../src/db/schema';
import type { OutboxMessage } from '../../src/outbox/outbox.repository';

/** Number of dead jobs. */
export async function countDead(db: Kysely<DB>): Promise<number> {
  const r = await db
    .selectFrom('outbox_messages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('dead_at', 'is not', null)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** One job by kind and dedupe key. */
export async function findMessage(db: Kysely<DB>, kind: string, dedupeKey: string): Promise<OutboxMessage | undefined> {
  return db.selectFrom('outbox_messages').selectAll().where('kind', '=', kind).where('dedupe_key', '=', dedupeKey).executeTakeFirst();
}
