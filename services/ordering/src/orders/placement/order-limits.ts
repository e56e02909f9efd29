/**
 * Abuse limits of the order pipeline (README "Order limits"; spec `createShopOrder`, `createOrder`,
 * `validateDiscountCodes`, `createQuotationForSubscription`): what a caller of the `public` user group
 * (anonymous callers and customer accounts) may reserve and have mailed, and the one budget of
 * discount-code checks that orders and `discount-codes/validate` share.
 *
 * - per order: at most `ORDER_MAX_CARDS_PUBLIC` card numbers (400 naming the limit);
 * - per caller (`requestCaller`: user, else client address, a registered `X-Service-Client-Id` naming a
 *   budget per address) and hour: at most `ORDER_PUBLIC_ORDERS_PER_CALLER_PER_HOUR` orders (each mails a
 *   confirmation) and `ORDER_PUBLIC_CARDS_PER_CALLER_PER_HOUR` card numbers reserved (429 with `Retry-After`);
 * - an authenticated `client_credentials` client of group `public` (caller `client:<id>`) orders for many
 *   customers: it shares one higher budget, `ORDER_CLIENT_ORDERS_PER_HOUR` orders and
 *   `ORDER_CLIENT_CARDS_PER_HOUR` card numbers an hour;
 * - per recipient address and hour: at most `ORDER_MAILS_PER_RECIPIENT_PER_HOUR` orders or quotation
 *   requests mailed to one address, whoever asks (429 with `Retry-After`);
 * - discount codes: every order carrying codes costs one point of the validation budget
 *   (`RATE_LIMIT_DISCOUNT_VALIDATIONS_PER_MINUTE`, per caller), charged before any code is looked at, so
 *   orders reveal no more verdicts per minute than `validate` does (429 with `Retry-After`).
 *
 * Counters live in Redis when `REDIS_URL` is set (shared by all instances), else in the process. Unpaid
 * reservations end with the order's expiry (`order-expiry.service.ts`).
 */
import { ApiError, consumeOrThrow, createLimiter, GrpcCode, retryAfterSeconds, RateLimiterRes, type RateLimiterAbstract } from '@sports-timing/shared';
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import type { OrderingConfig } from '../../config';

/**
 * The mailbox an address delivers to, as the per-recipient mail limit counts it (docs/mails.md): lower case,
 * and a sub-address tag (`erika+x@example.com`, RFC 5233, honoured by the large providers) removed, so
 * `Erika+1@Example.com` and `erika@example.com` share one budget. Dots in the local part are kept: only some
 * providers ignore them.
 */
function mailboxOf(email: string): string {
  const address = email.trim().toLowerCase();
  const at = address.lastIndexOf('@');
  if (at < 0) return address;
  const local = address.slice(0, at);
  const plus = local.indexOf('+');
  return `${plus > 0 ? local.slice(0, plus) : local}${address.slice(at)}`;
}

/** One counter per window; null when its limit is 0 (off). */
function limiter(redis: Redis | undefined, keyPrefix: string, points: number, duration: number): RateLimiterAbstract | null {
  return points > 0 ? createLimiter(redis, { keyPrefix, points, duration }) : null;
}

/** The limits of one app (shared by its handlers); see the module doc. */
export class OrderLimits {
  readonly maxCardsPerPublicOrder: number;
  private readonly discountChecks: RateLimiterAbstract | null;
  private readonly ordersPerCaller: RateLimiterAbstract | null;
  private readonly cardsPerCaller: RateLimiterAbstract | null;
  private readonly ordersPerClient: RateLimiterAbstract | null;
  private readonly cardsPerClient: RateLimiterAbstract | null;
  private readonly mailsPerRecipient: RateLimiterAbstract | null;

