/**
 * The named steps of placing an order (`createShopOrder`, `createOrder`, docs/decisions.md §6), run by
 * `placeOrder` (`orders.service.ts`) in this order inside one transaction: {@link validateCart} (limits,
 * addresses, cart), {@link priceOrder} (discount codes, totals), {@link persistOrder} (the order, its items and
 * first history entry), {@link reserveOrder} (code redemptions and card-number claims) and {@link enqueueOrder}
 * (confirmation e-mail, the order's jobs, the idempotency record). Any step's error rolls the whole transaction
 * back.
 */
import type { Kysely } from 'kysely';
import { addFieldError, validationError, type FieldErrors } from '@sports-timing/shared';
import type { Principal, UserGroup } from '../../auth/principal';
import type { CatalogArticle } from '../../catalog/catalog.mapper';
import { canonicalCulture, localize } from '../../culture/culture';
import type { DB } from '../../db/schema';
import { evaluateDiscountCodes, type DiscountEvaluation } from '../../discounts/discount-rules';
import { loadDiscountTerms, redeemDiscountCodes, requireAllValid } from '../../discounts/discounts.service';
import { mailEntry, outboxRows } from '../../outbox/outbox.service';
import { CARD_NUMBER_RANGES, CARD_TYPES, type CardType } from '../../siid/card-types';
import { claimCardNumbers, claimRandomCardNumbers } from '../../siid/siid.service';
import { checkAddresses, type CheckedAddresses } from './addresses';
import { buildCart, CARD_NUMBER_KEY, summarize, type CartLine, type PricedCart } from './cart';
import type { IdempotencyClaim } from './idempotency';
import { insertOutboxAndCompleteKey } from './idempotency.repository';
import { renderOrderConfirmation } from '../mail/order-confirmation.mail';
import { newOrderJobs } from '../flow/flow-jobs';
import type { OrderLimits } from './order-limits';
import { initialStateFor, type OrderAddress, type OrderInput, type OrderState, type StoredAddress, type StoredOrder } from '../order.types';
import { toStoredOrder } from '../orders.mapper';
import * as repo from '../orders.repository';
import { computeTotals, type OrderTotals } from './totals';

/** Who places the order, as the steps after validation need it. */
export interface OrderPlacement {
  input: OrderInput;
  principal: Principal | null;
  /** The effective user group of `principal` (prices, initial state, limits). */
  group: UserGroup;
  /** The history's actor (`callerOf(principal)`). */
  actor: string;
  /** `createShopOrder` or `createOrder`, for the history's reason. */
  operation: string;
  now: Date;
}

/** The checked addresses and the priced cart of a valid order. */
export interface ValidCart {
  addresses: CheckedAddresses;
  cart: PricedCart;
}

/** The discount verdicts and the totals of an order. */
export interface OrderPrice {
  evaluation: DiscountEvaluation;
  totals: OrderTotals;
}

/** `SO-<year>-<id, at least 6 digits>`, the year in UTC. @internal */
export function orderNumberFor(id: number, at: Date): string {
  return `${orderNumberPrefix(at)}${String(id).padStart(6, '0')}`;
}

/** `SO-<year>-`, the part of the order number before the id (the year in UTC); see {@link orderNumberFor}. */
function orderNumberPrefix(at: Date): string {
  return `SO-${at.getUTCFullYear()}-`;
}

function storedAddress(a: OrderAddress): StoredAddress {
  const { countryCode: _code, ...rest } = a;
  return rest;
}

/**
 * Validate cart: charges the caller's abuse limits (`limitCaller`) and checks addresses, cart and the public card
 * cap. Throws ApiError 400 with every violation, or the limits' 429.
 */
