/**
 * The payment webhook's deliveries and the `payment-status` job (`flow-jobs.ts` step 2; docs/payrexx.md "Transaction
 * statuses", "Payments of an order", "Refunds", "TEST and LIVE"): {@link recordPaymentDelivery} records a delivery
 * and enqueues its job, which re-fetches the transaction the webhook named (never trusting the body) and applies it
 * to its order.
 *
 * - `waiting`, `authorized`, `reserved`: the order is put on hold (no expiry) until the money is confirmed.
 * - `confirmed`: a `TEST` transaction of a shop running `PAYMENT_MODE=LIVE` changes nothing and is flagged; a
 *   charge in another currency holds the order and is flagged; else the charge is recorded once per transaction
 *   (`payment_receipts`) and the order's confirmed charges are summed: below the gross total the order stays
 *   on hold and is listed for an operator; at or above it the order is paid (above: flagged as excess); a charge
 *   for a cancelled order is flagged for a refund.
 * - `cancelled`/`declined`: cancels an unpaid order when its paylink is closed at the provider.
 * - refunds (their own transactions): recorded once by absolute amount and cross-checked with the provider's
 *   `invoice.refundedAmount`; `refunded` once they add up to what was received.
 *
 * Every flag is a history entry, a warning log line and an item of the operator attention list
 * (`attention.repository.ts`, metric `operator_attention_items`).
 */
import type { Kysely } from 'kysely';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import type { Logger } from 'pino';
import type { Database } from '@sports-timing/shared';
import type { OrderingConfig } from '../../config';
import type { DB } from '../../db/schema';
import { retakeReleasedUses } from '../../discounts/discounts.repository';
import { PaymentProviderError, type PaymentClient } from '../../payment/payment.client';
import type { PaymentTransaction } from '../../payment/payment.types';
import { markCardNumbersSold, releaseCardNumbers } from '../../siid/siid.service';
import { enqueue } from '../../outbox/outbox.service';
import { enqueueErpHandOff, FLOW_JOBS, type PaymentStatusJobPayload } from './flow-jobs';
import * as flowRepo from './order-flow.repository';
import { transitionOrder } from '../order-states';
import { insertStateChange, selectOrderState, type OrderRow } from '../orders.repository';
import * as books from './payment-books.repository';

/**
 * `OrderSummary.cancellationReason` of an order paid after its discount hold ended whose code had no use left:
 * its payment is flagged for a refund (`latePaymentTransactionId`).
 */
const DISCOUNT_USED_UP = 'discountUsedUp';

/** Deliveries older than the retention deleted per recorded delivery: the purge keeps pace with any intake. */
const DELIVERY_PURGE_PER_INSERT = 20;

/**
 * How long (ms) a new delivery of a transaction re-fetched less than this ago waits (docs/payrexx.md "Flood bounds"):
 * later deliveries merge into it, so one transaction costs at most one provider call per this time.
 */
const REFETCH_SPACING_MS = 10_000;

/**
 * Records a payment webhook delivery and enqueues its processing (one transaction). A delivery of a
 * transaction id whose earlier delivery's re-fetch has not started is merged into it, whatever status it claims
 * (the status is free text: no new job, no further provider call). Once the re-fetch has started a new delivery
 * gets its own job, so a forged early delivery cannot swallow the genuine one that follows; when that re-fetch
 * is recent the new job waits {@link REFETCH_SPACING_MS}. Deliveries older than `retentionDays` are purged a few
 * at a time on the way. Returns the delivery id and whether it was new.
 */
export async function recordPaymentDelivery(
  db: Kysely<DB>,
  d: { contentType: string | null; transactionId: number; claimedStatus: string | null },
  retentionDays: number,
): Promise<{ deliveryId: number; isNew: boolean }> {
  const recorded = await db.transaction().execute(async (trx) => {
    const { id: deliveryId, isNew, fetchedRecently } = await flowRepo.insertDelivery(trx, d, REFETCH_SPACING_MS);
    const payload: PaymentStatusJobPayload = { deliveryId, transactionId: d.transactionId };
    const delayMs = fetchedRecently ? REFETCH_SPACING_MS : undefined;
    if (isNew) await enqueue(trx, FLOW_JOBS.paymentStatus, `delivery:${deliveryId}`, payload, { delayMs });
    return { deliveryId, isNew };
  });
  await flowRepo.purgeDeliveries(db, new Date(Date.now() - retentionDays * 86_400_000), DELIVERY_PURGE_PER_INSERT);
  return recorded;
}

