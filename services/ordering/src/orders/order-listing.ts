/**
 * Order listing of `dev/get-orders` (ordering spec §4.9, §8 paging defaults): filters by states, retailer,
 * shipping country and a case-insensitive substring search; sort from an allow-list, ties by id.
 */
import { sql, type Kysely } from 'kysely';
import { codeForCountryId, countryIdForCode } from '../countries/countries.service';
import type { DB } from '../db/schema';
import type { components } from '../generated/openapi';
import type { StoredAddress, StoredContact } from './order.types';

/** Spec `OrderPage`. */
export type OrderPage = components['schemas']['OrderPage'];
/** Spec `OrderSummary`. */
type OrderSummary = components['schemas']['OrderSummary'];

/** Filters and paging of a listing (already validated by the spec). */
export interface OrderListQuery {
  /** Comma list of states; empty → all. */
  states?: string;
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

/** `%`, `_` and `\` taken literally in an ILIKE pattern. */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** One page of orders with the number of all matching orders. */
export async function listOrders(db: Kysely<DB>, q: OrderListQuery): Promise<OrderPage> {
  const [field, direction] = q.sort.split(' ') as [keyof typeof SORT_COLUMNS, 'asc' | 'desc'];
  const column = SORT_COLUMNS[field] ?? 'id';
  const dir = direction === 'asc' ? 'asc' : 'desc';
  let base = db.selectFrom('orders');
  const states = (q.states ?? '').split(',').filter(Boolean);
  if (states.length > 0) base = base.where('state', 'in', states);
  if (q.erpRetailerEntityId) base = base.where('erp_retailer_entity_id', '=', q.erpRetailerEntityId);
  if (q.countryCode) {
    const id = countryIdForCode(q.countryCode);
    base = base.where('shipping_country_id', '=', id ?? -1);
  }
  if (q.searchText) {
    const pattern = `%${likeLiteral(q.searchText)}%`;
    base = base.where(
      sql<boolean>`(order_number ilike ${pattern} or (contact->>'firstName') || ' ' || (contact->>'lastName') ilike ${pattern}
        or contact->>'email' ilike ${pattern} or coalesce(shipping_address->>'organisation', '') ilike ${pattern}
        or coalesce(retailer_customer_order_reference, '') ilike ${pattern})`,
    );
  }
  const [{ n }, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    base
      .selectAll()
      .orderBy(column, dir)
      .orderBy('id', dir)
      .limit(q.size)
      .offset(q.page * q.size)
      .execute(),
  ]);
  return {
    page: q.page,
    size: q.size,
    totalCount: Number(n),
    items: rows.map((r) => {
      const contact = r.contact as StoredContact;
      const address = r.shipping_address as StoredAddress;
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
      };
    }),
  };
}
