/**
 * Placeholder arguments of scripts/sql/ordering.ts that several calls share: rows and messages with every
 * column the repositories' types demand, with distinct values so each `$n` of a rendered statement shows
 * which argument it carries.
 */
import type { ErpOrderQuery } from '../../services/ordering/src/erp/erp-orders.repository';
import type { NewOrderItem, NewOrderRow, OrderPageFilter } from '../../services/ordering/src/orders/orders.repository';
import type { JobClaim, NewOutboxMessage } from '../../services/ordering/src/outbox/outbox.repository';
import { PLACEHOLDER_TIME as T } from './define';

export const article = {
  article_number: 'A-100',
  erp_id: 'erp-100',
  erp_version: 'v1',
  category: 'card',
  name: '{"en":"Card"}',
  net_price_cents: 1000,
  vat_rate_percent: '19.00',
  card_type: 'siac',
  image_url: null,
};
export const bomItem = { main_article_number: 'A-100', position: 1, default_article_number: 'A-200', valid_article_numbers: ['A-200'] };
export const mail: NewOutboxMessage = { kind: 'mail', dedupeKey: 'order-1', payload: { to: 'a@example.org' } };
export const claim: JobClaim = { id: 7, attempts: 2 };
export const newOrder: NewOrderRow = {
  source: 'shop',
  state: 'created',
  payment_method: 'prepaid',
  user_group: 'public',
  created_by_kind: 'user',
  created_by_id: 3,
  erp_retailer_entity_id: null,
  contact: '{}',
  shipping_address: '{}',
  shipping_country_id: 276,
  billing_address: null,
  billing_country_id: null,
  billing_same_as_shipping: true,
  discount_codes: ['SPRING'],
  retailer_customer_order_reference: null,
  notes: null,
  currency: 'EUR',
  items_net_cents: 1000,
  discount_cents: 0,
  shipping_net_cents: 500,
  net_total_cents: 1500,
  vat_cents: 285,
  gross_total_cents: 1785,
  vat_breakdown: '[]',
  courier: 'dhl',
  created_at: T,
  updated_at: T,
};
export const newItem: NewOrderItem = {
  parent_position: null,
  line_no: 1,
  position: 1,
  article_number: 'A-100',
  article_name: 'Card',
  quantity: 1,
  configuration: {},
  article_bom_item_oid: 0,
  unit_net_price_cents: 1000,
  net_amount_cents: 1000,
  discount_net_cents: 0,
  vat_rate_percent: '19.00',
  vat_cents: 190,
  card_type: 'siac',
  card_number: null,
};
export const pageFilter: OrderPageFilter = { states: ['paid'], column: 'created_at', direction: 'desc', limit: 20, offset: 40 };
export const erpQuery: ErpOrderQuery = {
  states: ['paid'],
  customerEntityId: null,
  countryCode: null,
  searchText: null,
  page: 2,
  size: 20,
  sort: 'oid desc',
};
export const completion = { scope: 'orders', key: 'key-1', orderId: 11, status: 201, body: { id: 11 } };
