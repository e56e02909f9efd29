/**
 * Job kinds and payloads of the order flow (`order-flow.service.ts` module comment), shared by the flow and its
 * payment part (`payment-status.service.ts`).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema';
import { enqueue } from '../../outbox/outbox.service';

/** Job kinds of the order flow. */
export const FLOW_JOBS = { paylink: 'payment-paylink', paymentStatus: 'payment-status', erpSalesOrder: 'erp-sales-order' } as const;

/** Payload of a `payment-paylink` or `erp-sales-order` job. */
export interface OrderJobPayload {
  orderId: number;
}

/** Payload of a `payment-status` job. */
export interface PaymentStatusJobPayload {
  deliveryId: number;
  transactionId: number;
}

/** Enqueues the ERP hand-off of order `orderId` (deduplicated per order) in the caller's transaction. */
export async function enqueueErpHandOff(trx: Kysely<DB>, orderId: number): Promise<void> {
  await enqueue<OrderJobPayload>(trx, FLOW_JOBS.erpSalesOrder, `order:${orderId}`, { orderId });
}
