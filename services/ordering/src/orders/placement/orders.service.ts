/**
 * The order pipeline (`createShopOrder`, `createOrder`, docs/decisions.md §6): one
 * transaction that checks addresses and cart, redeems discount codes, claims card numbers, stores the
 * order with its items, totals and initial state, and enqueues the confirmation e-mail in the outbox.
 * Any failure rolls everything back, so a rejected order leaves no trace (no order, no claim, no
 * redemption, no e-mail). Both operations feed the same pipeline; only their mapping differs. The steps
 * inside the transaction (validate cart, price, persist, reserve, enqueue) are in `place-order.steps.ts`;
 * here are the idempotency key around them and the paylink after the commit.
 */
import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/principal';
import type { CartArticleCache } from '../../catalog/catalog-caches';
import { effectiveUserGroup } from '../../catalog/user-groups';
import type { DB } from '../../db/schema';
import { cardOrderInput, type CardOrderRequest } from './card-order';
import { loadCartArticles } from './cart';
import { callerOf, IDEMPOTENCY_WAIT_MS, requestHash, takeIdempotencyKey, translateIdempotencyError, type IdempotencyClaim } from './idempotency';
import type { OrderInput, StoredOrder } from '../order.types';
import { findOrder, toOrderResponse, toShopOrderDTO, type OrderResponse, type ShopOrderDTO } from '../orders.mapper';
import { renewIdempotentResponse } from './idempotency.repository';
import type { OrderLimits } from './order-limits';
import { enqueueOrder, persistOrder, priceOrder, reserveOrder, validateCart, type OrderPlacement } from './place-order.steps';

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
  /** The app's cart-article cache the cart is priced from (`CartArticleCache`). */
  cartArticles: CartArticleCache;
  /** The validated request body (defaults applied), hashed for the idempotency check. */
  requestBody: unknown;
  /** How long a retry waits for the first request with its key (default {@link IDEMPOTENCY_WAIT_MS}). */
  idempotencyWaitMs?: number;
  /**
   * Creates the paylink of a new prepaid order (given as stored) right after the commit
   * (`PaylinkJobs.createPaylinkNow`, `flow/paylink-jobs.ts`); resolves the order with its paylink when that job ran, null when it was not
   * tried, failed or left no paylink. Without it the paylink is left to the outbox job alone (the composition's
   * `inlinePaylinks` option decides).
   */
  paylinks?: { createPaylinkNow(order: StoredOrder): Promise<StoredOrder | null> };
}

/** The reply of an order operation: the stored order (or the first reply, for an idempotent retry). */
export interface PlacedOrder<T> {
  body: T;
  /** True when this was a retry answered from the idempotency record. */
  replayed: boolean;
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
  const caller = callerOf(ctx.principal);
  const claim: IdempotencyClaim | null = ctx.idempotencyKey
    ? { scope: `${operation}:${ctx.caller ?? caller}`, key: ctx.idempotencyKey, requestHash: requestHash(ctx.requestBody) }
    : null;
  let placed: PlacedOrder<T> & { order?: StoredOrder };
  // From the app's cart-article cache (over the pool, so read before the transaction).
  const articles = await loadCartArticles(ctx.cartArticles, input.items);
  try {
    placed = await db.transaction().execute(async (trx): Promise<PlacedOrder<T> & { order?: StoredOrder }> => {
      if (claim) {
        const prior = await takeIdempotencyKey(trx, claim, ctx.idempotencyWaitMs ?? IDEMPOTENCY_WAIT_MS);
        if (prior !== null) return { body: prior as T, replayed: true };
      }
      const group = effectiveUserGroup(ctx.principal);
      const valid = await validateCart(input, group, articles, ctx.limits, ctx.caller ?? caller);
      // The order's time is taken once it is valid (discount validity, `created_at`).
      const placement: OrderPlacement = { input, principal: ctx.principal, group, actor: caller, operation, now: new Date() };
      const price = await priceOrder(trx, placement, valid);
      const { inserted, state } = await persistOrder(trx, placement, valid, price);
      const order = await reserveOrder(trx, valid, price, inserted);
      const body = render(order);
      await enqueueOrder(trx, order, valid, state, claim, body);
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

/** Spec `createOrder`: places a card order and returns the stored `OrderResponse`; 400 for a request breaking the card-order rules (`cardOrderInput`). */
export function placeCardOrder(db: Kysely<DB>, body: CardOrderRequest, ctx: PlaceOrderContext): Promise<PlacedOrder<OrderResponse>> {
  // The request's own rules (400) come before the pipeline, as for any malformed body.
  const input = cardOrderInput(body);
  return placeOrder(db, input, ctx, 'createOrder', toOrderResponse);
}
