/**
 * Discount codes (`createDiscountCodes`, `validateDiscountCodes`, docs/decisions.md §6): campaigns with their
 * codes, validation of codes against a cart, and atomic redemption inside the order transaction.
 */
import { randomInt } from 'node:crypto';
import type { Kysely } from 'kysely';
import { addFieldError, ApiError, GrpcCode, validationError, type FieldErrors } from '@sports-timing/shared';
import { findCatalogArticles } from '../catalog/catalog.service';
import type { DB } from '../db/schema';
import type { components } from '../generated/openapi';
import { normalizeCode, type DiscountCodeResult, type DiscountCodeTerms, type DiscountEvaluation } from './discount-rules';
import * as repo from './discounts.repository';

type Schemas = components['schemas'];
/** Spec `CreateDiscountCodesRequest` (defaults applied by the validator). */
export type CreateDiscountCodesRequest = Schemas['CreateDiscountCodesRequest'];
/** Spec `CreateDiscountCodesReply`. */
export type CreateDiscountCodesReply = Schemas['CreateDiscountCodesReply'];
/** Spec `ValidateDiscountCodesReply`. */
export type ValidateDiscountCodesReply = Schemas['ValidateDiscountCodesReply'];

/** Characters of generated codes: A–Z and 2–9 without the look-alikes I, L, O (and 0, 1). @internal */
export const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
/** Random characters of a generated code (after the prefix): 31^12 ≈ 7.9 × 10^17 possibilities. @internal */
export const GENERATED_CODE_LENGTH = 12;

