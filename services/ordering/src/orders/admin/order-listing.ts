/**
 * Order listing of `devGetOrders` (paging defaults of its `page`/`size`): filters by states, retailer,
 * shipping country and a case-insensitive substring search; sort from an allow-list, ties by id.
 */
import type { Kysely } from 'kysely';
import { codeForCountryId, countryIdForCode } from '../../countries/countries.service';
import type { DB } from '../../db/schema';
import type { components } from '../../generated/openapi';
import type { OrderState } from '../order.types';
import { selectOrderPage } from '../orders.repository';

/** Spec `OrderPage`. */
export type OrderPage = components['schemas']['OrderPage'];
/** Spec `OrderSummary`. */
type OrderSummary = components['schemas']['OrderSummary'];

/** Filters and paging of a listing (already validated by the spec). */
export interface OrderListQuery {
  /** Orders in any of these states (`OrderStatesFilter`); empty or absent → all. */
  states?: readonly OrderState[];
  erpRetailerEntityId?: string;
  /** ISO 3166-1 alpha-2; empty → all. */
  countryCode?: string;
  searchText?: string;
  page: number;
  size: number;
  /** One of the spec's `OrderSort` values. */
  sort: string;
}

const SORT_COLUMNS = { oid: 'id', orderNumber: 'order_number', createdAt: 'created_at', grossTotalCents: 'gross_total_cents' } as const;

/** One page of orders with the number of all matching orders. */
export async function listOrders(db: Kysely<DB>, q: OrderListQuery): Promise<OrderPage> {
  const [field, direction] = q.sort.split(' ') as [keyof typeof SORT_COLUMNS, 'asc' | 'desc'];
  const column = SORT_COLUMNS[field] ?? 'id';
  const dir = direction === 'asc' ? 'asc' : 'desc';
  const { total, rows } = await selectOrderPage(db, {
    states: q.states ?? [],
    erpRetailerEntityId: q.erpRetailerEntityId || undefined,
    shippingCountryId: q.countryCode ? (countryIdForCode(q.countryCode) ?? null) : undefined,
    searchText: q.searchText || undefined,
    column,
    direction: dir,
    limit: q.size,
    offset: q.page * q.size,
  });
  return {
    page: q.page,
    size: q.size,
    totalCount: total,
    items: rows.map((r) => {
      const contact = r.contact;
      const address = r.shipping_address;
      return {
        oid: r.id,
        orderNumber: r.order_number,
        source: r.source as OrderSummary['source'],
        state: r.state as OrderSummary['state'],
        paymentMethod: r.payment_method as OrderSummary['paymentMethod'],
        userGroup: r.user_group as OrderSummary['userGroup'],
        contactName: `${contact.firstName} ${contact.lastName}`,
        contactEmail: contact.email,
        organisation: address.organisation ?? null,
        countryCode: codeForCountryId(r.shipping_country_id) ?? '',
        erpRetailerEntityId: r.erp_retailer_entity_id,
        netTotalCents: Number(r.net_total_cents),
        grossTotalCents: Number(r.gross_total_cents),
        currency: r.currency,
        createdAt: r.created_at.toISOString(),
        updatedAt: r.updated_at.toISOString(),
        cancellationReason: r.cancellation_reason as OrderSummary['cancellationReason'],
        latePaymentTransactionId: r.late_payment_transaction_id,
        paymentOnHoldAt: r.payment_on_hold_at?.toISOString() ?? null,
      };
    }),
  };
}
