/**
 * Unpaid orders expire (ordering README "Unpaid orders expire", spec `OrderState`): a `pending_payment`
 * order older than `ORDER_PAYMENT_EXPIRY_MINUTES` is cancelled with reason `expired`, its card numbers and
 * discount redemptions are released in the same transaction, and its paylink is deleted at the payment
 * provider by an outbox job (`payment-paylink-delete`), so the payer can no longer pay it.
 *
 * Exactly once with any number of instances: each sweep locks the due orders with `for update skip
 * locked` (concurrent sweeps take disjoint orders) and cancels through the state machine's conditional
 * update (`transitionOrder`, only from `pending_payment`), so an order a payment reached first stays paid,
 * and the paylink job is deduplicated by order. A payment confirmed after the expiry is flagged on the
 * order for a refund (`PaymentStatusProcessor.process`), never lost.
 */
import type { DatabaseWait } from '@sports-timing/shared/src/db-wait';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DB } from '../../db/schema';
import { releaseExpiredHolds } from '../../discounts/discounts.repository';
import { enqueue } from '../../outbox/outbox.service';
import { releaseCardNumbers } from '../../siid/siid.service';
import { FLOW_JOBS, type PaylinkDeletePayload } from './flow-jobs';
import * as flowRepo from './order-flow.repository';
import { transitionOrder } from '../order-states';
import { insertStateChange } from '../orders.repository';

/** Orders cancelled per sweep transaction (a sweep runs transactions until fewer are due). */
const SWEEP_BATCH = 100;

/** Reason stored with an expired order (`orders.cancellation_reason`, history `reason`). */
const EXPIRED = 'expired';

/**
 * One sweep transaction: cancels up to `limit` `pending_payment` orders created at or before
 * `now - expiryMinutes` (oldest first, skipping orders another sweep holds) as described in the module
 * doc. Returns the ids of the orders this call cancelled.
 * @internal
 */
export async function expireUnpaidOrders(db: Kysely<DB>, opts: { now: Date; expiryMinutes: number; limit?: number }): Promise<number[]> {
  const cutoff = new Date(opts.now.getTime() - opts.expiryMinutes * 60_000);
  return db.transaction().execute(async (trx) => {
    const due = await flowRepo.lockExpiredUnpaidOrders(trx, cutoff, opts.limit ?? SWEEP_BATCH);
    const cancelled: number[] = [];
    for (const o of due) {
      const r = await transitionOrder(trx, o.id, 'cancelled', {
        actor: 'system:order-expiry',
        reason: `${EXPIRED}: not paid within ${opts.expiryMinutes} minutes`,
        from: ['pending_payment'],
      });
      if (!r.changed) continue;
      await flowRepo.setCancellationReason(trx, o.id, EXPIRED);
      await releaseCardNumbers(trx, o.order_number);
      await flowRepo.releaseRedemptions(trx, o.id);
      if (o.paylink_id !== null) await enqueue<PaylinkDeletePayload>(trx, FLOW_JOBS.paylinkDelete, `order:${o.id}`, { orderId: o.id, paylinkId: o.paylink_id });
      cancelled.push(o.id);
    }
    return cancelled;
  });
}

/**
 * Ends the short discount hold (ordering README "Discount uses of unpaid orders"): the code uses of up to `limit`
 * unpaid orders without a payment on their way, created at or before `now - holdMinutes`, go back to the pool;
 * the orders stay (a later payment takes the uses back where the codes have one left, else the order is
 * cancelled for a refund: `payment-status.service.ts`) and their history says so. Exactly
 * once per use with any number of instances (`releaseExpiredHolds`). Returns the ids of the orders concerned.
 * @internal
 */
export async function releaseDiscountHolds(db: Kysely<DB>, opts: { now: Date; holdMinutes: number; limit?: number }): Promise<number[]> {
  const cutoff = new Date(opts.now.getTime() - opts.holdMinutes * 60_000);
  return db.transaction().execute(async (trx) => {
    const released = await releaseExpiredHolds(trx, cutoff, opts.limit ?? SWEEP_BATCH);
    const byOrder = new Map<number, string[]>();
    for (const r of released) byOrder.set(r.order_id, [...(byOrder.get(r.order_id) ?? []), r.code]);
    for (const [orderId, codes] of byOrder)
      await insertStateChange(trx, {
        orderId,
        from: 'pending_payment',
        to: 'pending_payment',
        actor: 'system:order-expiry',
        reason: `discount code ${codes.join(', ')}: use returned to the pool (not paid within ${opts.holdMinutes} minutes); a later payment takes it back if one is left, else the order is cancelled for a refund`,
      });
    return [...byOrder.keys()];
  });
}

/** Runs {@link expireUnpaidOrders} every `intervalMs` until stopped; one per instance (instances may overlap). */
export class OrderExpirySweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      logger: Logger;
      expiryMinutes: number;
      intervalMs: number;
      discountHoldMinutes?: number;
      now?: () => Date;
      /** A sweep failing because the database is not there yet or busy: one WARN per outage, retried next turn (README "Start-up"). */
      databaseWait?: DatabaseWait;
    },
  ) {}

  /**
   * Ends due discount holds ({@link releaseDiscountHolds}, when `discountHoldMinutes` is set), then sweeps until no
   * due order is left; returns how many orders this call cancelled.
   */
  async sweep(): Promise<number> {
    let total = 0;
    for (let more = this.deps.discountHoldMinutes !== undefined; more;) {
      const orders = await releaseDiscountHolds(this.deps.db, { now: this.deps.now?.() ?? new Date(), holdMinutes: this.deps.discountHoldMinutes! });
      more = orders.length === SWEEP_BATCH;
    }
    for (;;) {
      const ids = await expireUnpaidOrders(this.deps.db, { now: this.deps.now?.() ?? new Date(), expiryMinutes: this.deps.expiryMinutes, limit: SWEEP_BATCH });
      total += ids.length;
      if (ids.length < SWEEP_BATCH) return total;
    }
  }

  /** Starts the periodic sweep (the first one right away). */
  start(): void {
    const tick = () => {
      this.running = this.sweep()
        .then((n) => {
          this.deps.databaseWait?.succeeded();
          if (n > 0) this.deps.logger.info({ expired: n }, 'unpaid orders expired');
        })
        .catch((err: unknown) => {
          if (!this.deps.databaseWait?.failed(err)) this.deps.logger.error({ err }, 'order expiry sweep failed');
        })
        .finally(() => {
          this.running = null;
          if (this.timer !== null) this.timer = setTimeout(tick, this.deps.intervalMs);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  /** Stops the sweeps and waits for one in progress. */
  async stop(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }
}
