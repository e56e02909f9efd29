/**
 * The paylink jobs of the order flow (`flow-jobs.ts` step 1, docs/payrexx.md): the `payment-paylink` job, also run
 * inline by the request that placed the order, the `payment-paylink-delete` job of an expired order, and the
 * development operations that replace or delete an order's paylink.
 */
import type { Logger } from 'pino';
import { ApiError, type Database } from '@sports-timing/shared';
import type { OrderingConfig } from '../../config';
import type { DB } from '../../db/schema';
import { failReservedJob, mailEntry, outboxRows, PermanentJobError, type OutboxHandlerContext } from '../../outbox/outbox.service';
import { createPaymentClient, PaymentProviderError, type PaymentClient } from '../../payment/payment.client';
import type { NewPaylink, PaymentPaylink } from '../../payment/payment.types';
import { renderPaylinkMail } from '../mail/order-confirmation.mail';
import type { StoredOrder } from '../order.types';
import { findOrder } from '../orders.mapper';
import { clearOrderPaylink, insertStateChange, selectPaylinkOf, setOrderPaylink } from '../orders.repository';
import { FLOW_JOBS, type PaylinkDeletePayload } from './flow-jobs';
import * as flowRepo from './order-flow.repository';

/** After a failed inline paylink attempt, dispatchers retry the job after this long (ms). */
const INLINE_PAYLINK_RETRY_MS = 2_000;

/**
 * After a failed inline paylink attempt, orders skip theirs for this long (ms) and are answered at once with
 * `paylinkUrl: null`; their jobs stay with the dispatchers. Any paylink created since (by a dispatcher)
 * ends the pause early.
 */
const INLINE_PAYLINK_PAUSE_MS = 5_000;

/** The paylink's `description` (required by the provider, shown on the payment page): order number and amount. */
function paylinkDescription(order: StoredOrder): string {
  return `Payment of order ${order.orderNumber}: ${(order.grossTotalCents / 100).toFixed(2)} ${order.currency}`;
}

/** The paylink of an order: its gross total in cents, the order number as `referenceId` (docs/payrexx.md). */
function paylinkFor(order: StoredOrder): NewPaylink {
  return {
    amountCents: order.grossTotalCents,
    currency: order.currency,
    referenceId: order.orderNumber,
    title: `Order ${order.orderNumber}`,
    description: paylinkDescription(order),
    purpose: order.orderNumber,
    email: order.contact.email,
  };
}

/** Dependencies of {@link PaylinkJobs}. */
export interface PaylinkJobsDeps {
  database: Database<DB>;
  logger: Logger;
  /** The payment provider's settings, for the inline attempt's own client. */
  config: OrderingConfig;
  /** The app's payment provider client (with retries). */
  payment: PaymentClient;
}

/** Creates and deletes the paylinks of orders; one per app. */
export class PaylinkJobs {
  /** A client without retries for the inline paylink attempt (the outbox retries instead). */
  private readonly inlinePayment: PaymentClient;
  /** Until when (epoch ms) inline paylink attempts are skipped; see {@link createPaylinkNow}. */
  private inlinePausedUntil = 0;

