/**
 * SQL of the order flow (paylinks, payment deliveries, ERP hand-off, releases on cancel). Free functions
 * taking the executor first; callers pass their transaction.
 */
import { sql, type Kysely } from 'kysely';
import { PREPARED } from '@sports-timing/shared';
import type { DB } from '../../db/schema';
import { completeJobSql, notifyInserted, type NewOutboxMessage } from '../../outbox/outbox.repository';
import type { OrderRow } from '../orders.repository';

/**
 * Stores paylink `paylinkId` (`url`) on order `orderId` if it is `pending_payment` without a paylink, and in
 * the same statement (atomic without a transaction) enqueues `mail`, the payment-link e-mail (skipped when
 * its dedupe key exists; dispatchers woken on commit). `completes`: the outbox job to mark done in the same
 * statement, whether or not the paylink was stored (the caller's reserved job). Returns the order's new
 * `updated_at`, or null when nothing was stored (the order has a paylink already or no longer awaits
 * payment; no e-mail then either).
 */
export async function storePaylink(
  db: Kysely<DB>,
  orderId: number,
  paylinkId: number,
  url: string,
  mail: NewOutboxMessage,
  completes: { kind: string; dedupeKey: string } | null = null,
): Promise<Date | null> {
  const r = await sql<{ updated_at: Date; notified: number }>`${PREPARED}
    with updated as (
      update orders set paylink_id = ${paylinkId}, paylink_url = ${url}, updated_at = ${new Date()}
      where id = ${orderId} and paylink_id is null and state = 'pending_payment'
      returning updated_at),
    inserted as (
      insert into outbox_messages (kind, dedupe_key, message_id, payload)
      select ${mail.kind}, ${mail.dedupeKey}, ${mail.messageId ?? null}, ${JSON.stringify(mail.payload)}::jsonb from updated
      on conflict (kind, dedupe_key) do nothing
      returning kind, locked_until)${
        completes
          ? sql`,
    completed as (${completeJobSql(completes.kind, completes.dedupeKey)})`
          : sql``
      }
    select updated_at, ${notifyInserted('inserted')} as notified from updated`.execute(db);
  return r.rows[0]?.updated_at ?? null;
}

/** The order paid through paylink `paylinkId`, else the one with order number `reference`; undefined when none. */
export async function findOrderForPayment(db: Kysely<DB>, paylinkId: number | null, reference: string | null): Promise<OrderRow | undefined> {
  if (paylinkId !== null) {
    const byLink = await db.selectFrom('orders').selectAll().where('paylink_id', '=', paylinkId).executeTakeFirst();
    if (byLink) return byLink;
  }
  if (reference) return db.selectFrom('orders').selectAll().where('order_number', '=', reference).executeTakeFirst();
  return undefined;
}

/** The order handed to the ERP as sales order `salesOrderId`, else the one with order number `reference`. */
export async function findOrderForSalesOrder(db: Kysely<DB>, salesOrderId: string, reference: string | null): Promise<OrderRow | undefined> {
  const bySo = await db.selectFrom('orders').selectAll().where('erp_sales_order_id', '=', salesOrderId).executeTakeFirst();
  if (bySo || !reference) return bySo;
  return db.selectFrom('orders').selectAll().where('order_number', '=', reference).executeTakeFirst();
}

/**
 * Locks up to `limit` `pending_payment` orders created at or before `cutoff`, oldest first, skipping rows
 * another transaction holds (concurrent expiry sweeps take disjoint orders). Run in the sweep's transaction.
 */
export async function lockExpiredUnpaidOrders(
  trx: Kysely<DB>,
  cutoff: Date,
  limit: number,
): Promise<{ id: number; order_number: string; paylink_id: number | null }[]> {
  return (
    trx
      .selectFrom('orders')
      .select(['id', 'order_number', 'paylink_id'])
      .where('state', '=', 'pending_payment')
      // A payment on its way (bank transfer) or a mismatching one keeps the order: it is on hold for staff, not expired.
      .where('payment_on_hold_at', 'is', null)
      .where('created_at', '<=', cutoff)
      .orderBy('created_at')
      .limit(limit)
      .forUpdate()
      .skipLocked()
      .execute()
  );
}

