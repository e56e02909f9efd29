/**
 * Handlers of discount codes and orders (ordering spec §4.3 `createDiscountCodes`,
 * `validateDiscountCodes`, `createShopOrder`; §4.2 `createOrder`). Thin: requests are mapped onto the
 * one order pipeline (`orders.service.ts`), whose field names in errors follow each operation's body.
 * `createQuotationForSubscription` belongs to the ERP work and is not registered here (501 until then).
 */
import { addFieldError, principalOf, validationError, type Handlers } from '@sports-timing/shared';
import type { Principal } from '../auth/principal';
import { effectiveUserGroup } from '../catalog/user-groups';
import type { OrderingDeps } from '../context';
import { createDiscountCodes, validateDiscountCodes } from '../discounts/discounts.service';
import type { components, operations } from '../generated/openapi';
import { CARD_NUMBER_KEY } from '../orders/cart';
import { callerOf } from '../orders/idempotency';
import type { AddressPaths, OrderAddress, OrderInput, OrderItemInput } from '../orders/order.types';
import { placeCardOrder, placeShopOrder } from '../orders/orders.service';
import { bulkUpdateCardOrderItems } from '../orders/card-items.service';
import { requestCaller } from './caller';
import { identityOf } from '../identity/identity';
import { orderLimitsOf } from '../orders/order-limits';

type Schemas = components['schemas'];

/** Most cards one card order may hold (each card is an order item with its own number). */
const MAX_CARDS_PER_CARD_ORDER = 1000;

function shopItem(it: Schemas['NewShopOrderItemDTO'], path: string, lineNo: number): OrderItemInput {
  return {
    articleNumber: it.articleNumber,
    quantity: it.quantity,
    configuration: { ...(it.configuration ?? {}) },
    subitems: (it.subitems ?? []).map((s, j) => shopItem(s, `${path}.subitems[${j}]`, lineNo)),
    articleBomItemOid: it.articleBomItemOid ?? 0,
    lineNo,
    paths: { item: path, articleNumber: `${path}.articleNumber`, cardNumber: `${path}.configuration.${CARD_NUMBER_KEY}` },
    assignRandomCardNumber: false,
  };
}

/** The cart of a shop request (`orderItems`) as pipeline items. */
function shopItems(items: readonly Schemas['NewShopOrderItemDTO'][]): OrderItemInput[] {
  return items.map((it, i) => shopItem(it, `orderItems[${i}]`, i));
}

function shopAddress(a: Schemas['AddressDTO']): OrderAddress {
  return {
    firstName: a.firstName ?? null,
    lastName: a.lastName ?? null,
    organisation: a.organisation ?? null,
    address1: a.address1,
    address2: a.address2 ?? null,
    zip: a.zip ?? null,
    city: a.city,
    state: a.state ?? null,
    countryCode: a.countryCode,
    phoneNumber: a.phoneNumber ?? null,
  };
}

const shopAddressPaths = (prefix: string): AddressPaths => ({
  firstName: `${prefix}.firstName`,
  organisation: `${prefix}.organisation`,
  countryCode: `${prefix}.countryCode`,
  phoneNumber: `${prefix}.phoneNumber`,
});

/** A shop order request (`NewShopOrderDTO`) as pipeline input. */
export function shopOrderInput(body: Schemas['NewShopOrderDTO']): OrderInput {
  return {
    source: 'shop',
    contact: { ...body.contact, emailOptIn: body.contact.emailOptIn ?? false, culture: body.contact.culture ?? 'en' },
    shippingAddress: shopAddress(body.shippingAddress),
    billingAddress: body.billingAddress ? shopAddress(body.billingAddress) : null,
    billingAddressIsSameAsShippingAddress: body.billingAddressIsSameAsShippingAddress,
    items: shopItems(body.orderItems),
    discountCodes: body.discountCodes ?? [],
    retailerCustomerOrderReference: body.retailerCustomerOrderReference ?? null,
    notes: body.notes ?? null,
    paths: {
      shippingAddress: shopAddressPaths('shippingAddress'),
      billingAddress: shopAddressPaths('billingAddress'),
      billingAddressField: 'billingAddress',
      discountCodes: 'discountCodes',
      items: 'orderItems',
    },
  };
}

function cardOrderAddress(a: Schemas['Address'], phoneNumber: string | null): OrderAddress {
  return {
    firstName: a.firstName,
    lastName: a.lastName,
    organisation: a.club ?? null,
    address1: a.address1,
    address2: a.address2 ?? null,
    zip: a.zip ?? null,
    city: a.city,
    state: a.state ?? null,
    countryCode: a.country.toUpperCase(),
    phoneNumber,
  };
}

const cardAddressPaths = (prefix: string, phone: string): AddressPaths => ({
  firstName: `${prefix}.firstName`,
  organisation: `${prefix}.club`,
  countryCode: `${prefix}.country`,
  phoneNumber: phone,
});

