/**
 * SQL of the order flow (paylinks, payment deliveries, ERP hand-off, releases on cancel). Free functions
 * taking the executor first; callers pass their transaction.
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema';
import type { OrderRow } from './orders.repository';

/** Stores the paylink of an order unless it has one already; returns whether this call stored it. */
export async function setPaylink(db: Kysely<DB>, orderId: number, paylinkId: number, url: string): Promise<boolean> {
  const r = await db.updateTable('orders').set({ paylink_id: paylinkId, paylink_url: url, updated_at: new Date() }).where('id', '=', orderId).where('paylink_id', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
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