/** Stores why a cancelled order was cancelled (`expired`, `paymentCancelled`, `discountUsedUp`). */
export async function setCancellationReason(db: Kysely<DB>, orderId: number, reason: string): Promise<void> {
  await db.updateTable('orders').set({ cancellation_reason: reason }).where('id', '=', orderId).execute();
}

/**
 * Flags a payment (`transactionId`) the provider confirmed for an order that was cancelled already: the
 * first one is kept (the one to refund first); later ones are in the deliveries and the history.
 */
export async function flagLatePayment(db: Kysely<DB>, orderId: number, transactionId: number): Promise<void> {
  await db
    .updateTable('orders')
    .set({ late_payment_transaction_id: transactionId })
    .where('id', '=', orderId)
    .where('late_payment_transaction_id', 'is', null)
    .execute();
}

/** Records the paying transaction of an order. */
export async function setPaymentTransaction(db: Kysely<DB>, orderId: number, transactionId: number): Promise<void> {
  await db.updateTable('orders').set({ payment_transaction_id: transactionId }).where('id', '=', orderId).execute();
}

/** Records the ERP sales order of an order (first one wins). */
/**
 * What the ERP hand-off of an order needs besides the order: the retailer's ERP customer id (null for a shop
 * order) and the ERP article id of each of `articleNumbers` (absent when the article never came from the ERP).
 */
export async function erpHandOffFacts(
  db: Kysely<DB>,
  orderId: number,
  articleNumbers: string[],
): Promise<{ retailerEntityId: string | null; articleIds: Map<string, string> }> {
  const row = await db.selectFrom('orders').select(['erp_retailer_entity_id']).where('id', '=', orderId).executeTakeFirstOrThrow();
  const articles =
    articleNumbers.length === 0
      ? []
      : await db
          .selectFrom('articles')
          .select(['article_number', 'erp_id'])
          .where('article_number', 'in', articleNumbers)
          .where('erp_id', 'is not', null)
          .execute();
  return { retailerEntityId: row.erp_retailer_entity_id, articleIds: new Map(articles.map((a) => [a.article_number, a.erp_id!])) };
}

export async function setErpSalesOrder(db: Kysely<DB>, orderId: number, salesOrderId: string): Promise<void> {
  await db.updateTable('orders').set({ erp_sales_order_id: salesOrderId }).where('id', '=', orderId).where('erp_sales_order_id', 'is', null).execute();
}

/**
 * Gives back the discount code uses of a cancelled order: each code whose use the order still holds (not
 * released by the short hold already) counts one down, and the redemption rows go. Returns how many codes were
 * released. Run in the cancelling transaction.
 */
