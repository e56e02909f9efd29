/**
 * Domain types of the order pipeline (ordering spec §2.1, §2.6, §4.2 `POST /order`, §4.3 rule 7).
 * Money is always integer cents of the order's currency; `net` excludes VAT.
 */
import type { UserGroup } from '../auth/principal';
import type { components } from '../generated/openapi';
import type { CardType } from '../siid/card-types';
import type { StoredAddress, StoredContact, VatAmount } from '../db/tables/orders.tables';

/** Order states (spec `OrderState`); the transitions between them belong to the payment/ERP work. */
export type OrderState = components['schemas']['OrderState'];

/**
 * Every {@link OrderState}, in the spec's order: `satisfies` makes a state the spec adds (or drops) a type error
 * here, so the list cannot drift from the spec.
 */
const ORDER_STATE_SET = {
  pending_payment: true,
  received: true,
  paid: true,
  transferred: true,
  shipped: true,
  completed: true,
  cancelled: true,
  refunded: true,
} as const satisfies Record<OrderState, true>;
export const ORDER_STATES = Object.keys(ORDER_STATE_SET) as OrderState[];

/** How an order is paid (spec `PaymentMethod`). */
export type PaymentMethod = components['schemas']['PaymentMethod'];

/** Which operation created an order. */
type OrderSource = 'shop' | 'cardOrder';

/**
 * The initial state and payment method of a new order (docs/decisions.md §6): retailer and internal orders are on
 * invoice and start `received`; everyone else prepays through a paylink and starts `pending_payment`.
 */
export function initialStateFor(group: UserGroup): { state: OrderState; paymentMethod: PaymentMethod } {
  return group === 'public' ? { state: 'pending_payment', paymentMethod: 'paylink' } : { state: 'received', paymentMethod: 'invoice' };
}

// The shapes of JSON columns are defined with their table (db/tables/orders.tables.ts), below every domain module.
export type { StoredAddress, VatAmount } from '../db/tables/orders.tables';

/** An address as received, with its ISO 3166-1 alpha-2 country code. */
export interface OrderAddress extends StoredAddress {
  countryCode: string;
}

/**
 * Field names of the request the errors refer to, so one pipeline reports `orderItems[0].quantity` for a
 * shop order and `items[0].cardNumbers` for a card order.
 */
export interface OrderItemPaths {
  /** Path of the item itself, e.g. `orderItems[0]` or `orderItems[0].subitems[1]`. */
  item: string;
  /** Path reported for its article, e.g. `orderItems[0].articleNumber` or `items[0].productId`. */
  articleNumber: string;
  /** Path reported for its card number, e.g. `orderItems[0].configuration.cardNumber` or `items[0].cardNumbers`. */
  cardNumber: string;
}

/** One order item as requested (main item with sub items, or a sub item). */
export interface OrderItemInput {
  articleNumber: string;
  /** Quantity; for sub items per main item. */
  quantity: number;
  configuration: Record<string, string>;
  subitems: OrderItemInput[];
  /** 0 for a main item, else the BOM slot position. */
  articleBomItemOid: number;
  /** Request line the item belongs to (card orders: several cards share a line). */
  lineNo: number;
  paths: OrderItemPaths;
  /** Claim a random free number of the article's card type for this item (card orders without numbers). */
  assignRandomCardNumber: boolean;
}

/** Field names of the address fields in the request (card orders name some differently). */
export interface AddressPaths {
  firstName: string;
  organisation: string;
  countryCode: string;
  phoneNumber: string;
}

/** Everything an order is made of, independent of the operation that received it. */
export interface OrderInput {
  source: OrderSource;
  contact: StoredContact;
  shippingAddress: OrderAddress;
  billingAddress: OrderAddress | null;
  billingAddressIsSameAsShippingAddress: boolean;
  items: OrderItemInput[];
  discountCodes: string[];
  retailerCustomerOrderReference: string | null;
  notes: string | null;
  /** Request field names for errors about the addresses and codes. */
  paths: { shippingAddress: AddressPaths; billingAddress: AddressPaths; billingAddressField: string; discountCodes: string; items: string };
}

/** A stored order item with its prices (cents). */
export interface StoredOrderItem {
  id: number;
  parentItemId: number | null;
  lineNo: number;
  position: number;
  articleNumber: string;
  articleName: string;
  quantity: number;
  configuration: Record<string, string>;
  articleBomItemOid: number;
  unitNetPriceCents: number;
  netAmountCents: number;
  discountNetCents: number;
  vatRatePercent: number;
  vatCents: number;
  cardType: CardType | null;
  cardNumber: number | null;
}

/** A stored order with its items (amounts in cents of `currency`). */
export interface StoredOrder {
  id: number;
  orderNumber: string;
  source: OrderSource;
  state: OrderState;
  paymentMethod: PaymentMethod;
  userGroup: UserGroup;
  contact: StoredContact;
  shippingAddress: OrderAddress;
  billingAddress: OrderAddress | null;
  billingAddressIsSameAsShippingAddress: boolean;
  discountCodes: string[];
  retailerCustomerOrderReference: string | null;
  notes: string | null;
  currency: string;
  itemsNetCents: number;
  discountCents: number;
  shippingNetCents: number;
  netTotalCents: number;
  vatCents: number;
  grossTotalCents: number;
  vatBreakdown: VatAmount[];
  courier: string;
  paylinkUrl: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** Main items first by position; sub items follow their main item. */
  items: StoredOrderItem[];
}
