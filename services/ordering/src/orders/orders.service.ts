/**
 * The order pipeline (ordering spec §4.3 `createShopOrder`, §4.2 `createOrder`, docs/decisions.md §6): one
 * transaction that checks addresses and cart, redeems discount codes, claims card numbers, stores the
 * order with its items, totals and initial state, and enqueues the confirmation e-mail in the outbox.
 * Any failure rolls everything back, so a rejected order leaves no trace (no order, no claim, no
 * redemption, no e-mail). Both operations feed the same pipeline; only their mapping differs.
 */
import type { Kysely } from 'kysely';
import { addFieldError, validationError, type FieldErrors } from '@sports-timing/shared';
import type { Principal } from '../auth/principal';
import { canonicalCulture, localize } from '../culture/culture';
import { effectiveUserGroup } from '../catalog/user-groups';
import type { DB } from '../db/schema';
import { evaluateDiscountCodes } from '../discounts/discount-rules';
import { loadDiscountTerms, redeemDiscountCodes, requireAllValid } from '../discounts/discounts.service';
import { renderOrderConfirmation } from './order-confirmation.mail';
import { mailEntry, outboxRows } from '../outbox/outbox.service';
import { CARD_NUMBER_RANGES, CARD_TYPES, type CardType } from '../siid/card-types';
import { claimCardNumbers, claimRandomCardNumbers } from '../siid/siid.service';
import { checkAddresses } from './addresses';
import { cardOrderInput, type CardOrderRequest } from './card-order';
import { buildCart, CARD_NUMBER_KEY, loadCartArticles, summarize, type CartLine } from './cart';
import { callerOf, IDEMPOTENCY_WAIT_MS, requestHash, takeIdempotencyKey, translateIdempotencyError, type IdempotencyClaim } from './idempotency';
import { initialStateFor, type OrderAddress, type OrderInput, type StoredAddress, type StoredOrder } from './order.types';
import { findOrder, toOrderResponse, toShopOrderDTO, toStoredOrder, type OrderResponse, type ShopOrderDTO } from './orders.mapper';
import { insertOutboxAndCompleteKey, renewIdempotentResponse } from './idempotency.repository';
import * as repo from './orders.repository';
import type { OrderLimits } from './order-limits';
import { computeTotals } from './totals';
import { newOrderJobs } from './order-flow.service';

/** Who places the order and how the request is made idempotent. */
export interface PlaceOrderContext {
  principal: Principal | null;
  /** `Idempotency-Key` header, if sent. */
  idempotencyKey?: string;
  /**
   * The caller the key is scoped to (`requestCaller`: principal, service client or `ip:<address>`);
   * default `callerOf(principal)`.
   */
  caller?: string;
  /** Abuse limits (`order-limits.ts`): public callers' reservations and mails, discount-code checks; absent → none. */
  limits?: OrderLimits;
  /** The validated request body (defaults applied), hashed for the idempotency check. */
  requestBody: unknown;
  /** How long a retry waits for the first request with its key (default {@link IDEMPOTENCY_WAIT_MS}). */
  idempotencyWaitMs?: number;
  /**
   * Creates the paylink of a new prepaid order (given as stored) right after the commit (see
   * `order-flow.service.ts`); resolves the order with its paylink when that job ran, null when it was not
   * tried, failed or left no paylink. Without it the paylink is left to the outbox job alone.
   */
  paylinks?: { createPaylinkNow(order: StoredOrder): Promise<StoredOrder | null> };
}

/** The reply of an order operation: the stored order (or the first reply, for an idempotent retry). */
export interface PlacedOrder<T> {
  body: T;
  /** True when this was a retry answered from the idempotency record. */
  replayed: boolean;
}

/** `SO-<year>-<id, at least 6 digits>`, the year in UTC. */
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
 * Places an order. Within one transaction: the idempotency key (a stored reply is returned as is), the
 * address and cart checks (ApiError 400 with every violation), discount codes (400, or 409 when used
 * up), card-number claims (409 when taken), the order, its items and state history, the outbox e-mail
 * and the idempotency record. `render` turns the stored order into the operation's reply.
 */
