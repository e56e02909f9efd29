/**
 * The discount-code check of a cart before ordering (ordering spec `validateDiscountCodes`): the cart is priced
 * as the order would be and the codes evaluated by the same rules as at order time (`discounts/discount-rules.ts`).
 * It lives with the orders because pricing a cart is theirs; the discounts module below knows no carts.
 */
import type { Kysely } from 'kysely';
import type { UserGroup } from '../../auth/principal';
import type { CartArticleCache } from '../../catalog/catalog-caches';
import type { DB } from '../../db/schema';
import { evaluateDiscountCodes } from '../../discounts/discount-rules';
import { loadDiscountTerms, type ValidateDiscountCodesReply } from '../../discounts/discounts.service';
import { priceCart } from './cart';
import type { OrderItemInput } from '../order.types';

/**
 * Spec `validateDiscountCodes`: prices the cart as an order of a caller of `group` would be priced
 * (ApiError 400 for an invalid cart; articles from the app's `cartArticles`) and evaluates `codes` against it
 * at the current time. Redeems nothing.
 */
export async function validateDiscountCodes(
  db: Kysely<DB>,
  cartArticles: CartArticleCache,
  codes: readonly string[],
  items: readonly OrderItemInput[],
  group: UserGroup,
): Promise<ValidateDiscountCodesReply> {
  const cart = await priceCart(cartArticles, items, group, 'orderItems');
  const terms = await loadDiscountTerms(db, codes);
  const evaluation = evaluateDiscountCodes(
    codes,
    terms,
    cart.lines.map((l) => ({ articleNumber: l.article.articleNumber, netAmountCents: l.netAmountCents })),
    cart.currency,
    new Date(),
  );
  return {
    results: evaluation.results.map((r) => ({
      code: r.code,
      isValid: r.isValid,
      reason: r.reason,
      netAmountCents: r.netAmountCents,
      campaignName: r.campaignName,
    })),
    itemsNetCents: cart.itemsNetCents,
    totalDiscountNetCents: evaluation.totalDiscountNetCents,
    currency: cart.currency,
  };
}
