/**
 * Tables of orders, their items, state history and idempotency records. Mirrors migration 0004.
 */
import type { ColumnType, Generated } from 'kysely';

/** The contact of an order as stored (spec `ShopOrderContactDTO`). */
export interface StoredContact {
  firstName: string;
  lastName: string;
  email: string;
  emailOptIn: boolean;
  /** BCP 47 tag as sent (default `en`); the e-mail language is resolved from it. */
  culture: string;
}

/** An address as stored, without its country (kept as the internal country id beside it). */
export interface StoredAddress {
  firstName: string | null;
  lastName: string | null;
  /** Organisation (card orders: the club). */
  organisation: string | null;
  address1: string;
  address2: string | null;
  zip: string | null;
  city: string;
  state: string | null;
  /** E.164 phone number, or null. */
  phoneNumber: string | null;
}

/** Net amount and VAT of one VAT rate (spec `VatAmount`), in cents. */
export interface VatAmount {
  vatRatePercent: number;
  netCents: number;
  vatCents: number;
}

/** `orders`: one stored order with its computed totals (integer cents of `currency`). */
export interface OrdersTable {
  id: ColumnType<number, number, never>;
  /** Human-readable number, `SO-<year>-<id, 6 digits>`; also the `order_ref` of its card-number claims. */
  order_number: string;
  /** Which operation created it: `shop` (`createShopOrder`) or `cardOrder` (`createOrder`). */
  source: string;
  /** One of the spec's `OrderState` values (check constraint). */
  state: string;
  payment_method: string;
  user_group: string;
  created_by_kind: string | null;
  created_by_id: number | null;
  erp_retailer_entity_id: string | null;
  contact: ColumnType<StoredContact, string, string>;
  /** Address without its country; the country is `shipping_country_id` (ISO 3166-1 numeric). */
  shipping_address: ColumnType<StoredAddress, string, string>;
  shipping_country_id: number;
  billing_address: ColumnType<StoredAddress | null, string | null, string | null>;
  billing_country_id: number | null;
  billing_same_as_shipping: boolean;
  /** Redeemed codes, upper case, in the order they were applied. */
  discount_codes: ColumnType<string[], string[] | undefined, string[]>;
  retailer_customer_order_reference: string | null;
  notes: string | null;
  currency: string;
  items_net_cents: number;
  discount_cents: number;
  shipping_net_cents: number;
  net_total_cents: number;
  vat_cents: number;
  gross_total_cents: number;
  vat_breakdown: ColumnType<VatAmount[], string, string>;
  courier: string;
  paylink_url: ColumnType<string | null, string | null | undefined, string | null>;
  /** Paylink id at the payment provider (prepaid orders, once created). */
  paylink_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** The provider transaction that paid the order. */
  payment_transaction_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** Sales order id in the ERP system once handed off. */
  erp_sales_order_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** Why a cancelled order was cancelled: `expired` (unpaid in time), `paymentCancelled`, `discountUsedUp`; null otherwise. */
  cancellation_reason: ColumnType<string | null, string | null | undefined, string | null>;
  /** A payment confirmed after the order was cancelled (to be refunded); null when none. */
  late_payment_transaction_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** When an instance last started the POST of the order's ERP sales order; null when none is under way. */
  erp_create_started_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** When the provider reported the payment on its way (`waiting`) or a mismatching payment arrived: the order no longer expires. */
  payment_on_hold_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

/** `order_items`: main items (`parent_item_id` null, `article_bom_item_oid` 0) and their sub items. */
export interface OrderItemsTable {
  id: Generated<number>;
  order_id: number;
  parent_item_id: number | null;
  /** Index of the request line the item came from (card orders: several cards share a line). */
  line_no: number;
  /** Stable output order within the order. */
  position: number;
  article_number: string;
  /** Name in the contact's culture at order time. */
  article_name: string;
  /** Quantity; for sub items per main item. */
  quantity: number;
  configuration: ColumnType<Record<string, string>, string, string>;
  article_bom_item_oid: number;
  unit_net_price_cents: number;
  /** Net line amount before discounts (sub items: × the main item's quantity as well). */
  net_amount_cents: number;
  /** This line's share of the discounts (net cents). */
  discount_net_cents: number;
  /** VAT rate as an exact decimal string (`numeric(5,2)`). */
  vat_rate_percent: ColumnType<string, string | number, string | number>;
  /** VAT of the line on `net_amount_cents - discount_net_cents`, rounded half away from zero. */
  vat_cents: number;
  card_type: string | null;
  /** Card number claimed for this item (quantity 1), or null. */
  card_number: number | null;
}

/** `order_state_changes`: the state history of an order (the first row is the initial state). */
interface OrderStateChangesTable {
  id: Generated<number>;
  order_id: number;
  from_state: string | null;
  to_state: string;
  /** Who or what changed it: `user:<id>`, `client:<id>`, `anonymous`, `system:<component>`. */
  actor: string;
  reason: string | null;
  created_at: ColumnType<Date, Date | undefined, never>;
}

/** `idempotency_keys`: the first successful response per caller scope and `Idempotency-Key`. */
export interface IdempotencyKeysTable {
  /** `<operationId>:<caller>` with caller `user:<id>`, `client:<id>` or `anonymous`. */
  scope: string;
  key: string;
  /** SHA-256 (hex) of the canonical JSON request body. */
  request_hash: string;
  order_id: number | null;
  response_status: number | null;
  response_body: ColumnType<unknown, string | null, string | null>;
  created_at: ColumnType<Date, Date | undefined, Date>;
  expires_at: Date;
}

/** All order tables. */
export interface OrderTables {
  orders: OrdersTable;
  order_items: OrderItemsTable;
  order_state_changes: OrderStateChangesTable;
  idempotency_keys: IdempotencyKeysTable;
}
