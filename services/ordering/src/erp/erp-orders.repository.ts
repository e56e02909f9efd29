/**
 * Orders with their ERP hand-off for `devGetErpOrders` (its `page`/`size` defaults: page 0, size 20, sort
 * `oid desc` by default; sort from an allow-list only). Read-only over `orders` and the order flow's
 * `erp-sales-order` outbox job (dedupe key `order:<id>`): transfer status `transferred` when the order has
 * a sales order id, `failed` when the job is dead, `pending` when a job exists, else `notDue`.
 */
import { sql, type Kysely } from 'kysely';
import { codeForCountryId, countryIdForCode } from '../countries/countries.service';
import type { DB } from '../db/schema';
import type { components } from '../generated/openapi';

/** One row of the answer (`ErpOrderSummary`). */
export type ErpOrderSummary = components['schemas']['ErpOrderSummary'];

/** Sort keys of the allow-list (spec `OrderSort`) → column. Anything else never reaches SQL. */
const SORT_COLUMNS = { oid: 'o.id', orderNumber: 'o.order_number', createdAt: 'o.created_at', grossTotalCents: 'o.gross_total_cents' } as const;

/** Filters and paging of the query (validated by the spec before). */
export interface ErpOrderQuery {
  states: readonly string[];
  customerEntityId: string | null;
  countryCode: string | null;
  searchText: string | null;
  page: number;
  size: number;
  /** `<field> <asc|desc>` from the allow-list. */
  sort: string;
}

/** One page of orders with ERP data and the total count of matches. */
export async function selectErpOrders(db: Kysely<DB>, q: ErpOrderQuery): Promise<{ items: ErpOrderSummary[]; totalCount: number }> {
  const [field, direction] = q.sort.split(' ') as [keyof typeof SORT_COLUMNS, 'asc' | 'desc'];
  const column = SORT_COLUMNS[field];
  if (!column || (direction !== 'asc' && direction !== 'desc')) throw new Error(`sort not in the allow-list: ${q.sort}`);
  let base = db
    .selectFrom('orders as o')
    .leftJoin('outbox_messages as j', (join) => join.on('j.kind', '=', 'erp-sales-order').on('j.dedupe_key', '=', sql<string>`'order:' || o.id`));
  if (q.states.length) base = base.where('o.state', 'in', q.states);
  if (q.customerEntityId) base = base.where('o.erp_retailer_entity_id', '=', q.customerEntityId);
  if (q.countryCode) base = base.where('o.shipping_country_id', '=', countryIdForCode(q.countryCode) ?? -1);
  if (q.searchText) {
    const like = `%${q.searchText.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    base = base.where((eb) =>
      eb.or([eb('o.order_number', 'ilike', like), eb(sql<string>`o.contact::text`, 'ilike', like), eb('o.erp_sales_order_id', 'ilike', like)]),
    );
  }
  const [rows, count] = await Promise.all([
    base
      .select([
        'o.id',
        'o.order_number',
        'o.state',
        'o.shipping_country_id',
        'o.erp_retailer_entity_id',
        'o.gross_total_cents',
        'o.currency',
        'o.created_at',
        'o.erp_sales_order_id',
        'j.dead_at',
        'j.sent_at',
        'j.id as job_id',
        'j.last_error',
      ])
      .orderBy(sql.ref(column), direction)
      .orderBy('o.id', direction)
      .limit(q.size)
      .offset(q.page * q.size)
      .execute(),
    base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return {
    totalCount: Number(count.n),
    items: rows.map((r) => ({
      oid: r.id,
      orderNumber: r.order_number,
      state: r.state as ErpOrderSummary['state'],
      countryCode: codeForCountryId(r.shipping_country_id) ?? '',
      customerEntityId: r.erp_retailer_entity_id,
      grossTotalCents: Number(r.gross_total_cents),
      currency: r.currency,
      createdAt: r.created_at.toISOString(),
      erpSystem: r.erp_sales_order_id ? 'weclapp' : null,
      erpSalesOrderId: r.erp_sales_order_id,
      // The order flow stores the sales order id only; its number is in the ERP.
      erpSalesOrderNumber: null,
      transferStatus: r.erp_sales_order_id ? 'transferred' : r.dead_at ? 'failed' : r.job_id !== null ? 'pending' : 'notDue',
      transferredAt: r.erp_sales_order_id && r.sent_at ? r.sent_at.toISOString() : null,
      lastTransferError: r.erp_sales_order_id ? null : (r.last_error ?? null),
    })),
  };
}