/** Dependencies of {@link PaymentStatusProcessor}. */
export interface PaymentStatusDeps {
  database: Database<DB>;
  logger: Logger;
  config: Pick<OrderingConfig, 'paymentMode' | 'paymentUnknownRefetchesPerMinute'>;
  payment: PaymentClient;
}

/** Processes `payment-status` jobs (module comment). */
export class PaymentStatusProcessor {
  /**
   * The budget of re-fetches of transactions no delivery has led to an order yet (what forged deliveries with
   * fresh ids are), per instance and minute; null when off. Each costs an authenticated provider request, whose
   * rate limit paylink creation shares (docs/payrexx.md "Flood bounds").
   */
  private readonly unknownRefetches: RateLimiterMemory | null;

  constructor(private readonly deps: PaymentStatusDeps) {
    const points = deps.config.paymentUnknownRefetchesPerMinute;
    this.unknownRefetches = points > 0 ? new RateLimiterMemory({ points, duration: 60 }) : null;
  }

  /**
   * Re-fetches transaction `transactionId` (delivery `deliveryId`) and applies what the provider says. A provider
   * error is thrown (retry), also an answer that cannot be read, and the spent budget of re-fetches of unknown
   * transactions; an unknown transaction or order is recorded and changes nothing.
   */
  async process(deliveryId: number, transactionId: number): Promise<void> {
    const db = this.deps.database.db;
    if (this.unknownRefetches && !(await flowRepo.isKnownTransaction(db, transactionId))) {
      // Over the budget the job is retried later (the outbox's backoff): a genuine first delivery waits, none is dropped.
      const spent = await this.unknownRefetches.consume('unknown').then(
        () => false,
        () => true,
      );
      if (spent) throw new Error('budget of re-fetches of unknown transactions spent (PAYMENT_UNKNOWN_REFETCHES_PER_MINUTE); retried later');
    }
    await flowRepo.markDeliveryFetching(db, deliveryId);
    let tx: PaymentTransaction | null;
    try {
      tx = await this.deps.payment.getTransaction(transactionId);
    } catch (err) {
      // An answer we could not read (`invalidResponse`) is retried like an outage, never recorded as unknown:
      // a real payment must not be dropped because one value came in an unexpected form (the job, after its
      // attempts, stays visible as dead in the outbox).
      if (err instanceof PaymentProviderError && !err.retryable && err.code !== 'unauthorized' && err.code !== 'forbidden' && err.code !== 'invalidResponse') {
        await flowRepo.setDeliveryOutcome(db, deliveryId, { providerStatus: null, orderId: null, outcome: 'unknownTransaction' });
        return;
      }
      throw err;
    }
    if (!tx) {
      await flowRepo.setDeliveryOutcome(db, deliveryId, { providerStatus: null, orderId: null, outcome: 'unknownTransaction' });
      return;
    }
    const found = tx;
    const order = await flowRepo.findOrderForPayment(db, found.paylinkId ?? null, found.referenceId ?? null);
    if (!order) {
      await flowRepo.setDeliveryOutcome(db, deliveryId, { providerStatus: found.status, orderId: null, outcome: 'unknownOrder' });
      return;
    }
    const isRefund = found.originalTransactionId !== null && found.originalTransactionId !== undefined;
    // A declined or aborted attempt does not end a paylink the payer can still use (another card, a
    // retry): the order is cancelled only when the provider says the paylink itself is no longer open.
    if ((found.status === 'cancelled' || found.status === 'declined') && !isRefund && order.paylink_id !== null) {
      const link = await this.deps.payment.getPaylink(order.paylink_id);
      // `authorized`/`reserved`: a payment holds the paylink (reserved, not captured): not cancelled either.
      if (link && (link.status === 'waiting' || link.status === 'authorized' || link.status === 'reserved')) {
        await flowRepo.setDeliveryOutcome(db, deliveryId, { providerStatus: found.status, orderId: order.id, outcome: 'noChange:paylinkOpen' });
        return;
      }
    }
    // A refund can be processed before the webhook of the charge it refunds: the charge is re-fetched and
    // recorded first, so that neither is lost.
    const charge = isRefund ? await this.unrecordedCharge(order, found.originalTransactionId!) : null;
    await db.transaction().execute(async (trx) => {
      if (charge) await this.applyCharge(trx, order, charge, `payment:${charge.id}`);
      const outcome = await this.apply(trx, order, found, isRefund);
      await flowRepo.setDeliveryOutcome(trx, deliveryId, { providerStatus: found.status, orderId: order.id, outcome });
    });
  }

