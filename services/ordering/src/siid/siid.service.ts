/**
 * Card numbers (SIID, docs/decisions.md §6; `checkSiid`, `isCardFree`, `getRandomFreeSiids`,
 * `getRandomCardNumbers`): range checks, random free numbers, and the atomic claim used by the order pipeline.
 *
 * A number is free when it lies in its type's range and has no row in `card_numbers` (neither reserved
 * nor sold). Random numbers are suggestions; only {@link claimCardNumbers}
 * inside the order transaction take a number, and the table's primary key makes that race-free.
 */
import { randomInt } from 'node:crypto';
import type { Kysely } from 'kysely';
import { ApiError, GrpcCode, validationError } from '@sports-timing/shared';
import type { DB } from '../db/schema';
import { CARD_NUMBER_RANGES, cardTypeOfNumber, isInRange, type CardType, type NumberRange } from './card-types';
import * as repo from './siid.repository';

/** States of a claimed number: `reserved` by an open order, `sold` once the order is paid or invoiced. */
export type CardNumberState = 'reserved' | 'sold';

/** Reply of the number check (schema `CheckSportidentIdReply`). */
export interface CardNumberCheck {
  cardType: CardType;
  serviceId: number;
  /** In the range of `cardType`. */
  isValid: boolean;
  /** Valid and neither reserved nor sold (false whenever `isValid` is false). */
  canBeOrdered: boolean;
}

/** Checks one number against one card type. */
export async function checkServiceId(db: Kysely<DB>, cardType: CardType, serviceId: number): Promise<CardNumberCheck> {
  const isValid = isInRange(cardType, serviceId);
  const canBeOrdered = isValid && !(await repo.isTaken(db, serviceId));
  return { cardType, serviceId, isValid, canBeOrdered };
}

/** Result of the card-number check without a card type (card-reservation `is-card-free`). */
export interface CardNumberFreedom {
  cardNumber: number;
  /** Type whose range holds the number, or null. */
  cardType: CardType | null;
  isValid: boolean;
  isFree: boolean;
}