  constructor(private readonly deps: PaylinkJobsDeps) {
    this.inlinePayment = createPaymentClient(deps.config, { timeoutMs: 5_000, retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 } });
  }

  private get ctx(): OutboxHandlerContext {
    return { database: this.deps.database, logger: this.deps.logger };
  }

  /**
   * Right after an order committed: runs its `payment-paylink` job (reserved to this request by
   * `newOrderJobs`) for `order`, the order as just stored: one attempt, ≤ 5 s, so the answer can
   * carry the paylink; the job is marked done with the paylink's store. Never throws; on failure the job is
   * given back to the dispatchers (retry after 2 s). While the provider is failing (an attempt failed within
   * {@link INLINE_PAYLINK_PAUSE_MS} and no paylink was created since) it does not try, so that an outage does
   * not slow every order down; the dispatchers take such a job once its reservation ends. Returns the order
   * with its paylink, else null (answer as placed).
   */
  async createPaylinkNow(order: StoredOrder): Promise<StoredOrder | null> {
    if (Date.now() < this.inlinePausedUntil || order.state !== 'pending_payment' || order.paylinkUrl !== null) return null;
    const job = { kind: FLOW_JOBS.paylink, dedupeKey: `order:${order.id}` };
    try {
      return await this.createPaylinkFor(order, this.inlinePayment, job);
    } catch (err) {
      this.inlinePausedUntil = Date.now() + INLINE_PAYLINK_PAUSE_MS;
      await failReservedJob(this.ctx, job.kind, job.dedupeKey, err, INLINE_PAYLINK_RETRY_MS);
      return null;
    }
  }

  /**
   * `payment-paylink` job: creates the paylink of a `pending_payment` order at the provider (order number
   * as `referenceId`), stores it and enqueues the payment-link e-mail. Done when the order has one or is
   * no longer awaiting payment. A crash between the provider call and the store leaves an unused paylink
   * at the provider (the client does not retry an ambiguous create); the order gets the next one.
   */
  async ensurePaylink(orderId: number, client: PaymentClient = this.deps.payment): Promise<void> {
    const order = await findOrder(this.deps.database.db, orderId);
    if (!order) throw new PermanentJobError(`order ${orderId} does not exist`);
    await this.createPaylinkFor(order, client);
  }

  /**
   * The paylink step of {@link ensurePaylink} for `order` as read (or as just stored): nothing to do unless
   * it is `pending_payment` without a paylink; else the provider call, then paylink and payment-link e-mail
   * stored in one statement (only if the order still awaits payment without a paylink; otherwise the new
   * paylink is deleted at the provider again), which also marks `completes` done (a reserved job). Returns
   * the order as it is now when it has a paylink, else null.
   */
  private async createPaylinkFor(
    order: StoredOrder,
    client: PaymentClient,
    completes: { kind: string; dedupeKey: string } | null = null,
  ): Promise<StoredOrder | null> {
    if (order.paylinkUrl !== null) return order;
    if (order.state !== 'pending_payment') return null;
    const link = await client.createPaylink(paylinkFor(order));
    // The provider answered: inline attempts need not wait any longer.
    this.inlinePausedUntil = 0;
    const [mail] = outboxRows([mailEntry(`order-paylink:${order.id}`, renderPaylinkMail(order, link.link))]);
    const updatedAt = await flowRepo.storePaylink(this.deps.database.db, order.id, link.id, link.link, mail, completes);
    if (updatedAt !== null) return { ...order, paylinkUrl: link.link, updatedAt };
    await client.deletePaylink(link.id).catch(() => undefined);
    // Someone else changed the order meanwhile (rare): answer with what it is now.
    const now = await findOrder(this.deps.database.db, order.id);
    return now?.paylinkUrl ? now : null;
  }

  /**
   * `dev/create-erp-order-paylink`: a new paylink for the order's gross total, stored on the order (an unpaid
   * previous one is deleted at the provider first). ApiError 404 unknown order, 409 wrong state or the
   * previous paylink is paid; provider failures propagate (`PaymentProviderError`, mapped by the handler).
   */
  async replaceOrderPaylink(orderId: number): Promise<PaymentPaylink> {
    const db = this.deps.database.db;
    const order = await findOrder(db, orderId);
    if (!order) throw new ApiError(404, `Order ${orderId} does not exist.`);
    if (order.state !== 'pending_payment' && order.state !== 'received')
      throw new ApiError(409, `Order ${order.orderNumber} is ${order.state}; a paylink needs pending_payment or received.`);
    const row = await selectPaylinkOf(db, orderId);
    if (row && row.paylink_id !== null) await this.deleteAtProvider(row.paylink_id);
    const link = await this.deps.payment.createPaylink(paylinkFor(order));
    await setOrderPaylink(db, orderId, link.id, link.link);
    return link;
  }

  /**
   * `payment-paylink-delete` job (an expired order, `order-expiry.service.ts`): deletes the paylink at the
   * provider so it can no longer be paid. Done when deleted or unknown there; a paylink the provider
   * refuses to delete was paid meanwhile: its webhook flags the payment for a refund, so the job ends
   * (recorded in the order's history). Other provider errors are retried.
   */
  async deleteExpiredPaylink(p: PaylinkDeletePayload): Promise<void> {
    try {
      await this.deps.payment.deletePaylink(p.paylinkId);
    } catch (err) {
      if (!(err instanceof PaymentProviderError) || err.code !== 'badRequest') throw err;
      await insertStateChange(this.deps.database.db, {
        orderId: p.orderId,
        from: 'cancelled',
        to: 'cancelled',
        actor: 'system:order-expiry',
        reason: `paylink ${p.paylinkId} could not be deleted (paid at the provider?): ${err.message}`,
      });
    }
  }

  /** `dev/delete-erp-order-paylink`: deletes the order's paylink at the provider and on the order. 404 / 409 as documented. */
  async deleteOrderPaylink(orderId: number): Promise<void> {
    const db = this.deps.database.db;
    const row = await selectPaylinkOf(db, orderId);
    if (!row) throw new ApiError(404, `Order ${orderId} does not exist.`);
    if (row.paylink_id === null) throw new ApiError(404, `Order ${row.order_number} has no paylink.`);
    await this.deleteAtProvider(row.paylink_id);
    await clearOrderPaylink(db, orderId, row.paylink_id);
  }

  private async deleteAtProvider(paylinkId: number): Promise<void> {
    try {
      await this.deps.payment.deletePaylink(paylinkId);
    } catch (err) {
      // The provider refuses to delete a paid paylink.
      if (err instanceof PaymentProviderError && err.code === 'badRequest') throw new ApiError(409, `Paylink ${paylinkId} cannot be deleted (already paid).`);
      throw err;
    }
  }
}