  /**
   * The charge `transactionId` a refund of `order` refunds, re-fetched, when it is a confirmed charge of this order
   * (same paylink or reference) not yet recorded; else null. Provider errors propagate (the job is retried).
   */
  private async unrecordedCharge(order: OrderRow, transactionId: number): Promise<PaymentTransaction | null> {
    if (await books.isReceiptOf(this.deps.database.db, order.id, transactionId)) return null;
    const charge = await this.deps.payment.getTransaction(transactionId);
    if (!charge || charge.status !== 'confirmed' || (charge.originalTransactionId ?? null) !== null) return null;
    const ofOrder = (charge.paylinkId != null && charge.paylinkId === order.paylink_id) || charge.referenceId === order.order_number;
    return ofOrder ? charge : null;
  }

  /** Applies re-fetched transaction `found` to `order` in `trx`; returns the delivery outcome. */
  private async apply(trx: Kysely<DB>, order: OrderRow, found: PaymentTransaction, isRefund: boolean): Promise<string> {
    const actor = `payment:${found.id}`;
    const money = (c: number) => `${(c / 100).toFixed(2)} ${found.currency}`;
    if (isRefund) {
      if (found.status === 'refunded' || found.status === 'partially-refunded') return this.applyRefund(trx, order, found, actor);
      return `noChange:${order.state}`;
    }
    if (found.status === 'waiting' || found.status === 'authorized' || found.status === 'reserved') {
      // `waiting`: the payer chose a way that pays later (bank transfer, purchase on invoice). `authorized`/
      // `reserved`: reserved on the card, not yet captured. Either way the order waits, on hold, for `confirmed`.
      if (!(await flowRepo.holdForPayment(trx, order.id))) return `noChange:${order.state}`;
      const what = found.status === 'waiting' ? 'is on its way (provider status waiting)' : `${found.status}, not yet captured`;
      await insertStateChange(trx, {
        orderId: order.id,
        from: 'pending_payment',
        to: 'pending_payment',
        actor,
        reason: `payment ${found.id} of ${money(found.amountCents)} ${what}; the order is on hold and does not expire`,
      });
      return `onHold:${found.status}`;
    }
    if (found.status === 'confirmed') return this.applyCharge(trx, order, found, actor);
    if (found.status === 'cancelled' || found.status === 'declined') {
      const r = await transitionOrder(trx, order.id, 'cancelled', { actor, reason: `transaction ${found.id} ${found.status}`, from: ['pending_payment'] });
      if (!r.changed) return `noChange:${order.state}`;
      await flowRepo.setCancellationReason(trx, order.id, 'paymentCancelled');
      await releaseCardNumbers(trx, order.order_number);
      await flowRepo.releaseRedemptions(trx, order.id);
      return `applied:${r.from}->cancelled`;
    }
    if (found.status === 'refunded' && (await books.isReceiptOf(trx, order.id, found.id))) {
      // A charge of the order itself reported as refunded (no separate refund transaction seen).
      const r = await transitionOrder(trx, order.id, 'refunded', { actor, reason: `transaction ${found.id} refunded` });
      if (r.changed) return `applied:${r.from}->refunded`;
    }
    // Any other status, also one the service does not know, is recorded and changes nothing.
    return `noChange:${order.state}`;
  }

