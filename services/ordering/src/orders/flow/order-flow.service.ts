/**
 * The order flow after an order is stored (docs/decisions.md §6 order states, payment provider, ERP):
 *
 * 1. Paylink (prepaid orders, `pending_payment`): the order transaction enqueues a `payment-paylink` job;
 *    right after the commit the request runs that job inline (under the job's lease, no DB transaction
 *    open during the provider call) so the answer normally carries `paylinkUrl`. When the provider is
 *    down the order is still accepted (answer without `paylinkUrl`) and the dispatchers retry the job.
 *    Once the paylink exists an e-mail with the payment link goes to the contact (the confirmation
 *    e-mail, sent at once, says that the link follows).
 * 2. Payment webhook: each delivery is recorded (`payment_deliveries`; repeats merge while the re-fetch
 *    is pending) and a `payment-status` job is enqueued; the job re-fetches the transaction from the
 *    provider (never trusting the body) and applies it (`payment-status.service.ts`).
 * 3. ERP hand-off: entering `paid` (or creating an invoice order in `received`) enqueues an
 *    `erp-sales-order` job in the same transaction; it creates the sales order (idempotent by the order
 *    number as `shopReference`), stores its id and moves the order to `transferred`.
 * 4. ERP sales order changes (the ERP webhook's `salesOrder` hook): `shipped` true → `shipped`, status
 *    `CLOSED`/`MANUALLY_CLOSED` → `shipped` then `completed`, through the state machine (repeats change nothing).
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { ApiError, type Database } from '@sports-timing/shared';
import type { OrderingConfig } from '../../config';
import type { DB } from '../../db/schema';
import { ErpError } from '../../erp/erp.client';
import type { ErpClients } from '../../erp/erp-clients';
import type { ErpSalesOrder, ErpSystem } from '../../erp/erp.types';
import { renderPaylinkMail } from '../mail/order-confirmation.mail';
import {
  enqueue,
  failReservedJob,
  mailEntry,
  outboxRows,
  PermanentJobError,
  type LaneOptions,
  type OutboxEntry,
  type OutboxHandler,
  type OutboxHandlerContext,
} from '../../outbox/outbox.service';
import { createPaymentClient, PaymentProviderError, type PaymentClient } from '../../payment/payment.client';
import type { PaymentPaylink } from '../../payment/payment.types';
import { FLOW_JOBS, type OrderJobPayload, type PaymentStatusJobPayload } from './flow-jobs';
import * as flowRepo from './order-flow.repository';
import { PAYLINK_DELETE_JOB, type PaylinkDeletePayload } from './order-expiry.service';
import { transitionOrder } from '../order-states';
import type { OrderState, StoredOrder } from '../order.types';
import { toErpSalesOrder, vatRatesOf } from './erp-sales-order';
import { findOrder } from '../orders.mapper';
import { clearOrderPaylink, insertStateChange, selectOrderState, selectPaylinkOf, setOrderPaylink } from '../orders.repository';
import { PaymentStatusProcessor } from './payment-status.service';

/** How long dispatchers leave a new order's paylink job to the request that placed the order (its reservation), ms. */
const PAYLINK_INLINE_GRACE_MS = 15_000;

/** After a failed inline paylink attempt, dispatchers retry the job after this long (ms). */
const INLINE_PAYLINK_RETRY_MS = 2_000;

/**
 * After a failed inline paylink attempt, orders skip theirs for this long (ms) and are answered at once with
 * `paylinkUrl: null`; their jobs stay with the dispatchers. Any paylink created since (by a dispatcher)
 * ends the pause early.
 */
const INLINE_PAYLINK_PAUSE_MS = 5_000;

/** The ERP system orders are handed to. */
export const ORDER_ERP_SYSTEM: ErpSystem = 'weclapp';
/** ERP customer number of all public shop orders (the buyer's address is on each sales order). */
const WEBSHOP_CUSTOMER_NUMBER = 'C-9000';

/**
 * The jobs a new order needs, to enqueue in the order transaction (`outboxRows`): its paylink (prepaid) or
 * its ERP hand-off (invoice, `received`).
 */
export function newOrderJobs(orderId: number, state: OrderState): OutboxEntry[] {
  const payload: OrderJobPayload = { orderId };
  // The request runs the paylink job itself right after the commit (reserved to it, no claim needed);
  // dispatchers take it only if that attempt fails or the process dies before it, so the two do not race.
  if (state === 'pending_payment') return [{ kind: FLOW_JOBS.paylink, dedupeKey: `order:${orderId}`, payload, reserveMs: PAYLINK_INLINE_GRACE_MS }];
  if (state === 'received') return [{ kind: FLOW_JOBS.erpSalesOrder, dedupeKey: `order:${orderId}`, payload }];
  return [];
}

/** The paylink's `description` (required by the provider, shown on the payment page): order number and amount. */
function paylinkDescription(order: StoredOrder): string {
  return `Payment of order ${order.orderNumber}: ${(order.grossTotalCents / 100).toFixed(2)} ${order.currency}`;
}

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

