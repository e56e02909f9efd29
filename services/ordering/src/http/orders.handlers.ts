/**
 * Handlers of discount codes and orders (`createDiscountCodes`,
 * `validateDiscountCodes`, `createShopOrder`, `createOrder`). Thin: requests are mapped onto the
 * one order pipeline (`orders.service.ts`), whose field names in errors follow each operation's body; the
 * card-order rules (one item per card, requested or random numbers) are in `orders/placement/card-order.ts`.
 * `createQuotationForSubscription` is handled with the ERP operations (`erp.handlers.ts`).
 */
import type { Request, Response } from 'express';
import { principalOf, specFilled, type Handlers } from '@sports-timing/shared';
import type { Principal } from '../auth/principal';
import { effectiveUserGroup } from '../catalog/user-groups';
import type { OrderingContext } from '../composition';
import { createDiscountCodes } from '../discounts/discounts.service';
import { validateDiscountCodes } from '../orders/placement/discount-check';
import type { components, operations } from '../generated/openapi';
import { CARD_NUMBER_KEY } from '../orders/placement/cart';
import { callerOf } from '../orders/placement/idempotency';
import type { AddressPaths, OrderAddress, OrderInput, OrderItemInput } from '../orders/order.types';
import { placeCardOrder, placeShopOrder, type PlaceOrderContext } from '../orders/placement/orders.service';
import { bulkUpdateCardOrderItems } from '../orders/placement/card-items.service';
import { requestCaller } from './caller';

type Schemas = components['schemas'];

function shopItem(it: Schemas['NewShopOrderItemDTO'], path: string, lineNo: number): OrderItemInput {
  return {
    articleNumber: it.articleNumber,
    quantity: it.quantity,
    configuration: { ...(it.configuration ?? {}) },
    subitems: (it.subitems ?? []).map((s, j) => shopItem(s, `${path}.subitems[${j}]`, lineNo)),
    articleBomItemOid: specFilled(it.articleBomItemOid, 'NewShopOrderItemDTO articleBomItemOid'),
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

/** A shop order request (`NewShopOrderDTO`) as pipeline input. @internal */
export function shopOrderInput(body: Schemas['NewShopOrderDTO']): OrderInput {
  return {
    source: 'shop',
    contact: { ...body.contact, emailOptIn: specFilled(body.contact.emailOptIn, 'emailOptIn'), culture: specFilled(body.contact.culture, 'culture') },
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

function idempotencyKeyOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  const v = headers['idempotency-key'];
  return typeof v === 'string' ? v : undefined;
}

/** Discount-code and order handlers. */
export function ordersHandlers(ctx: OrderingContext): Handlers<operations> {
  const db = ctx.database.db;
  const limits = ctx.services.orderLimits;
  /** Who places an order and how the request is made idempotent, alike for both order operations. */
  const placeContext = (req: Request, res: Response): PlaceOrderContext => ({
    principal: principalOf<Principal>(res),
    idempotencyKey: idempotencyKeyOf(req.headers),
    caller: requestCaller(req, res),
    limits,
    cartArticles: ctx.services.cartArticles,
    requestBody: req.body,
    paylinks: ctx.services.inlinePaylinks,
  });
  return {
    async createDiscountCodes(req, res) {
      res.json(await createDiscountCodes(db, req.body, callerOf(principalOf<Principal>(res))));
    },
    async validateDiscountCodes(req, res) {
      const group = effectiveUserGroup(principalOf<Principal>(res));
      res.json(await validateDiscountCodes(db, ctx.services.cartArticles, req.body.codes, shopItems(req.body.orderItems), group));
    },
    async createShopOrder(req, res) {
      res.json((await placeShopOrder(db, shopOrderInput(req.body), placeContext(req, res))).body);
    },
    async bulkUpdateCardOrderItems(req, res) {
      await bulkUpdateCardOrderItems(db, req.body.items, { actor: callerOf(principalOf<Principal>(res)), reason: req.body.reason ?? null });
      res.status(200).end();
    },
    async createOrder(req, res) {
      res.json((await placeCardOrder(db, req.body, placeContext(req, res))).body);
    },
  };
}
