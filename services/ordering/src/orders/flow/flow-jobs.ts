/**
 * The order flow after an order is stored (docs/decisions.md §6 order states, payment provider, ERP): its job kinds
 * and payloads, the jobs a new order starts with and the lane limits of the kinds. Each kind has one handler, which
 * the composition root registers (`composition.ts`):
 *
 * 1. Paylink (prepaid orders, `pending_payment`): the order transaction enqueues a `payment-paylink` job;
 *    right after the commit the request runs that job inline (under the job's lease, no DB transaction
 *    open during the provider call) so the answer normally carries `paylinkUrl`. When the provider is
 *    down the order is still accepted (answer without `paylinkUrl`) and the dispatchers retry the job.
 *    Once the paylink exists an e-mail with the payment link goes to the contact (the confirmation
 *    e-mail, sent at once, says that the link follows). `payment-paylink-delete` deletes the paylink of an
 *    expired order (`order-expiry.service.ts`). Both: `paylink-jobs.ts`.
 * 2. Payment webhook: each delivery is recorded (`payment_deliveries`; repeats merge while the re-fetch
 *    is pending) and a `payment-status` job is enqueued; the job re-fetches the transaction from the
 *    provider (never trusting the body) and applies it (`payment-status.service.ts`).
 * 3. ERP hand-off: entering `paid` (or creating an invoice order in `received`) enqueues an
 *    `erp-sales-order` job in the same transaction; it creates the sales order (idempotent by the order
 *    number as `shopReference`), stores its id and moves the order to `transferred` (`erp-hand-off.ts`).
 * 4. ERP sales order changes (the ERP webhook's `salesOrder` hook and the periodic check): `shipped` true →
 *    `shipped`, status `CLOSED`/`MANUALLY_CLOSED` → `shipped` then `completed`, through the state machine (repeats
 *    change nothing; `sales-order-sync.ts`, no job kind of its own).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema';
import { enqueue, type LaneOptions, type OutboxEntry } from '../../outbox/outbox.service';
import type { OrderState } from '../order.types';

/** Job kinds of the order flow. */
export const FLOW_JOBS = {
  paylink: 'payment-paylink',
  paymentStatus: 'payment-status',
  erpSalesOrder: 'erp-sales-order',
  /** Deletes the paylink of an expired order at the provider. */
  paylinkDelete: 'payment-paylink-delete',
} as const;

/** Payload of a `payment-paylink` or `erp-sales-order` job. */
export interface OrderJobPayload {
  orderId: number;
}

/** Payload of a `payment-status` job. */
export interface PaymentStatusJobPayload {
  deliveryId: number;
  transactionId: number;
}

/** Payload of a `payment-paylink-delete` job. */
export interface PaylinkDeletePayload {
  orderId: number;
  paylinkId: number;
}

/**
 * The lane limits of the flow's job kinds, for the app's dispatchers. At the 60 s backoff cap, 1500 attempts keep a
 * hand-off or paylink retrying for about a day of provider or ERP outage before it is marked dead for an operator.
 */
export const FLOW_JOB_LANES: Readonly<Record<string, LaneOptions>> = {
  [FLOW_JOBS.paylink]: { maxAttempts: 1500 },
  [FLOW_JOBS.paymentStatus]: { maxAttempts: 200 },
  [FLOW_JOBS.erpSalesOrder]: { maxAttempts: 1500 },
  [FLOW_JOBS.paylinkDelete]: { maxAttempts: 1500 },
};

/** How long dispatchers leave a new order's paylink job to the request that placed the order (its reservation), ms. */
const PAYLINK_INLINE_GRACE_MS = 15_000;

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

/** Enqueues the ERP hand-off of order `orderId` (deduplicated per order) in the caller's transaction. */
export async function enqueueErpHandOff(trx: Kysely<DB>, orderId: number): Promise<void> {
  await enqueue<OrderJobPayload>(trx, FLOW_JOBS.erpSalesOrder, `order:${orderId}`, { orderId });
}
