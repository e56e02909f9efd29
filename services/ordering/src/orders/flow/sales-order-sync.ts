/**
 * The sales-order sync of the order flow (`flow-jobs.ts` step 4, docs/weclapp.md "Shipped and completed"): moves a
 * shop order along as its ERP sales order ships and closes, from the ERP webhook's `salesOrder` hook and from the
 * periodic check (`erp-sales-order-poller.ts`).
 */
import type { Database } from '@sports-timing/shared';
import type { DB } from '../../db/schema';
import type { ErpClients } from '../../erp/erp-clients';
import type { ErpSalesOrder, ErpSystem } from '../../erp/erp.types';
import { transitionOrder } from '../order-states';
import type { OrderState } from '../order.types';
import { selectOrderState } from '../orders.repository';
import * as flowRepo from './order-flow.repository';

/** Dependencies of {@link SalesOrderSync}. */
export interface SalesOrderSyncDeps {
  database: Database<DB>;
  erpClients: ErpClients;
}

/** Applies ERP sales-order changes to the shop's orders; one per app. */
export class SalesOrderSync {
  constructor(private readonly deps: SalesOrderSyncDeps) {}

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
