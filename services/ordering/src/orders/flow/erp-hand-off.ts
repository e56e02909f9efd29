/**
 * The ERP hand-off of the order flow (`flow-jobs.ts` step 3, docs/weclapp.md "Load management and exactly one sales
 * order"): the `erp-sales-order` job turns a paid (or invoice) order into one sales order in the ERP.
 */
import type { Database } from '@sports-timing/shared';
import type { OrderingConfig } from '../../config';
import type { DB } from '../../db/schema';
import { ErpError } from '../../erp/erp.client';
import type { ErpClients } from '../../erp/erp-clients';
import type { ErpSystem } from '../../erp/erp.types';
import { PermanentJobError } from '../../outbox/outbox.service';
import { transitionOrder } from '../order-states';
import { findOrder } from '../orders.mapper';
import { toErpSalesOrder, vatRatesOf } from './erp-sales-order';
import * as flowRepo from './order-flow.repository';

/** The ERP system orders are handed to. */
export const ORDER_ERP_SYSTEM: ErpSystem = 'weclapp';
/** ERP customer number of all public shop orders (the buyer's address is on each sales order). */
const WEBSHOP_CUSTOMER_NUMBER = 'C-9000';

/** Dependencies of {@link ErpHandOff}. */
export interface ErpHandOffDeps {
  database: Database<DB>;
  config: Pick<OrderingConfig, 'erpCreateSettleMs' | 'erpShippingArticleNumber'>;
  erpClients: ErpClients;
}

/** Runs `erp-sales-order` jobs; one per app. */
export class ErpHandOff {
  constructor(private readonly deps: ErpHandOffDeps) {}

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
}
