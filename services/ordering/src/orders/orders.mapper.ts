/**
 * Stored rows → domain order → spec DTOs: `ShopOrderDTO` (shop order) and `OrderResponse` (card
 * order, `createOrder`). Country ids are mapped back to ISO 3166-1 alpha-2 codes here. `findOrder` reads a stored
 * order as its domain order for both placing orders and the order flow.
 */
import type { Kysely } from 'kysely';
import { isUserGroup } from '../catalog/user-groups';
import { codeForCountryId } from '../countries/countries.service';
import type { components } from '../generated/openapi';
import { isCardType } from '../siid/card-types';
import { isCourierId } from './couriers';
import { ORDER_STATES, type OrderAddress, type OrderState, type StoredAddress, type StoredOrder, type StoredOrderItem } from './order.types';
import type { DB } from '../db/schema';
import { selectItems, selectOrder, type OrderItemRow, type OrderRow } from './orders.repository';

type Schemas = components['schemas'];
/** Spec `ShopOrderDTO`. */
export type ShopOrderDTO = Schemas['ShopOrderDTO'];
/** Spec `ShopOrderItemDTO`. */
type ShopOrderItemDTO = Schemas['ShopOrderItemDTO'];
/** Spec `AddressDTO`. */
type AddressDTO = Schemas['AddressDTO'];
/** Spec `OrderResponse`. */
export type OrderResponse = Schemas['OrderResponse'];
/** Spec `Address` (card order page). */
type CardOrderAddress = Schemas['Address'];
/** Spec `Courier`. */
type CourierDTO = Schemas['Courier'];

function isOrderState(s: string): s is OrderState {
  return (ORDER_STATES as readonly string[]).includes(s);
}

function withCountry(a: StoredAddress, countryId: number): OrderAddress {
  // The column is checked against ISO numeric codes on insert; '??' is the unreachable unknown id.
  return { ...a, countryCode: codeForCountryId(countryId) ?? '??' };
}

/** The domain order of its rows (items by position). */
export function toStoredOrder(row: OrderRow, items: readonly OrderItemRow[]): StoredOrder {
  return {
    id: row.id,
    orderNumber: row.order_number,
    source: row.source === 'cardOrder' ? 'cardOrder' : 'shop',
    state: isOrderState(row.state) ? row.state : 'received',
    paymentMethod: row.payment_method === 'invoice' ? 'invoice' : 'paylink',
    userGroup: isUserGroup(row.user_group) ? row.user_group : 'public',
    contact: row.contact,
    shippingAddress: withCountry(row.shipping_address, row.shipping_country_id),
    billingAddress: row.billing_address && row.billing_country_id !== null ? withCountry(row.billing_address, row.billing_country_id) : null,
    billingAddressIsSameAsShippingAddress: row.billing_same_as_shipping,
    discountCodes: row.discount_codes,
    retailerCustomerOrderReference: row.retailer_customer_order_reference,
    notes: row.notes,
    currency: row.currency,
    itemsNetCents: row.items_net_cents,
    discountCents: row.discount_cents,
    shippingNetCents: row.shipping_net_cents,
    netTotalCents: row.net_total_cents,
    vatCents: row.vat_cents,
    grossTotalCents: row.gross_total_cents,
    vatBreakdown: row.vat_breakdown,
    courier: row.courier,
    paylinkUrl: row.paylink_url,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    items: [...items]
      .sort((a, b) => a.position - b.position)
      .map((i) => ({
        id: i.id,
        parentItemId: i.parent_item_id,
        lineNo: i.line_no,
        position: i.position,
        articleNumber: i.article_number,
        articleName: i.article_name,
        quantity: i.quantity,
        configuration: i.configuration,
        articleBomItemOid: i.article_bom_item_oid,
        unitNetPriceCents: i.unit_net_price_cents,
        netAmountCents: i.net_amount_cents,
        discountNetCents: i.discount_net_cents,
        vatRatePercent: Number(i.vat_rate_percent),
        vatCents: i.vat_cents,
        cardType: isCardType(i.card_type) ? i.card_type : null,
        cardNumber: i.card_number,
      })),
  };
}

function courierOf(id: string): CourierDTO {
  return isCourierId(id) ? id : 'dhlExpress';
}

/** Spec `AddressDTO` of an address; absent optional fields are left out (the schema has no nulls). */
function toAddressDTO(a: OrderAddress): AddressDTO {
  const dto: AddressDTO = { address1: a.address1, city: a.city, countryCode: a.countryCode };
  if (a.firstName !== null) dto.firstName = a.firstName;
  if (a.lastName !== null) dto.lastName = a.lastName;
  if (a.organisation !== null) dto.organisation = a.organisation;
  if (a.address2 !== null) dto.address2 = a.address2;
  if (a.zip !== null) dto.zip = a.zip;
  if (a.state !== null) dto.state = a.state;
  if (a.phoneNumber !== null) dto.phoneNumber = a.phoneNumber;
  return dto;
}