export async function validateCart(
  input: OrderInput,
  group: UserGroup,
  articles: ReadonlyMap<string, CatalogArticle>,
  limits: OrderLimits | undefined,
  limitCaller: string,
): Promise<ValidCart> {
  // Before any code is looked at: an order's verdicts on its codes cost what a `validate` request costs.
  if (limits && input.discountCodes.length > 0) await limits.chargeDiscountCheck(limitCaller);
  const errors: FieldErrors = {};
  const addresses = checkAddresses(input, errors);
  const { cart, errors: cartErrors } = buildCart(input.items, articles, group, input.paths.items);
  for (const [field, msgs] of Object.entries(cartErrors)) addFieldError(errors, field, ...msgs);
  const reservedCards = cart.lines.filter((l) => l.cardNumber !== null || l.assignRandomCardNumber).length;
  if (limits && group === 'public' && reservedCards > limits.maxCardsPerPublicOrder) {
    addFieldError(
      errors,
      input.paths.items,
      `An order holds at most ${limits.maxCardsPerPublicOrder} card numbers (ORDER_MAX_CARDS_PUBLIC) unless placed by a retailer or staff; this one has ${reservedCards}.`,
    );
  }
  if (Object.keys(errors).length > 0) throw validationError(errors, summarize(errors));
  if (limits && group === 'public') await limits.chargePublicOrder(limitCaller, reservedCards, input.contact.email);
  return { addresses, cart };
}

/** Price: the discount codes' verdicts (400, or 409 when used up) and the order's totals. */
export async function priceOrder(trx: Kysely<DB>, o: OrderPlacement, { cart, addresses }: ValidCart): Promise<OrderPrice> {
  const evaluation = evaluateDiscountCodes(
    o.input.discountCodes,
    await loadDiscountTerms(trx, o.input.discountCodes),
    cart.lines.map((l) => ({ articleNumber: l.article.articleNumber, netAmountCents: l.netAmountCents })),
    cart.currency,
    o.now,
  );
  requireAllValid(evaluation, o.input.paths.discountCodes);
  const totals = computeTotals(
    cart.lines.map((l, i) => ({ netAmountCents: l.netAmountCents, discountNetCents: evaluation.lineDiscounts[i], vatRatePercent: l.vatRatePercent })),
    addresses.courier.shippingNetCents,
  );
  return { evaluation, totals };
}

/**
 * Persist: the order with its items, totals, initial state and first history entry (id and order number
 * `orderNumberFor` come with the insert, one round trip). Requested card numbers go in with the items.
 */
export async function persistOrder(trx: Kysely<DB>, o: OrderPlacement, { cart, addresses }: ValidCart, { evaluation, totals }: OrderPrice) {
  const { input, principal, now } = o;
  const { state, paymentMethod } = initialStateFor(o.group);
  const culture = [canonicalCulture(input.contact.culture)];
  // Requested card numbers go in with the items (a claim that fails rolls everything back); drawn ones follow the claims.
  const items = cart.lines.map((l, i) => ({
    parent_position: l.parentIndex,
    line_no: l.lineNo,
    position: i,
    article_number: l.article.articleNumber,
    article_name: localize(l.article.names, culture) ?? l.article.articleNumber,
    quantity: l.quantity,
    configuration: l.cardNumber === null ? l.configuration : { ...l.configuration, [CARD_NUMBER_KEY]: String(l.cardNumber) },
    article_bom_item_oid: l.articleBomItemOid,
    unit_net_price_cents: l.unitNetPriceCents,
    net_amount_cents: l.netAmountCents,
    discount_net_cents: evaluation.lineDiscounts[i],
    vat_rate_percent: l.vatRatePercent,
    vat_cents: totals.lineVatCents[i],
    card_type: l.cardType,
    card_number: l.cardNumber,
  }));
  const inserted = await repo.insertNewOrder(
    trx,
    {
      source: input.source,
      state,
      payment_method: paymentMethod,
      user_group: o.group,
      created_by_kind: principal?.kind ?? null,
      created_by_id: principal?.id ?? null,
      erp_retailer_entity_id: principal?.erpRetailerEntityId ?? null,
      contact: JSON.stringify(input.contact),
      shipping_address: JSON.stringify(storedAddress(input.shippingAddress)),
      shipping_country_id: addresses.shippingCountryId,
      billing_address: input.billingAddress ? JSON.stringify(storedAddress(input.billingAddress)) : null,
      billing_country_id: addresses.billingCountryId,
      billing_same_as_shipping: input.billingAddressIsSameAsShippingAddress,
      discount_codes: evaluation.results.map((r) => r.normalizedCode),
      retailer_customer_order_reference: input.retailerCustomerOrderReference,
      notes: input.notes,
      currency: cart.currency,
      items_net_cents: totals.itemsNetCents,
      discount_cents: totals.discountCents,
      shipping_net_cents: totals.shippingNetCents,
      net_total_cents: totals.netTotalCents,
      vat_cents: totals.vatCents,
      gross_total_cents: totals.grossTotalCents,
      vat_breakdown: JSON.stringify(totals.vatBreakdown),
      courier: addresses.courier.id,
      created_at: now,
      updated_at: now,
    },
    orderNumberPrefix(now),
    { actor: o.actor, reason: `order placed (${o.operation})` },
    items,
  );
  return { inserted, state };
}

