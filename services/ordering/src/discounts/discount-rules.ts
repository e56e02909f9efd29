/**
 * Pure evaluation of discount codes against a priced cart (ordering spec §4.3 rule 6, docs/decisions.md §6; the
 * rules are written in the spec at `validateDiscountCodes`). Used by the validation operation and, inside
 * the order transaction, by the order pipeline, so both always agree.
 *
 * Stacking: codes are applied in the given order; codes of different campaigns stack, one code per
 * campaign counts, a repeated code counts once. Each code deducts from what earlier codes left of the
 * lines it applies to, so the sum of deductions never exceeds the cart's net item total.
 */
import { allocateProportionally, percentOf } from '../money/money';

/** Why a code does not apply (spec `DiscountCodeValidationResult.reason`). */
type DiscountRejection =
  | 'notFound'
  | 'duplicateCode'
  | 'notYetValid'
  | 'expired'
  | 'exhausted'
  | 'currencyMismatch'
  | 'minimumOrderValueNotReached'
  | 'noApplicableArticles'
  | 'campaignAlreadyApplied';

/** A stored code with its campaign's terms, as needed for evaluation. */
export interface DiscountCodeTerms {
  codeId: number;
  /** Upper case. */
  code: string;
  redemptions: number;
  maxRedemptions: number;
  campaignId: number;
  campaignName: string;
  kind: 'percent' | 'fixedAmount';
  /** Percent (kind `percent`), e.g. 12.5; null otherwise. */
  percent: number | null;
  /** Net cents (kind `fixedAmount`); null otherwise. */
  amountCents: number | null;
  currency: string;
  validFrom: Date | null;
  validTo: Date | null;
  minimumOrderNetCents: number;
  /** Empty = every article. */
  restrictedArticleNumbers: string[];
}

/** One cart line as far as discounts are concerned. */
export interface DiscountableLine {
  articleNumber: string;
  /** Net line amount before discounts, cents. */
  netAmountCents: number;
}

/** The result for one code, in request order. */
export interface DiscountCodeResult {
  /** The code as sent. */
  code: string;
  /** Normalized (trimmed, upper case). */
  normalizedCode: string;
  isValid: boolean;
  reason: DiscountRejection | null;
  /** Net cents deducted by this code (0 when not valid). */
  netAmountCents: number;
  campaignName: string | null;
  /** The stored code, when found. */
  terms: DiscountCodeTerms | null;
}

/** Evaluation of all codes of a cart. */
export interface DiscountEvaluation {
  results: DiscountCodeResult[];
  /** Sum of the valid codes' deductions, net cents (≤ the cart's net item total). */
  totalDiscountNetCents: number;
  /** Per cart line (same order as the input lines): its share of the deductions, net cents. */
  lineDiscounts: number[];
}

/** Normalized form of a code as typed by a customer: trimmed and upper case (codes are case-insensitive). */
export function normalizeCode(code: string): string {
  return code.trim().toUpperCase();
}

/**
 * Evaluates `codes` (as sent, in order) against the cart `lines` at instant `now`. `known` maps
 * normalized codes to their stored terms; `currency` is the cart's.
 */
export function evaluateDiscountCodes(
  codes: readonly string[],
  known: ReadonlyMap<string, DiscountCodeTerms>,
  lines: readonly DiscountableLine[],
  currency: string,
  now: Date,
): DiscountEvaluation {
  const itemsNet = lines.reduce((sum, l) => sum + l.netAmountCents, 0);
  const remaining = lines.map((l) => l.netAmountCents);
  const lineDiscounts = lines.map(() => 0);
  const seen = new Set<string>();
  const appliedCampaigns = new Set<number>();
  const results: DiscountCodeResult[] = [];
  let total = 0;
  for (const code of codes) {
    const normalizedCode = normalizeCode(code);
    const terms = known.get(normalizedCode) ?? null;
    const reject = (reason: DiscountRejection): DiscountCodeResult => ({
      code,
      normalizedCode,
      isValid: false,
      reason,
      netAmountCents: 0,
      campaignName: terms?.campaignName ?? null,
      terms,
    });
    const duplicate = seen.has(normalizedCode);
    seen.add(normalizedCode);
    if (!terms) {
      results.push(reject('notFound'));
      continue;
    }
    if (duplicate) {
      results.push(reject('duplicateCode'));
      continue;
    }
    if (terms.validFrom && now < terms.validFrom) {
      results.push(reject('notYetValid'));
      continue;
    }
    if (terms.validTo && now >= terms.validTo) {
      results.push(reject('expired'));
      continue;
    }
    if (terms.redemptions >= terms.maxRedemptions) {
      results.push(reject('exhausted'));
      continue;
    }
    if (terms.currency !== currency) {
      results.push(reject('currencyMismatch'));
      continue;
    }
    if (itemsNet < terms.minimumOrderNetCents) {
      results.push(reject('minimumOrderValueNotReached'));
      continue;
    }
    const restriction = new Set(terms.restrictedArticleNumbers);
    const applicable = lines.map((l, i) => (restriction.size === 0 || restriction.has(l.articleNumber) ? i : -1)).filter((i) => i >= 0);
    const applicableRemaining = applicable.reduce((sum, i) => sum + remaining[i], 0);
    if (applicableRemaining === 0) {
      results.push(reject('noApplicableArticles'));
      continue;
    }
    if (appliedCampaigns.has(terms.campaignId)) {
      results.push(reject('campaignAlreadyApplied'));
      continue;
    }
    const amount =
      terms.kind === 'percent'
        ? Math.min(applicableRemaining, percentOf(applicableRemaining, terms.percent ?? 0))
        : Math.min(applicableRemaining, terms.amountCents ?? 0);
    const shares = allocateProportionally(
      amount,
      applicable.map((i) => remaining[i]),
    );
    applicable.forEach((lineIndex, k) => {
      remaining[lineIndex] -= shares[k];
      lineDiscounts[lineIndex] += shares[k];
    });
    appliedCampaigns.add(terms.campaignId);
    total += amount;
    results.push({ code, normalizedCode, isValid: true, reason: null, netAmountCents: amount, campaignName: terms.campaignName, terms });
  }
  return { results, totalDiscountNetCents: total, lineDiscounts };
}