function itemDTO(item: StoredOrderItem, subitems: ShopOrderItemDTO[]): ShopOrderItemDTO {
  return {
    oid: item.id,
    articleNumber: item.articleNumber,
    articleName: item.articleName,
    quantity: item.quantity,
    configuration: { ...item.configuration },
    subitems,
    articleBomItemOid: item.articleBomItemOid,
    unitNetPriceCents: item.unitNetPriceCents,
    netAmountCents: item.netAmountCents,
    vatRatePercent: item.vatRatePercent,
  };
}

const totals = (o: StoredOrder) => ({
  itemsNetCents: o.itemsNetCents,
  discountCents: o.discountCents,
  shippingNetCents: o.shippingNetCents,
  netTotalCents: o.netTotalCents,
  vatCents: o.vatCents,
  grossTotalCents: o.grossTotalCents,
  currency: o.currency,
  courier: courierOf(o.courier),
  vatBreakdown: o.vatBreakdown.map((v) => ({ ...v })),
  paylinkUrl: o.paylinkUrl,
});

/** Spec `ShopOrderDTO` of a stored order (sub items nested under their main item). */
export function toShopOrderDTO(o: StoredOrder): ShopOrderDTO {
  const mains = o.items.filter((i) => i.parentItemId === null);
  return {
    oid: o.id,
    orderNumber: o.orderNumber,
    state: o.state,
    paymentMethod: o.paymentMethod,
    userGroup: o.userGroup,
    contact: { ...o.contact },
    shippingAddress: toAddressDTO(o.shippingAddress),
    billingAddress: o.billingAddress ? toAddressDTO(o.billingAddress) : null,
    billingAddressIsSameAsShippingAddress: o.billingAddressIsSameAsShippingAddress,
    orderItems: mains.map((main) =>
      itemDTO(
        main,
        o.items.filter((s) => s.parentItemId === main.id).map((s) => itemDTO(s, [])),
      ),
    ),
    discountCodes: [...o.discountCodes],
    retailerCustomerOrderReference: o.retailerCustomerOrderReference,
    notes: o.notes,
    ...totals(o),
    createdAt: o.createdAt.toISOString(),
    updatedAt: o.updatedAt.toISOString(),
  };
}

/** Spec `Address` of the card order page: the organisation is the club, `fullName` is computed. */
function toCardOrderAddress(a: OrderAddress): CardOrderAddress {
  const firstName = a.firstName ?? '';
  const lastName = a.lastName ?? '';
  return {
    fullName: `${firstName} ${lastName}`.trim() || null,
    firstName,
    lastName,
    club: a.organisation,
    address1: a.address1,
    address2: a.address2,
    zip: a.zip,
    city: a.city,
    state: a.state,
    country: a.countryCode,
  };
}

/** A value the card order pipeline always sets (card lines are card articles, each with a claimed number). */
function required<T>(value: T | null, what: string): T {
  if (value === null) throw new Error(`card order item without ${what}`);
  return value;
}

/** Spec `OrderResponse` of a stored card order: the cards of a request line grouped again. */
export function toOrderResponse(o: StoredOrder): OrderResponse {
  const lines = new Map<number, StoredOrderItem[]>();
  for (const item of o.items) if (item.parentItemId === null) lines.set(item.lineNo, [...(lines.get(item.lineNo) ?? []), item]);
  return {
    oid: o.id,
    orderNumber: o.orderNumber,
    state: o.state,
    paymentMethod: o.paymentMethod,
    contact: { ...o.contact },
    shippingAddress: toCardOrderAddress(o.shippingAddress),
    billingAddress: o.billingAddress ? toCardOrderAddress(o.billingAddress) : null,
    billingAddressIsSameAsShippingAddress: o.billingAddressIsSameAsShippingAddress,
    phoneNumber: o.shippingAddress.phoneNumber,
    items: [...lines.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, cards]) => {
        const first = cards[0];
        const { cardNumber: _number, ...configuration } = first.configuration;
        return {
          productId: first.articleNumber,
          articleName: first.articleName,
          cardType: required(first.cardType, 'card type'),
          quantity: cards.length,
          cards: cards.map((c) => ({ orderItemOid: c.id, cardNumber: required(c.cardNumber, 'card number') })),
          configuration,
          unitNetPriceCents: first.unitNetPriceCents,
          netAmountCents: cards.reduce((s, c) => s + c.netAmountCents, 0),
          vatRatePercent: first.vatRatePercent,
        };
      }),
    discountCodes: [...o.discountCodes],
    notes: o.notes,
    ...totals(o),
    createdAt: o.createdAt.toISOString(),
  };
}

/** A stored order by id (items included), or null. */
export async function findOrder(db: Kysely<DB>, id: number): Promise<StoredOrder | null> {
  const row = await selectOrder(db, id);
  return row ? toStoredOrder(row, await selectItems(db, id)) : null;
}
