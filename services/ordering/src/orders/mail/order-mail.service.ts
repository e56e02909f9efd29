/**
 * What the order keeps of its e-mails' fate (docs/outbox.md, "Mail"): a message the relay refused for good
 * (SMTP 5xx) or whose outcome is unknown is written to the order's history with the relay's answer, the
 * way a partial refund is (a history row that changes no state), so whoever looks at the order sees why the
 * customer got no confirmation or payment link.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema';
import { orderIdOfDedupeKey } from '../../outbox/dead-jobs.service';
import { insertOrderNote } from '../orders.repository';

/**
 * Records in its order's history that the e-mail job `dedupeKey` was given up with `reason` (the relay's
 * answer, at most 500 characters kept); nothing for mail that belongs to no order (or to one that is gone).
 */
export async function recordOrderMailFailure(db: Kysely<DB>, dedupeKey: string, reason: string): Promise<void> {
  const orderId = /^order-/.test(dedupeKey) ? orderIdOfDedupeKey(dedupeKey) : undefined;
  if (orderId === undefined) return;
  const what = dedupeKey.startsWith('order-paylink:') ? 'payment-link e-mail' : 'confirmation e-mail';
  // A refused message was not delivered; one whose answer was lost may have been (docs/outbox.md, "Mail").
  const outcome = /^relay refused/.test(reason) ? 'not delivered' : 'delivery unknown';
  await insertOrderNote(db, orderId, 'system:mail', `${what} ${outcome}: ${reason}`.slice(0, 500));
}