  /** A confirmed charge (module comment); returns the delivery outcome. */
  private async applyCharge(trx: Kysely<DB>, order: OrderRow, found: PaymentTransaction, actor: string): Promise<string> {
    const money = (c: number) => `${(c / 100).toFixed(2)} ${order.currency}`;
    const flag = async (reason: string, log: string, extra: Record<string, unknown> = {}) => {
      const now = await selectOrderState(trx, order.id);
      await insertStateChange(trx, { orderId: order.id, from: now, to: now, actor, reason });
      this.deps.logger.warn({ orderId: order.id, orderNumber: order.order_number, transactionId: found.id, amountCents: found.amountCents, ...extra }, log);
    };
    if (found.mode === 'TEST' && this.deps.config.paymentMode === 'LIVE') {
      // No money moved: a test instance or key reached the live shop. The order goes on as if nothing came.
      await flag(
        `payment ${found.id} of ${money(found.amountCents)} is a TEST transaction and the shop runs LIVE; it pays nothing (check the payment provider's instance and key)`,
        'TEST transaction for a live shop; ignored and flagged for an operator',
      );
      return 'testPayment:flagged';
    }
    if (found.currency !== order.currency) {
      await flowRepo.holdForPayment(trx, order.id);
      await flag(
        `payment ${found.id} of ${(found.amountCents / 100).toFixed(2)} ${found.currency} is not in the order's currency ${order.currency}; check and settle it`,
        'payment currency does not match the order; flagged for an operator',
      );
      return 'amountMismatch:flagged';
    }
    const locked = await books.lockOrderForPayment(trx, order.id);
    if (!locked) return 'unknownOrder';
    const gross = Number(locked.gross_total_cents);
    const r = await books.recordReceipt(trx, {
      orderId: order.id,
      transactionId: found.id,
      amountCents: found.amountCents,
      currency: found.currency,
      mode: found.mode ?? null,
    });
    if (!r.isNew) return 'noChange:receiptKnown';
    if (locked.state === 'cancelled') {
      // Money arrived for an order that no longer exists as such (expired, or its paylink cancelled): flagged on
      // the order for an admin to refund (`dev/get-orders` shows it), and in its history.
      await flowRepo.flagLatePayment(trx, order.id, found.id);
      await flag(
        `payment ${found.id} of ${money(found.amountCents)} confirmed after the order was cancelled; refund it`,
        'payment confirmed for a cancelled order; refund needed',
      );
      return 'latePayment:refundNeeded';
    }
    const received = `received ${money(r.totalCents)} of ${money(gross)}`;
    if (r.totalCents < gross) {
      await flowRepo.holdForPayment(trx, order.id);
      await flag(
        `part payment ${found.id} of ${money(found.amountCents)}; ${received}, ${money(gross - r.totalCents)} missing; the order is on hold until the rest arrives (or settle it)`,
        'part payment: the order is not fully paid; flagged for an operator',
        { receivedCents: r.totalCents, orderCents: gross },
      );
      return 'partialPayment:held';
    }
    // Before the order counts as paid: a use its short discount hold gave back must be taken again, or the
    // discounted price is not granted (the code's limit is never exceeded).
    const usedUp = locked.state === 'pending_payment' ? await this.retakeDiscountUses(trx, order.id) : [];
    if (usedUp.length > 0) {
      await transitionOrder(trx, order.id, 'cancelled', {
        actor,
        reason: `discount code ${usedUp.join(', ')} had no use left when this order was paid after its hold had ended; cancelled, refund payment ${found.id}`,
        from: ['pending_payment'],
      });
      await flowRepo.setCancellationReason(trx, order.id, DISCOUNT_USED_UP);
      await releaseCardNumbers(trx, order.order_number);
      await flowRepo.releaseRedemptions(trx, order.id);
      await flowRepo.flagLatePayment(trx, order.id, found.id);
      this.deps.logger.warn(
        { orderId: order.id, orderNumber: order.order_number, transactionId: found.id, codes: usedUp },
        'order paid after its discount hold ended and a code had no use left; cancelled, refund needed',
      );
      return 'discountUsedUp:refundNeeded';
    }
    const t = await transitionOrder(trx, order.id, 'paid', { actor, reason: `transaction ${found.id} confirmed; ${received}` });
    if (t.changed) {
      await flowRepo.setPaymentTransaction(trx, order.id, found.id);
      await markCardNumbersSold(trx, order.order_number);
      await enqueueErpHandOff(trx, order.id);
    }
    if (r.totalCents > gross) {
      await flag(
        `payment ${found.id} of ${money(found.amountCents)}: ${received}, ${money(r.totalCents - gross)} more than the order total; refund the excess`,
        'excess payment: more than the order total arrived; flagged for an operator',
        { receivedCents: r.totalCents, orderCents: gross },
      );
      return 'excessPayment:flagged';
    }
    return t.changed ? `applied:${t.from}->paid` : `noChange:${locked.state}`;
  }