/**
 * A card order request (`OrderRequest`, §4.2) as pipeline input: each line becomes `quantity` items of
 * quantity 1 with the line's configuration plus its requested card number, or a random free number to
 * be claimed. ApiError 400 when `cardNumbers` does not hold `quantity` numbers, the configuration names
 * a card number itself, or the order holds more than {@link MAX_CARDS_PER_CARD_ORDER} cards.
 */
function cardOrderInput(body: Schemas['OrderRequest']): OrderInput {
  const errors: Record<string, string[]> = {};
  const add = (f: string, m: string) => addFieldError(errors, f, m);
  const items: OrderItemInput[] = [];
  body.items.forEach((line, i) => {
    const path = `items[${i}]`;
    const configuration = { ...(line.configuration ?? {}) };
    if (configuration[CARD_NUMBER_KEY] !== undefined) add(`${path}.configuration.${CARD_NUMBER_KEY}`, 'Give card numbers in cardNumbers.');
    delete configuration[CARD_NUMBER_KEY];
    if (line.cardNumbers && line.cardNumbers.length !== line.quantity) add(`${path}.cardNumbers`, `must hold exactly ${line.quantity} card numbers (the quantity).`);
    for (let k = 0; k < line.quantity; k++) {
      const n = line.cardNumbers?.[k];
      items.push({
        articleNumber: line.productId,
        quantity: 1,
        configuration: n === undefined ? { ...configuration } : { ...configuration, [CARD_NUMBER_KEY]: String(n) },
        subitems: [],
        articleBomItemOid: 0,
        lineNo: i,
        paths: { item: path, articleNumber: `${path}.productId`, cardNumber: `${path}.cardNumbers` },
        assignRandomCardNumber: n === undefined,
      });
    }
  });
  if (items.length > MAX_CARDS_PER_CARD_ORDER) add('items', `A card order holds at most ${MAX_CARDS_PER_CARD_ORDER} cards.`);
  if (Object.keys(errors).length > 0) throw validationError(errors);
  const phone = body.phoneNumber ?? null;
  return {
    source: 'cardOrder',
    contact: { ...body.contact, emailOptIn: body.contact.emailOptIn ?? false, culture: body.contact.culture ?? 'en' },
    shippingAddress: cardOrderAddress(body.shippingAddress, phone),
    billingAddress: body.billingAddress ? cardOrderAddress(body.billingAddress, null) : null,
    billingAddressIsSameAsShippingAddress: body.billingAddressIsSameAsShippingAddress,
    items,
    discountCodes: body.discountCodes ?? [],
    retailerCustomerOrderReference: null,
    notes: body.notes ?? null,
    paths: {
      shippingAddress: cardAddressPaths('shippingAddress', 'phoneNumber'),
      billingAddress: cardAddressPaths('billingAddress', 'billingAddress'),
      billingAddressField: 'billingAddress',
      discountCodes: 'discountCodes',
      items: 'items',
    },
  };
}

function idempotencyKeyOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  const v = headers['idempotency-key'];
  return typeof v === 'string' ? v : undefined;
}

/** Discount-code and order handlers. */
export function ordersHandlers(ctx: OrderingDeps): Handlers<operations> {
  const db = ctx.database.db;
  const limits = orderLimitsOf(ctx, identityOf(ctx).redis);
  return {
    async createDiscountCodes(req, res) {
      res.json(await createDiscountCodes(db, req.body, callerOf(principalOf<Principal>(res))));
    },
    async validateDiscountCodes(req, res) {
      const group = effectiveUserGroup(principalOf<Principal>(res));
      res.json(await validateDiscountCodes(db, req.body.codes, shopItems(req.body.orderItems), group));
    },
    async createShopOrder(req, res) {
      const placed = await placeShopOrder(db, shopOrderInput(req.body), {
        principal: principalOf<Principal>(res),
        idempotencyKey: idempotencyKeyOf(req.headers),
        caller: requestCaller(req, res),
        limits,
        requestBody: req.body,
        paylinks: ctx.orderFlow,
      });
      res.json(placed.body);
    },
    async bulkUpdateCardOrderItems(req, res) {
      await bulkUpdateCardOrderItems(db, req.body.items, { actor: callerOf(principalOf<Principal>(res)), reason: req.body.reason ?? null });
      res.status(200).end();
    },
    async createOrder(req, res) {
      const placed = await placeCardOrder(db, cardOrderInput(req.body), {
        principal: principalOf<Principal>(res),
        idempotencyKey: idempotencyKeyOf(req.headers),
        caller: requestCaller(req, res),
        limits,
        requestBody: req.body,
        paylinks: ctx.orderFlow,
      });
      res.json(placed.body);
    },
  };
}