/** Dependencies of {@link OrderFlow}. */
export interface OrderFlowDeps {
  database: Database<DB>;
  logger: Logger;
  config: OrderingConfig;
  payment?: PaymentClient;
  erpClients: ErpClients;
}

/** The order flow's jobs and entry points; one per app. */
export class OrderFlow {
  readonly payment: PaymentClient;
  /** A client without retries for the inline paylink attempt (the outbox retries instead). */
  private readonly inlinePayment: PaymentClient;
  /** Until when (epoch ms) inline paylink attempts are skipped; see {@link createPaylinkNow}. */
  private inlinePausedUntil = 0;
  private readonly paymentStatus: PaymentStatusProcessor;

  constructor(private readonly deps: OrderFlowDeps) {
    this.payment = deps.payment ?? createPaymentClient(deps.config);
    this.paymentStatus = new PaymentStatusProcessor({ database: deps.database, logger: deps.logger, config: deps.config, payment: this.payment });
    this.inlinePayment = createPaymentClient(deps.config, { timeoutMs: 5_000, retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 } });
  }

  private get ctx(): OutboxHandlerContext {
    return { database: this.deps.database, logger: this.deps.logger };
  }

  /** The job handlers of the flow by kind. */
  handlers(): Record<string, OutboxHandler<never>> {
    return {
      [FLOW_JOBS.paylink]: (job: { payload: OrderJobPayload }) => this.ensurePaylink(job.payload.orderId, this.payment),
      [FLOW_JOBS.paymentStatus]: (job: { payload: PaymentStatusJobPayload }) => this.processPaymentStatus(job.payload.deliveryId, job.payload.transactionId),
      [FLOW_JOBS.erpSalesOrder]: (job: { payload: OrderJobPayload }) => this.handOffToErp(job.payload.orderId),
      [PAYLINK_DELETE_JOB]: (job: { payload: PaylinkDeletePayload }) => this.deleteExpiredPaylink(job.payload),
    };
  }

  /** The lane limits of the flow's job kinds (the keys of {@link handlers}), for the app's dispatchers. */
  jobLanes(): Record<string, LaneOptions> {
    // At the 60 s backoff cap, 1500 attempts keep a hand-off or paylink retrying for about a day of
    // provider or ERP outage before it is marked dead for an operator.
    return Object.fromEntries(Object.keys(this.handlers()).map((kind) => [kind, { maxAttempts: kind === FLOW_JOBS.paymentStatus ? 200 : 1500 }]));
  }

  /**
   * Right after an order committed: runs its `payment-paylink` job (reserved to this request by
   * {@link newOrderJobs}) for `order`, the order as just stored: one attempt, ≤ 5 s, so the answer can
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
  async ensurePaylink(orderId: number, client: PaymentClient = this.payment): Promise<void> {
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
    const link = await client.createPaylink({
      amountCents: order.grossTotalCents,
      currency: order.currency,
      referenceId: order.orderNumber,
      title: `Order ${order.orderNumber}`,
      description: paylinkDescription(order),
      purpose: order.orderNumber,
      email: order.contact.email,
    });
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
    const link = await this.payment.createPaylink({
      amountCents: order.grossTotalCents,
      currency: order.currency,
      referenceId: order.orderNumber,
      title: `Order ${order.orderNumber}`,
      description: paylinkDescription(order),
      purpose: order.orderNumber,
      email: order.contact.email,
    });
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
      await this.payment.deletePaylink(p.paylinkId);
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
      await this.payment.deletePaylink(paylinkId);
    } catch (err) {
      // The provider refuses to delete a paid paylink.
      if (err instanceof PaymentProviderError && err.code === 'badRequest') throw new ApiError(409, `Paylink ${paylinkId} cannot be deleted (already paid).`);
      throw err;
    }
  }

  /** `payment-status` job: see {@link PaymentStatusProcessor.process}. */
  processPaymentStatus(deliveryId: number, transactionId: number): Promise<void> {
    return this.paymentStatus.process(deliveryId, transactionId);
  }

  /**
   * `erp-sales-order` job: creates the order's sales order in the ERP (exactly once, docs/weclapp.md "Load
   * management and exactly one sales order") and moves the order `paid|received → transferred`. The sales
   * order carries what the customer pays, to the cent (`erp-sales-order.ts`). Retried while the ERP is
   * unreachable or a creation may still be in its queue; a request the ERP refuses as invalid makes the job
   * dead (visible in the outbox) instead of retrying forever.
   */
  async handOffToErp(orderId: number): Promise<void> {
    const db = this.deps.database.db;
    const order = await findOrder(db, orderId);
    if (!order) throw new PermanentJobError(`order ${orderId} does not exist`);
    if (order.state !== 'paid' && order.state !== 'received') return;
    const articleNumbers = [...new Set([...order.items.map((it) => it.articleNumber)])];
    const facts = await flowRepo.erpHandOffFacts(db, orderId, articleNumbers);
    const erp = this.deps.erpClients.client;
    const settleMs = this.deps.config.erpCreateSettleMs;
    let salesOrderId: string;
    try {
      const customerId = facts.retailerEntityId ?? (await erp.customerIdByNumber(ORDER_ERP_SYSTEM, WEBSHOP_CUSTOMER_NUMBER));
      // Articles that did not come from the ERP import (the demo catalogue) are found in the ERP by number.
      const articleIds = new Map(facts.articleIds);
      for (const n of articleNumbers.filter((x) => !articleIds.has(x))) {
        const found = await erp.findArticleByNumber(ORDER_ERP_SYSTEM, n);
        if (found) articleIds.set(n, found.id);
      }
      const shipping = order.shippingNetCents > 0 ? await erp.findArticleByNumber(ORDER_ERP_SYSTEM, this.deps.config.erpShippingArticleNumber) : null;
      if (order.shippingNetCents > 0 && !shipping)
        throw new PermanentJobError(`the ERP has no shipping article ${this.deps.config.erpShippingArticleNumber} (ERP_SHIPPING_ARTICLE_NUMBER)`);
      const taxIdByRate = new Map<number, string>();
      for (const rate of vatRatesOf(order)) taxIdByRate.set(rate, await erp.salesTaxIdByRate(ORDER_ERP_SYSTEM, rate));
      const draft = toErpSalesOrder(order, {
        customerId,
        articleIds,
        currencyId: await erp.currencyIdByCode(ORDER_ERP_SYSTEM, order.currency),
        taxIdByRate,
        shippingArticleId: shipping?.id ?? '',
      });
      const guard = { claim: () => flowRepo.claimErpCreate(db, orderId, settleMs), release: () => flowRepo.releaseErpCreate(db, orderId) };
      salesOrderId = (await erp.createSalesOrder(ORDER_ERP_SYSTEM, draft, order.orderNumber, guard)).salesOrder.id;
    } catch (err) {
      if (err instanceof ErpError && (err.code === 'badRequest' || err.code === 'configuration')) throw new PermanentJobError(err.message);
      throw err;
    }
    await db.transaction().execute(async (trx) => {
      await flowRepo.setErpSalesOrder(trx, orderId, salesOrderId);
      await transitionOrder(trx, orderId, 'transferred', {
        actor: `erp:${ORDER_ERP_SYSTEM}`,
        reason: `sales order ${salesOrderId}`,
        from: ['paid', 'received'],
      });
    });
  }

  /**
   * The ERP webhook's `salesOrder` hook: re-reads sales order `salesOrderId` and applies it
   * ({@link applySalesOrderState}). Returns the order's state after, or null when the sales order or its order
   * is unknown. Repeated calls change nothing.
   */
  async applyErpSalesOrder(system: ErpSystem, salesOrderId: string): Promise<OrderState | null> {
    const so = await this.deps.erpClients.client.getSalesOrder(system, salesOrderId);
    if (!so) return null;
    return this.applySalesOrderState(system, so);
  }

  /**
   * The periodic check for when weclapp's webhooks are silent or deactivated (docs/weclapp.md "Shipped and
   * completed"): applies every sales order changed after `modifiedAfter` (epoch ms) that belongs to an order of
   * the shop. Returns how many sales orders were read. Idempotent, so it may overlap with webhooks and with
   * other instances.
   */
  async pollErpSalesOrders(system: ErpSystem, modifiedAfter: number): Promise<number> {
    const changed = await this.deps.erpClients.client.listSalesOrdersModifiedAfter(system, modifiedAfter);
    for (const so of changed) await this.applySalesOrderState(system, so);
    return changed.length;
  }

  /**
   * Moves the order of sales order `so` (as just read) to `shipped` (its read-only `shipped` flag) or `shipped`
   * then `completed` (status `CLOSED` or `MANUALLY_CLOSED`; weclapp has no shipped status). Null when no order
   * of the shop belongs to it.
   */
  private async applySalesOrderState(system: ErpSystem, so: ErpSalesOrder): Promise<OrderState | null> {
    const db = this.deps.database.db;
    const reference = so.commission ?? null;
    const order = await flowRepo.findOrderForSalesOrder(db, so.id, reference);
    if (!order) return null;
    return db.transaction().execute(async (trx) => {
      const actor = `erp:${system}`;
      const closed = so.status === 'CLOSED' || so.status === 'MANUALLY_CLOSED';
      if (so.shipped || closed)
        await transitionOrder(trx, order.id, 'shipped', { actor, reason: `sales order ${so.id} ${so.shipped ? 'shipped' : so.status}` });
      if (closed) await transitionOrder(trx, order.id, 'completed', { actor, reason: `sales order ${so.id} ${so.status}` });
      return (await selectOrderState(trx, order.id)) as OrderState;
    });
  }
}
