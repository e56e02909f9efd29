/**
 * SQL of an order's payments and refunds (docs/payrexx.md "Payments of an order", "Refunds"): confirmed
 * charges recorded once per provider transaction (`payment_receipts`), refunds once per refund transaction
 * (`payment_refunds`). Callers pass their transaction; each writer locks the order row first, so concurrent
 * webhooks of one order add up one after the other.
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema';

/** The order row as the payment books need it, locked for the caller's transaction; undefined when gone. */
export async function lockOrderForPayment(
  trx: Kysely<DB>,
  orderId: number,
): Promise<{ state: string; gross_total_cents: number; currency: string; payment_transaction_id: number | null } | undefined> {
  return trx
    .selectFrom('orders')
    .select(['state', 'gross_total_cents', 'currency', 'payment_transaction_id'])
    .where('id', '=', orderId)
    .forUpdate()
    .executeTakeFirst();
}

/** Sum (cents) of the confirmed charges recorded for order `orderId`. */
async function receivedTotal(trx: Kysely<DB>, orderId: number): Promise<number> {
  const r = await trx
    .selectFrom('payment_receipts')
    .select(sql<string>`coalesce(sum(amount_cents), 0)`.as('total'))
    .where('order_id', '=', orderId)
    .executeTakeFirstOrThrow();
  return Number(r.total);
}

/**
 * Records confirmed charge `receipt` of order `orderId` once (primary key = its transaction id; the order row
 * must be locked by the caller, {@link lockOrderForPayment}). Returns whether it was new and the order's
 * received total (cents) after.
 */
export async function recordReceipt(
  trx: Kysely<DB>,
  receipt: { orderId: number; transactionId: number; amountCents: number; currency: string; mode: string | null },
): Promise<{ isNew: boolean; totalCents: number }> {
  const inserted = await trx
    .insertInto('payment_receipts')
    .values({
      transaction_id: receipt.transactionId,
      order_id: receipt.orderId,
      amount_cents: receipt.amountCents,
      currency: receipt.currency,
      mode: receipt.mode,
    })
    .onConflict((oc) => oc.column('transaction_id').doNothing())
    .returning('transaction_id')
    .executeTakeFirst();
  return { isNew: inserted !== undefined, totalCents: await receivedTotal(trx, receipt.orderId) };
}

/** Whether transaction `transactionId` is a recorded charge of order `orderId`. */
export async function isReceiptOf(trx: Kysely<DB>, orderId: number, transactionId: number): Promise<boolean> {
  const r = await trx
    .selectFrom('payment_receipts')
    .select('transaction_id')
    .where('order_id', '=', orderId)
    .where('transaction_id', '=', transactionId)
    .executeTakeFirst();
  return r !== undefined;
}

/**
 * Records refund transaction `refund` of order `orderId` once (the order row locked first, so concurrent
 * refunds of one order add up). Returns whether it was new, the order's refunded total and received total
 * (cents) after, and for the refunded charge: the refunds recorded against it and the largest refunded total
 * the provider reported on them (`invoice.refundedAmount`; null when it reported none).
 */
export async function recordRefund(
  trx: Kysely<DB>,
  refund: {
    orderId: number;
    transactionId: number;
    originalTransactionId: number;
    amountCents: number;
    currency: string;
    status: string;
    reportedRefundedCents: number | null;
  },
): Promise<{ isNew: boolean; totalCents: number; receivedCents: number; chargeRefundedCents: number; chargeReportedCents: number | null }> {
  await trx.selectFrom('orders').select('id').where('id', '=', refund.orderId).forUpdate().execute();
  const inserted = await trx
    .insertInto('payment_refunds')
    .values({
      transaction_id: refund.transactionId,
      order_id: refund.orderId,
      original_transaction_id: refund.originalTransactionId,
      amount_cents: refund.amountCents,
      currency: refund.currency,
      status: refund.status,
      reported_refunded_cents: refund.reportedRefundedCents,
    })
    .onConflict((oc) => oc.column('transaction_id').doNothing())
    .returning('transaction_id')
    .executeTakeFirst();
  const t = await sql<{ total: string; charge: string; reported: string | null }>`
    select coalesce(sum(amount_cents), 0) as total,
           coalesce(sum(amount_cents) filter (where original_transaction_id = ${refund.originalTransactionId}), 0) as charge,
           max(reported_refunded_cents) filter (where original_transaction_id = ${refund.originalTransactionId}) as reported
      from payment_refunds where order_id = ${refund.orderId}`.execute(trx);
  const row = t.rows[0];
  return {
    isNew: inserted !== undefined,
    totalCents: Number(row.total),
    receivedCents: await receivedTotal(trx, refund.orderId),
    chargeRefundedCents: Number(row.charge),
    chargeReportedCents: row.reported === null ? null : Number(row.reported),
  };
}
