/**
 * Card types and their number ranges (docs/decisions.md §6, spec `CardType`). The same ranges are enforced by a
 * check constraint on `card_numbers` (migration 0002).
 */
import { enumValues } from '@sports-timing/shared';
import type { components } from '../generated/openapi';

/** Card types of the shop. */
export type CardType = components['schemas']['CardType'];
export const CARD_TYPES = enumValues<CardType>({ sicard9: true, sicard10: true, siac1: true });

/** An inclusive range of card numbers. */
export interface NumberRange {
  first: number;
  last: number;
}

/** Number range of each card type (inclusive). */
export const CARD_NUMBER_RANGES: Readonly<Record<CardType, NumberRange>> = {
  sicard9: { first: 1_000_000, last: 1_999_999 },
  sicard10: { first: 7_000_001, last: 7_999_999 },
  siac1: { first: 8_000_001, last: 8_999_999 },
};

/** Whether `value` is a card type name. */
export function isCardType(value: string | null | undefined): value is CardType {
  return !!value && (CARD_TYPES as readonly string[]).includes(value);
}

/** Whether `serviceId` is an integer in the range of `cardType`. */
export function isInRange(cardType: CardType, serviceId: number): boolean {
  const r = CARD_NUMBER_RANGES[cardType];
  return Number.isInteger(serviceId) && serviceId >= r.first && serviceId <= r.last;
}

/** The card type whose range contains `serviceId`, or null (the ranges do not overlap). */
export function cardTypeOfNumber(serviceId: number): CardType | null {
  return CARD_TYPES.find((t) => isInRange(t, serviceId)) ?? null;
}
