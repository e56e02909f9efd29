/**
 * SQL of the order flow (paylinks, payment deliveries, ERP hand-off, releases on cancel). Free functions
 * taking the executor first; callers pass their transaction.
 */
import { sql, type Kysely } from 'kysely';
import { PREPARED } from '@sports-timing/shared';
import type { DB } from '../db/schema';
import { completeJobSql, notifyOutbox, type NewOutboxMessage } from '../outbox/outbox.repository';
import type { OrderRow } from './orders.repository';

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
      returning id)${completes ? sql`,
    completed as (${completeJobSql(completes.kind, completes.dedupeKey)})` : sql``}
    select updated_at, (select count(${notifyOutbox()}) from inserted)::int as notified from updated`.execute(db);
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

/** Records the paying transaction of an order. */
export async function setPaymentTransaction(db: Kysely<DB>, orderId: number, transactionId: number): Promise<void> {
  await db.updateTable('orders').set({ payment_transaction_id: transactionId }).where('id', '=', orderId).execute();
}

/** Records the ERP sales order of an order (first one wins). */
export async function setErpSalesOrder(db: Kysely<DB>, orderId: number, salesOrderId: string): Promise<void> {
  await db.updateTable('orders').set({ erp_sales_order_id: salesOrderId }).where('id', '=', orderId).where('erp_sales_order_id', 'is', null).execute();
}

/**
 * Gives back the discount code uses of a cancelled order: each redeemed code's counter goes down by one
 * and the redemption rows go. Returns how many codes were released. Run in the cancelling transaction.
 */
export async function releaseRedemptions(db: Kysely<DB>, orderId: number): Promise<number> {
  const r = await sql`
    with gone as (delete from discount_redemptions where order_id = ${orderId} returning code_id)
    update discount_codes c set redemptions = c.redemptions - 1 from gone where c.id = gone.code_id`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

/** Records a payment webhook delivery as `queued`; returns its id. */
export async function insertDelivery(db: Kysely<DB>, d: { contentType: string | null; transactionId: number | null; claimedStatus: string | null }): Promise<number> {
  const r = await db
    .insertInto('payment_deliveries')
    .values({ content_type: d.contentType, transaction_id: d.transactionId, claimed_status: d.claimedStatus, outcome: 'queued' })
    .returning('id')
    .executeTakeFirstOrThrow();
  return r.id;
}

/** Stores what a delivery led to. */
export async function setDeliveryOutcome(db: Kysely<DB>, id: number, o: { providerStatus: string | null; orderId: number | null; outcome: string }): Promise<void> {
  await db.updateTable('payment_deliveries').set({ provider_status: o.providerStatus, order_id: o.orderId, outcome: o.outcome }).where('id', '=', id).execute();
}