export async function releaseRedemptions(db: Kysely<DB>, orderId: number): Promise<number> {
  const r = await sql`
    with gone as (delete from discount_redemptions where order_id = ${orderId} returning code_id, released_at)
    update discount_codes c set redemptions = c.redemptions - 1 from gone where c.id = gone.code_id and gone.released_at is null`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

/**
 * Records a payment webhook delivery as `queued`, or, when a delivery of the same transaction id is still
 * `queued` (its re-fetch not started), whatever status it claims, counts it as a repeat of that one (unique
 * index `payment_deliveries_pending_idx`, so concurrent repeats merge too). Returns the delivery's id, whether
 * it is new (only a new one needs a job) and whether a delivery of the transaction not queued any more (its
 * re-fetch started or done) was received within the last `recentMs` ms.
 */
export async function insertDelivery(
  db: Kysely<DB>,
  d: { contentType: string | null; transactionId: number | null; claimedStatus: string | null },
  recentMs: number,
): Promise<{ id: number; isNew: boolean; fetchedRecently: boolean }> {
  const r = await sql<{ id: number; is_new: boolean; fetched_recently: boolean }>`
    with ins as (
      insert into payment_deliveries (content_type, transaction_id, claimed_status, outcome)
      values (${d.contentType}, ${d.transactionId}, ${d.claimedStatus}, 'queued')
      on conflict (transaction_id) where outcome = 'queued'
      do update set repeats = payment_deliveries.repeats + 1
      returning id, (xmax = 0) as is_new)
    select ins.id, ins.is_new, exists (
      select 1 from payment_deliveries p
       where p.transaction_id = ${d.transactionId} and p.outcome <> 'queued'
         and p.received_at > now() - make_interval(secs => ${recentMs / 1000})) as fetched_recently
      from ins`.execute(db);
  const row = r.rows[0];
  return { id: Number(row.id), isNew: row.is_new, fetchedRecently: row.fetched_recently };
}

/** Whether a payment webhook delivery of transaction `transactionId` has ever led to an order (a known transaction). */
export async function isKnownTransaction(db: Kysely<DB>, transactionId: number): Promise<boolean> {
  const r = await sql<{ known: boolean }>`
    select exists (select 1 from payment_deliveries where transaction_id = ${transactionId} and order_id is not null) as known`.execute(db);
  return r.rows[0].known;
}

/** Marks a delivery's re-fetch as started: later deliveries of the same transaction and status are recorded anew. */
export async function markDeliveryFetching(db: Kysely<DB>, id: number): Promise<void> {
  await db.updateTable('payment_deliveries').set({ outcome: 'fetching' }).where('id', '=', id).where('outcome', '=', 'queued').execute();
}

/**
 * Deletes up to `limit` deliveries received before `cutoff` whose processing ended, and as many finished
 * `payment-status` jobs sent before it (skip locked: concurrent purges share the work). Returns the number
 * of deliveries deleted.
 */
export async function purgeDeliveries(db: Kysely<DB>, cutoff: Date, limit: number): Promise<number> {
  const r = await sql<{ n: number }>`
    with gone as (
      delete from payment_deliveries where id in (
        select id from payment_deliveries where received_at < ${cutoff} and outcome not in ('queued', 'fetching')
        order by received_at limit ${limit} for update skip locked)
      returning 1),
    jobs as (
      delete from outbox_messages where id in (
        select id from outbox_messages where kind = 'payment-status' and sent_at < ${cutoff}
        order by sent_at limit ${limit} for update skip locked))
    select count(*)::int as n from gone`.execute(db);
  return r.rows[0]?.n ?? 0;
}

/** Stores what a delivery led to. */
export async function setDeliveryOutcome(
  db: Kysely<DB>,
  id: number,
  o: { providerStatus: string | null; orderId: number | null; outcome: string },
): Promise<void> {
  await db.updateTable('payment_deliveries').set({ provider_status: o.providerStatus, order_id: o.orderId, outcome: o.outcome }).where('id', '=', id).execute();
}

/**
 * Claims the POST of order `orderId`'s ERP sales order for this caller: true when no POST was started within
 * the last `settleMs` (then now is recorded), false when one was (it may still be in weclapp's queue). One
 * conditional update, so of concurrent callers (any instance) exactly one wins.
 */
export async function claimErpCreate(db: Kysely<DB>, orderId: number, settleMs: number): Promise<boolean> {
  const now = new Date();
  const r = await db
    .updateTable('orders')
    .set({ erp_create_started_at: now })
    .where('id', '=', orderId)
    .where((eb) => eb.or([eb('erp_create_started_at', 'is', null), eb('erp_create_started_at', '<', new Date(now.getTime() - settleMs))]))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Gives the claim of {@link claimErpCreate} back (the ERP refused the POST for certain, so it did not create anything). */
export async function releaseErpCreate(db: Kysely<DB>, orderId: number): Promise<void> {
  await db.updateTable('orders').set({ erp_create_started_at: null }).where('id', '=', orderId).execute();
}

/** Puts order `orderId` on hold (no expiry) if it still awaits payment; true when it was not on hold before. */
export async function holdForPayment(db: Kysely<DB>, orderId: number): Promise<boolean> {
  const r = await db
    .updateTable('orders')
    .set({ payment_on_hold_at: new Date() })
    .where('id', '=', orderId)
    .where('state', '=', 'pending_payment')
    .where('payment_on_hold_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