  /**
   * An order paid after its short discount hold ended takes its released uses back where the code has one left
   * (ordering README "Discount uses of unpaid orders"). Returns the codes that had none left (another order took
   * the use meanwhile): the caller then cancels the order instead of granting the price past the code's limit.
   */
  private async retakeDiscountUses(trx: Kysely<DB>, orderId: number): Promise<string[]> {
    return (await retakeReleasedUses(trx, orderId)).filter((c) => !c.retaken).map((c) => c.code);
  }

  /**
   * A refund transaction (Payrexx: its own transaction, `originalTransactionId` = the charge, `amount` = the
   * refunded amount) of a charge of the order: recorded once by its absolute amount (the official WooCommerce
   * plugin takes the absolute value too) and compared with the provider's `invoice.refundedAmount`; when the
   * refunds add up to what was received the order becomes `refunded`, else the partial refund is written to the
   * order's history. Returns the delivery outcome. Refunds of another transaction change nothing.
   */
  private async applyRefund(trx: Kysely<DB>, order: OrderRow, refund: PaymentTransaction, actor: string): Promise<string> {
    const original = refund.originalTransactionId!;
    if (!(await books.isReceiptOf(trx, order.id, original)) && order.payment_transaction_id !== original) return 'noChange:foreignRefund';
    const amount = Math.abs(refund.amountCents);
    const reported = refund.refundedAmountCents ?? null;
    const r = await books.recordRefund(trx, {
      orderId: order.id,
      transactionId: refund.id,
      originalTransactionId: original,
      amountCents: amount,
      currency: refund.currency,
      status: refund.status,
      reportedRefundedCents: reported === null ? null : Math.abs(reported),
    });
    if (!r.isNew) return 'noChange:refundKnown';
    const money = (c: number) => `${(c / 100).toFixed(2)} ${order.currency}`;
    const paid = r.receivedCents > 0 ? r.receivedCents : Number(order.gross_total_cents);
    let outcome: string;
    const t =
      r.totalCents >= paid
        ? await transitionOrder(trx, order.id, 'refunded', {
            actor,
            reason: `transaction ${refund.id} refunded ${money(amount)} of transaction ${original}; refunded in total ${money(r.totalCents)}`,
          })
        : null;
    if (t?.changed) outcome = `applied:${t.from}->refunded`;
    else {
      const now = await selectOrderState(trx, order.id);
      const reason = `partial refund ${money(amount)} (transaction ${refund.id} of ${original}); refunded in total ${money(r.totalCents)} of ${money(paid)}`;
      await insertStateChange(trx, { orderId: order.id, from: now, to: now, actor, reason });
      outcome = `refundRecorded:${r.totalCents}`;
    }
    if (r.chargeReportedCents !== null && r.chargeReportedCents !== r.chargeRefundedCents) {
      // The provider counts another refunded total for this charge than the refunds we recorded: one may still
      // be on its way (the list entry goes once it arrives), or one was made or counted differently.
      const now = await selectOrderState(trx, order.id);
      const reason = `the provider reports ${money(r.chargeReportedCents)} refunded of transaction ${original}, the recorded refunds add up to ${money(r.chargeRefundedCents)}; check the refunds`;
      await insertStateChange(trx, { orderId: order.id, from: now, to: now, actor, reason });
      this.deps.logger.warn(
        { orderId: order.id, transactionId: original, reportedCents: r.chargeReportedCents, recordedCents: r.chargeRefundedCents },
        'refunds differ from the refunded amount the provider reports; flagged for an operator',
      );
      outcome = 'refundMismatch:flagged';
    }
    return outcome;
  }
}