/** Checks a number of any card type. */
export async function checkCardNumber(db: Kysely<DB>, cardNumber: number): Promise<CardNumberFreedom> {
  const cardType = cardTypeOfNumber(cardNumber);
  const isFree = cardType !== null && !(await repo.isTaken(db, cardNumber));
  return { cardNumber, cardType, isValid: cardType !== null, isFree };
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

/** Up to `count` distinct random numbers of `range` not in `exclude`. */
function randomCandidates(range: NumberRange, count: number, exclude: ReadonlySet<number>): number[] {
  const size = range.last - range.first + 1;
  const room = size - exclude.size;
  if (count >= room / 2) {
    // Small or crowded range: enumerate instead of rejection sampling (which would loop for long).
    const all: number[] = [];
    for (let n = range.first; n <= range.last; n++) if (!exclude.has(n)) all.push(n);
    return shuffle(all).slice(0, count);
  }
  const picked = new Set<number>();
  while (picked.size < count) {
    const n = range.first + randomInt(size);
    if (!exclude.has(n)) picked.add(n);
  }
  return [...picked];
}

/**
 * `count` distinct random free numbers of `cardType` (fewer only when fewer are free), in random order.
 * Draws random candidates and removes the taken ones with one indexed query per round; the batch grows
 * each round, so a mostly-free range needs one query. After a few rounds (a crowded range) it walks the
 * range from a random point with the index, wrapping around, which finds every free number.
 * `range` narrows the search to a sub-range of the type (tests of crowded ranges); default: the whole type.
 */
export async function drawFreeServiceIds(
  db: Kysely<DB>,
  cardType: CardType,
  count: number,
  range: NumberRange = CARD_NUMBER_RANGES[cardType],
): Promise<number[]> {
  const full = CARD_NUMBER_RANGES[cardType];
  if (range.first < full.first || range.last > full.last || range.first > range.last) throw new Error(`range outside ${cardType}`);
  const want = Math.min(count, range.last - range.first + 1);
  const chosen = new Set<number>();
  let batch = want * 2 + 8;
  for (let round = 0; round < 4 && chosen.size < want; round++) {
    const tried = new Set(chosen);
    const candidates = randomCandidates(range, batch, tried);
    if (candidates.length === 0) break;
    const taken = await repo.takenAmong(db, candidates);
    for (const n of candidates) {
      if (chosen.size >= want) break;
      if (!taken.has(n)) chosen.add(n);
    }
    batch *= 4;
  }
  if (chosen.size < want) {
    const start = range.first + randomInt(range.last - range.first + 1);
    const upper = await repo.freeInRange(db, start, range.last, want - chosen.size, [...chosen]);
    upper.forEach((n) => chosen.add(n));
    if (chosen.size < want) {
      const lower = await repo.freeInRange(db, range.first, start - 1, want - chosen.size, [...chosen]);
      lower.forEach((n) => chosen.add(n));
    }
  }
  return shuffle([...chosen]);
}

function takenError(numbers: readonly number[]): ApiError {
  const list = numbers.join(', ');
  return new ApiError(409, numbers.length === 1 ? `Card number ${list} is already taken.` : `Card numbers ${list} are already taken.`, {
    grpcCode: GrpcCode.ABORTED,
    extensions: { cardNumbers: [...numbers] },
  });
}

/**
 * Claims card numbers of one type for an order inside the caller's transaction `trx` (orders pipeline; card
 * orders claim several at once, all or nothing). Throws ApiError 400 (`errors.cardNumber`) when a number is
 * outside the type's range or requested twice, and ApiError 409 (gRPC ABORTED) "card number already taken"
 * when one is reserved or sold, also by a concurrent transaction: the primary key of `card_numbers` decides, so
 * of any number of concurrent claims exactly one commits. No constraint error is raised, so PostgreSQL does not
 * abort `trx`; the caller lets the ApiError propagate out of its transaction callback, which rolls back
 * everything the order wrote.
 */
export async function claimCardNumbers(
  trx: Kysely<DB>,
  cardType: CardType,
  serviceIds: readonly number[],
  orderRef: string | null,
  state: CardNumberState = 'reserved',
): Promise<void> {
  const invalid = serviceIds.filter((n) => !isInRange(cardType, n));
  if (invalid.length > 0) {
    const r = CARD_NUMBER_RANGES[cardType];
    throw validationError({ cardNumber: invalid.map((n) => `${n} is not a ${cardType} card number (${r.first}–${r.last}).`) });
  }
  const unique = [...new Set(serviceIds)];
  if (unique.length !== serviceIds.length) throw validationError({ cardNumber: ['The same card number is requested twice.'] });
  const inserted = new Set(await repo.insertClaims(trx, cardType, unique, orderRef, state));
  const taken = unique.filter((n) => !inserted.has(n));
  // The claims made so far belong to the caller's transaction, which rolls back on this error.
  if (taken.length > 0) throw takenError(taken);
}

/**
 * Claims `count` random free numbers of `cardType` for an order inside `trx` (card orders without chosen
 * numbers). Numbers a concurrent order takes between draw and insert are skipped and redrawn, so this
 * never fails on a race; it throws ApiError 409 only when the type has fewer than `count` free numbers.
 * Returns the claimed numbers, ascending.
 */
export async function claimRandomCardNumbers(
  trx: Kysely<DB>,
  cardType: CardType,
  count: number,
  orderRef: string | null,
  state: CardNumberState = 'reserved',
): Promise<number[]> {
  const claimed: number[] = [];
  for (let round = 0; round < 8 && claimed.length < count; round++) {
    // The transaction sees its own claims, so a new draw never repeats them.
    const candidates = await drawFreeServiceIds(trx, cardType, count - claimed.length);
    if (candidates.length === 0) break;
    claimed.push(...(await repo.insertClaims(trx, cardType, candidates, orderRef, state)));
  }
  if (claimed.length < count) throw new ApiError(409, `Not enough free ${cardType} card numbers.`, { grpcCode: GrpcCode.ABORTED });
  return claimed.sort((a, b) => a - b);
}

/** Releases the card numbers of an order (cancelled order); returns how many were released. */
export async function releaseCardNumbers(trx: Kysely<DB>, orderRef: string): Promise<number> {
  return repo.deleteClaimsOfOrder(trx, orderRef);
}

/** Marks the card numbers of an order as sold (order paid or invoiced); returns how many changed. */
export async function markCardNumbersSold(trx: Kysely<DB>, orderRef: string): Promise<number> {
  return repo.updateStateOfOrder(trx, orderRef, 'sold');
}