  constructor(
    config: Pick<
      OrderingConfig,
      | 'rateLimitKeyPrefix'
      | 'rateLimitDiscountValidationsPerMinute'
      | 'orderMaxCardsPublic'
      | 'orderPublicOrdersPerCallerPerHour'
      | 'orderPublicCardsPerCallerPerHour'
      | 'orderClientOrdersPerHour'
      | 'orderClientCardsPerHour'
      | 'orderMailsPerRecipientPerHour'
    >,
    redis: Redis | undefined,
    private readonly logger?: Logger,
  ) {
    const p = config.rateLimitKeyPrefix;
    this.maxCardsPerPublicOrder = config.orderMaxCardsPublic;
    this.discountChecks = limiter(redis, `${p}:rl:discount-checks`, config.rateLimitDiscountValidationsPerMinute, 60);
    this.ordersPerCaller = limiter(redis, `${p}:order:public-orders`, config.orderPublicOrdersPerCallerPerHour, 3600);
    this.cardsPerCaller = limiter(redis, `${p}:order:public-cards`, config.orderPublicCardsPerCallerPerHour, 3600);
    this.ordersPerClient = limiter(redis, `${p}:order:client-orders`, config.orderClientOrdersPerHour, 3600);
    this.cardsPerClient = limiter(redis, `${p}:order:client-cards`, config.orderClientCardsPerHour, 3600);
    this.mailsPerRecipient = limiter(redis, `${p}:order:recipient`, config.orderMailsPerRecipientPerHour, 3600);
  }

  /** One discount-code check of `caller` (a `validate` request or an order with codes); ApiError 429 over the budget. */
  async chargeDiscountCheck(caller: string): Promise<void> {
    if (this.discountChecks) await consumeOrThrow(this.discountChecks, caller, 'Too many discount-code checks; retry later.', this.logger);
  }

  /**
   * Gives back the point of a discount-code check refused by validation (a 400 before any code was looked
   * at; `discountCheckLimit` in app.ts decides when, by `reachedHandler`).
   */
  async refundDiscountCheck(caller: string): Promise<void> {
    await this.discountChecks?.reward(caller, 1);
  }

  /**
   * One mail to the mailbox of `email` ({@link mailboxOf}: letter case and `+tag` do not make another
   * recipient); ApiError 429 when the mailbox got its hourly share.
   */
  async chargeRecipient(email: string): Promise<void> {
    if (this.mailsPerRecipient)
      await consumeOrThrow(this.mailsPerRecipient, mailboxOf(email), 'Too many orders or requests for this e-mail address; retry later.', this.logger);
  }

  /**
   * A `public` caller's order reserving `cards` card numbers and mailing `email`: one order and `cards`
   * cards of the caller's hourly budget (an authenticated client's, `client:<id>`, is the higher client
   * budget), one mail of the address's. ApiError 429 with `Retry-After` when a budget is spent; a refused
   * order takes nothing from the card budget.
   */
  async chargePublicOrder(caller: string, cards: number, email: string): Promise<void> {
    const client = caller.startsWith('client:');
    const orders = client ? this.ordersPerClient : this.ordersPerCaller;
    const cardBudget = client ? this.cardsPerClient : this.cardsPerCaller;
    if (orders) await consumeOrThrow(orders, caller, 'Too many orders from this caller; retry later.', this.logger);
    if (cardBudget && cards > 0) await this.consumeCards(cardBudget, caller, cards);
    await this.chargeRecipient(email);
  }

  private async consumeCards(l: RateLimiterAbstract, caller: string, cards: number): Promise<void> {
    // Checked first so that an order over the remaining budget does not use it up for smaller orders.
    const used = await l.get(caller).catch(() => null);
    if (used && used.consumedPoints + cards > l.points) {
      throw new ApiError(429, `Too many card numbers reserved by this caller (at most ${l.points} per hour); retry later.`, {
        headers: { 'Retry-After': retryAfterSeconds(used.msBeforeNext) },
        grpcCode: GrpcCode.RESOURCE_EXHAUSTED,
      });
    }
    try {
      await l.consume(caller, cards);
    } catch (err) {
      if (err instanceof RateLimiterRes)
        throw new ApiError(429, `Too many card numbers reserved by this caller (at most ${l.points} per hour); retry later.`, {
          headers: { 'Retry-After': retryAfterSeconds(err.msBeforeNext) },
          grpcCode: GrpcCode.RESOURCE_EXHAUSTED,
        });
      this.logger?.warn({ err }, 'rate-limit store failed; request let through');
    }
  }
}