/** Claims the card numbers of the cart for `orderRef`; returns the number of each line (by index) or null. */
async function claimCards(trx: Kysely<DB>, lines: readonly CartLine[], orderRef: string): Promise<(number | null)[]> {
  const numbers = lines.map((l) => l.cardNumber);
  // One call per type, in the types' ascending range order: claims are taken in ascending number order
  // across the whole order, so two orders wanting overlapping numbers cannot deadlock.
  const ordered: CardType[] = [...CARD_TYPES].sort((a, b) => CARD_NUMBER_RANGES[a].first - CARD_NUMBER_RANGES[b].first);
  for (const type of ordered) {
    const wanted = lines.filter((l) => l.cardType === type && l.cardNumber !== null).map((l) => l.cardNumber as number);
    if (wanted.length > 0) await claimCardNumbers(trx, type, wanted, orderRef);
  }
  for (const type of ordered) {
    const indexes = lines.map((l, i) => (l.assignRandomCardNumber && l.cardType === type ? i : -1)).filter((i) => i >= 0);
    if (indexes.length === 0) continue;
    const drawn = await claimRandomCardNumbers(trx, type, indexes.length, orderRef);
    indexes.forEach((lineIndex, k) => (numbers[lineIndex] = drawn[k]));
  }
  return numbers;
}

/**
 * Reserve: redeems the discount codes and claims the card numbers (409 when taken) of the persisted order;
 * drawn numbers are written into their items. Returns the order as stored.
 */
export async function reserveOrder(
  trx: Kysely<DB>,
  { cart }: ValidCart,
  { evaluation }: OrderPrice,
  inserted: Awaited<ReturnType<typeof persistOrder>>['inserted'],
): Promise<StoredOrder> {
  const { id: orderId, order_number: orderNumber } = inserted.order;
  // Codes before card numbers, in every order: a fixed lock order keeps concurrent orders deadlock-free.
  await redeemDiscountCodes(trx, evaluation.results, orderId);
  const cardNumbers = await claimCards(trx, cart.lines, orderNumber);
  const drawn = cart.lines.flatMap((l, i) => (cardNumbers[i] !== l.cardNumber && cardNumbers[i] !== null ? [{ position: i, cardNumber: cardNumbers[i] }] : []));
  const changed = new Map((await repo.setDrawnCardNumbers(trx, orderId, drawn, CARD_NUMBER_KEY)).map((r) => [r.id, r]));
  const itemRows = inserted.items.map((r) => changed.get(r.id) ?? r);
  return toStoredOrder(inserted.order, itemRows);
}

/**
 * Enqueue: the confirmation e-mail, the order's jobs (`newOrderJobs` of its initial `state`) and, with a
 * `claim`, the idempotency record's reply `body`, in one statement.
 */
export async function enqueueOrder(
  trx: Kysely<DB>,
  order: StoredOrder,
  { addresses }: ValidCart,
  state: OrderState,
  claim: IdempotencyClaim | null,
  body: unknown,
): Promise<void> {
  await insertOutboxAndCompleteKey(
    trx,
    outboxRows([
      mailEntry(`order-confirmation:${order.id}`, renderOrderConfirmation(order, { courierName: addresses.courier.name })),
      ...newOrderJobs(order.id, state),
    ]),
    claim ? { scope: claim.scope, key: claim.key, orderId: order.id, status: 200, body } : null,
  );
}