async function placeOrder<T>(
  db: Kysely<DB>,
  input: OrderInput,
  ctx: PlaceOrderContext,
  operation: string,
  render: (o: StoredOrder) => T,
): Promise<PlacedOrder<T>> {
  const group = effectiveUserGroup(ctx.principal);
  const caller = callerOf(ctx.principal);
  const claim: IdempotencyClaim | null = ctx.idempotencyKey
    ? { scope: `${operation}:${ctx.caller ?? caller}`, key: ctx.idempotencyKey, requestHash: requestHash(ctx.requestBody) }
    : null;
  let placed: PlacedOrder<T> & { order?: StoredOrder };
  // From the process's cart-article cache (keyed by the pool's handle, so read before the transaction).
  const articles = await loadCartArticles(db, input.items);
  try {
    placed = await db.transaction().execute(async (trx): Promise<PlacedOrder<T> & { order?: StoredOrder }> => {
      if (claim) {
        const prior = await takeIdempotencyKey(trx, claim, ctx.idempotencyWaitMs ?? IDEMPOTENCY_WAIT_MS);
        if (prior !== null) return { body: prior as T, replayed: true };
      }
      // Before any code is looked at: an order's verdicts on its codes cost what a `validate` request costs.
      if (ctx.limits && input.discountCodes.length > 0) await ctx.limits.chargeDiscountCheck(ctx.caller ?? caller);
      const errors: FieldErrors = {};
      const addresses = checkAddresses(input, errors);
      const { cart, errors: cartErrors } = buildCart(input.items, articles, group, input.paths.items);
      for (const [field, msgs] of Object.entries(cartErrors)) addFieldError(errors, field, ...msgs);
      const reservedCards = cart.lines.filter((l) => l.cardNumber !== null || l.assignRandomCardNumber).length;
      if (ctx.limits && group === 'public' && reservedCards > ctx.limits.maxCardsPerPublicOrder) {
        addFieldError(
          errors,
          input.paths.items,
          `An order holds at most ${ctx.limits.maxCardsPerPublicOrder} card numbers (ORDER_MAX_CARDS_PUBLIC) unless placed by a retailer or staff; this one has ${reservedCards}.`,
        );
      }
      if (Object.keys(errors).length > 0) throw validationError(errors, summarize(errors));
      if (ctx.limits && group === 'public') await ctx.limits.chargePublicOrder(ctx.caller ?? caller, reservedCards, input.contact.email);

      const now = new Date();
      const evaluation = evaluateDiscountCodes(
        input.discountCodes,
        await loadDiscountTerms(trx, input.discountCodes),
        cart.lines.map((l) => ({ articleNumber: l.article.articleNumber, netAmountCents: l.netAmountCents })),
        cart.currency,
        now,
      );
      requireAllValid(evaluation, input.paths.discountCodes);
      const totals = computeTotals(
        cart.lines.map((l, i) => ({ netAmountCents: l.netAmountCents, discountNetCents: evaluation.lineDiscounts[i], vatRatePercent: l.vatRatePercent })),
        addresses.courier.shippingNetCents,
      );

      const { state, paymentMethod } = initialStateFor(group);
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
      // Id, order number (`orderNumberFor`), the first history entry and the items come with the insert (one round trip).
      const inserted = await repo.insertNewOrder(
        trx,
        {
          source: input.source,
          state,
          payment_method: paymentMethod,
          user_group: group,
          created_by_kind: ctx.principal?.kind ?? null,
          created_by_id: ctx.principal?.id ?? null,
          erp_retailer_entity_id: ctx.principal?.erpRetailerEntityId ?? null,
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
        { actor: caller, reason: `order placed (${operation})` },
        items,
      );
      const { id: orderId, order_number: orderNumber } = inserted.order;
      // Codes before card numbers, in every order: a fixed lock order keeps concurrent orders deadlock-free.
      await redeemDiscountCodes(trx, evaluation.results, orderId);
      const cardNumbers = await claimCards(trx, cart.lines, orderNumber);
      const drawn = cart.lines.flatMap((l, i) =>
        cardNumbers[i] !== l.cardNumber && cardNumbers[i] !== null ? [{ position: i, cardNumber: cardNumbers[i] }] : [],
      );
      const changed = new Map((await repo.setDrawnCardNumbers(trx, orderId, drawn, CARD_NUMBER_KEY)).map((r) => [r.id, r]));
      const itemRows = inserted.items.map((r) => changed.get(r.id) ?? r);

      const order = toStoredOrder(inserted.order, itemRows);
      const body = render(order);
      // The confirmation e-mail, the order's jobs and the idempotency record's response in one statement.
      await insertOutboxAndCompleteKey(
        trx,
        outboxRows([
          mailEntry(`order-confirmation:${orderId}`, renderOrderConfirmation(order, { courierName: addresses.courier.name })),
          ...newOrderJobs(orderId, state),
        ]),
        claim ? { scope: claim.scope, key: claim.key, orderId, status: 200, body } : null,
      );
      return { body, replayed: false, order };
    });
  } catch (err) {
    throw translateIdempotencyError(err);
  }
  // A replay answers the stored first reply as is; only a reply without a paylink is renewed once the
  // order has one (the first attempt could not reach the provider), so a retrying client gets the page.
  if (placed.replayed) return { body: claim ? await withCurrentPaylink(db, claim, placed.body, render) : placed.body, replayed: true };
  // After the commit, never inside the transaction: the provider call must not hold locks or a snapshot.
  if (placed.order?.state === 'pending_payment' && ctx.paylinks) {
    const withPaylink = await ctx.paylinks.createPaylinkNow(placed.order);
    if (withPaylink) {
      const body = render(withPaylink);
      // The key's record gets this answer (with the paylink and its `updatedAt`), so that a retry is answered
      // the same bytes; a retry that came in between renews it the same way (`withCurrentPaylink`).
      if (claim) await renewIdempotentResponse(db, claim, placed.order.id, body);
      return { body, replayed: false };
    }
  }
  return { body: placed.body, replayed: placed.replayed };
}

/**
 * A stored reply `body` without `paylinkUrl` whose order has a paylink now: the order as it is now
 * (`render`), stored as the key's reply for later retries. Any other reply is returned as stored.
 */
async function withCurrentPaylink<T>(db: Kysely<DB>, claim: IdempotencyClaim, body: T, render: (o: StoredOrder) => T): Promise<T> {
  const b = body as { oid?: unknown; paylinkUrl?: unknown };
  if (typeof b.oid !== 'number' || b.paylinkUrl !== null) return body;
  const now = await findOrder(db, b.oid);
  if (!now?.paylinkUrl) return body;
  const renewed = render(now);
  await renewIdempotentResponse(db, claim, now.id, renewed);
  return renewed;
}

/** Spec `createShopOrder`: places a shop order and returns the stored `ShopOrderDTO`. */
export function placeShopOrder(db: Kysely<DB>, input: OrderInput, ctx: PlaceOrderContext): Promise<PlacedOrder<ShopOrderDTO>> {
  return placeOrder(db, input, ctx, 'createShopOrder', toShopOrderDTO);
}

/** Spec `createOrder` (§4.2): places a card order and returns the stored `OrderResponse`; 400 for a request breaking the card-order rules (`cardOrderInput`). */
export function placeCardOrder(db: Kysely<DB>, body: CardOrderRequest, ctx: PlaceOrderContext): Promise<PlacedOrder<OrderResponse>> {
  // The request's own rules (400) come before the pipeline, as for any malformed body.
  const input = cardOrderInput(body);
  return placeOrder(db, input, ctx, 'createOrder', toOrderResponse);
}