/** A crypto-random code: `prefix` followed by {@link GENERATED_CODE_LENGTH} characters of {@link CODE_ALPHABET}. */
function generateCode(prefix = ''): string {
  let code = prefix;
  for (let i = 0; i < GENERATED_CODE_LENGTH; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

function checkCreateRequest(req: CreateDiscountCodesRequest, knownArticles: ReadonlySet<string>): { percent: number | null; codes: string[] | null } {
  const errors: FieldErrors = {};
  const add = (f: string, m: string) => addFieldError(errors, f, m);
  let percent: number | null = null;
  if (req.kind === 'percent') {
    if (req.percent === undefined) add('percent', 'is required for kind percent.');
    else {
      percent = Math.round(req.percent * 100) / 100;
      if (percent <= 0) add('percent', 'must be at least 0.01 after rounding to two decimals.');
    }
    if (req.amountCents !== undefined) add('amountCents', 'must be absent for kind percent.');
  } else {
    if (req.amountCents === undefined) add('amountCents', 'is required for kind fixedAmount.');
    if (req.percent !== undefined) add('percent', 'must be absent for kind fixedAmount.');
  }
  if ((req.numberOfCodes === undefined) === (req.codes === undefined)) add('numberOfCodes', 'Give exactly one of numberOfCodes and codes.');
  if (req.codes !== undefined && req.codePrefix !== undefined) add('codePrefix', 'applies to generated codes only.');
  if (req.validFrom && req.validTo && new Date(req.validTo) <= new Date(req.validFrom)) add('validTo', 'must be after validFrom.');
  (req.restrictedArticleNumbers ?? []).forEach((n, i) => {
    if (!knownArticles.has(n)) add(`restrictedArticleNumbers[${i}]`, `Unknown article ${n}.`);
  });
  let codes: string[] | null = null;
  if (req.codes) {
    codes = req.codes.map(normalizeCode);
    const seen = new Set<string>();
    codes.forEach((c, i) => {
      if (seen.has(c)) add(`codes[${i}]`, `${c} is listed twice (codes are case-insensitive).`);
      seen.add(c);
    });
  }
  if (Object.keys(errors).length > 0) throw validationError(errors);
  return { percent, codes };
}

/**
 * Creates a campaign and its codes in one transaction (spec `createDiscountCodes`): `numberOfCodes`
 * crypto-random codes (a collision with an existing code is redrawn), or the explicit `codes`, upper
 * case. ApiError 400 for inconsistent terms, 409 ALREADY_EXISTS when an explicit code exists (nothing is
 * stored then). `createdBy` names the staff member (`user:<id>`).
 */
export async function createDiscountCodes(db: Kysely<DB>, req: CreateDiscountCodesRequest, createdBy: string | null): Promise<CreateDiscountCodesReply> {
  const restricted = req.restrictedArticleNumbers ?? [];
  const known = new Set((await findCatalogArticles(db, restricted)).keys());
  const { percent, codes: explicit } = checkCreateRequest(req, known);
  return db.transaction().execute(async (trx) => {
    const campaign = await repo.insertCampaign(trx, {
      name: req.campaignName,
      description: req.description ?? null,
      kind: req.kind,
      percent,
      amount_cents: req.kind === 'fixedAmount' ? (req.amountCents ?? null) : null,
      currency: req.currency,
      valid_from: req.validFrom ? new Date(req.validFrom) : null,
      valid_to: req.validTo ? new Date(req.validTo) : null,
      minimum_order_net_cents: req.minimumOrderNetCents,
      restricted_article_numbers: restricted,
      max_redemptions_per_code: req.maxRedemptionsPerCode,
      created_by: createdBy,
    });
    let codes: string[];
    if (explicit) {
      const inserted = new Set(await repo.insertCodes(trx, campaign.id, explicit, req.maxRedemptionsPerCode));
      const taken = explicit.filter((c) => !inserted.has(c));
      if (taken.length > 0) {
        throw new ApiError(409, `Discount code${taken.length > 1 ? 's' : ''} ${taken.join(', ')} already exist${taken.length > 1 ? '' : 's'}.`, {
          grpcCode: GrpcCode.ALREADY_EXISTS,
        });
      }
      codes = explicit;
    } else {
      const wanted = req.numberOfCodes ?? 0;
      codes = [];
      // A redraw is needed only on a collision (≈ 10^-12 per code); five rounds make failure impossible in practice.
      for (let round = 0; round < 5 && codes.length < wanted; round++) {
        const batch = new Set<string>();
        while (batch.size < wanted - codes.length) batch.add(generateCode(req.codePrefix ?? ''));
        codes.push(...(await repo.insertCodes(trx, campaign.id, [...batch], req.maxRedemptionsPerCode)));
      }
      if (codes.length < wanted) throw new Error('could not generate unique discount codes');
    }
    return {
      campaignId: campaign.id,
      campaignName: campaign.name,
      description: campaign.description,
      kind: req.kind,
      percent: campaign.percent === null ? null : Number(campaign.percent),
      amountCents: campaign.amount_cents,
      currency: campaign.currency,
      validFrom: campaign.valid_from?.toISOString() ?? null,
      validTo: campaign.valid_to?.toISOString() ?? null,
      minimumOrderNetCents: campaign.minimum_order_net_cents,
      restrictedArticleNumbers: campaign.restricted_article_numbers,
      maxRedemptionsPerCode: campaign.max_redemptions_per_code,
      codes,
      createdAt: campaign.created_at.toISOString(),
    };
  });
}

/** The stored terms of the given codes (as sent; normalized here), by normalized code. */
export async function loadDiscountTerms(db: Kysely<DB>, codes: readonly string[]): Promise<Map<string, DiscountCodeTerms>> {
  const rows = await repo.selectCodesWithCampaign(db, [...new Set(codes.map(normalizeCode))]);
  return new Map(
    rows.map((r) => [
      r.code,
      {
        codeId: r.code_id,
        code: r.code,
        redemptions: r.redemptions,
        maxRedemptions: r.max_redemptions,
        campaignId: r.campaign_id,
        campaignName: r.name,
        kind: r.kind === 'percent' ? 'percent' : 'fixedAmount',
        percent: r.percent === null ? null : Number(r.percent),
        amountCents: r.amount_cents,
        currency: r.currency,
        validFrom: r.valid_from,
        validTo: r.valid_to,
        minimumOrderNetCents: r.minimum_order_net_cents,
        restrictedArticleNumbers: r.restricted_article_numbers,
      },
    ]),
  );
}

/**
 * What an order requires of its codes: every code valid. Throws ApiError 409 ABORTED for an exhausted
 * code and 400 with a field violation on `<codesPath>[i]` for any other rejection.
 */
export function requireAllValid(evaluation: DiscountEvaluation, codesPath: string): void {
  const rejected = evaluation.results.map((r, i) => ({ r, i })).filter(({ r }) => !r.isValid);
  if (rejected.length === 0) return;
  const exhausted = rejected.find(({ r }) => r.reason === 'exhausted');
  if (exhausted) throw exhaustedError(exhausted.r.normalizedCode);
  const errors: FieldErrors = {};
  for (const { r, i } of rejected) addFieldError(errors, `${codesPath}[${i}]`, `${r.code}: ${r.reason}`);
  throw validationError(errors, `Discount code ${rejected[0].r.code} cannot be used (${rejected[0].r.reason}).`);
}

function exhaustedError(code: string): ApiError {
  return new ApiError(409, `Discount code ${code} has been used up.`, { grpcCode: GrpcCode.ABORTED });
}

/**
 * Redeems the valid codes of an order inside its transaction `trx` and records the redemptions for
 * `orderId`. The counters are updated in code-id order, so two orders with the same codes never deadlock.
 * Throws ApiError 409 ABORTED when a code was used up by a concurrent order (the caller's transaction
 * then rolls back, taking every earlier redemption with it).
 */
export async function redeemDiscountCodes(trx: Kysely<DB>, results: readonly DiscountCodeResult[], orderId: number): Promise<void> {
  const valid = results
    .flatMap((r) => (r.isValid && r.terms ? [{ code: r.normalizedCode, codeId: r.terms.codeId, netAmountCents: r.netAmountCents }] : []))
    .sort((a, b) => a.codeId - b.codeId);
  for (const r of valid) {
    if (!(await repo.redeemOnce(trx, r.codeId))) throw exhaustedError(r.code);
  }
  await repo.insertRedemptions(
    trx,
    orderId,
    valid.map(({ codeId, netAmountCents }) => ({ codeId, netAmountCents })),
  );
}
