/**
 * `bulkUpdateCardOrderItems`: new card numbers for many card order items in
 * one transaction — all or nothing. Rules: each item and each number at most once per request (400);
 * the number must lie in the item's card-type range (400); unknown or non-card items → 404; items of
 * orders that are `shipped`, `completed`, `cancelled` or `refunded` → 409; a number held by anyone else
 * → 409, decided by the `card_numbers` primary key (the claim insert), not by a prior read. Old numbers
 * are released first, so numbers can be swapped between items in one request. A history row (state
 * unchanged) records who changed the numbers and why.
 */
import type { Kysely } from 'kysely';
import { addFieldError, ApiError, validationError, type FieldErrors } from '@sports-timing/shared';
import type { DB } from '../../db/schema';
import { isInRange, type CardType } from '../../siid/card-types';
import { deleteClaimPairs, insertClaims } from '../../siid/siid.repository';
import { CARD_NUMBER_KEY } from './cart';
import type { CardNumberState } from '../../siid/siid.service';
import type { OrderState } from '../order.types';
import { insertStateChange, lockCardItems, setItemCardNumber, type LockedCardItem } from '../orders.repository';

/** One change. */
export interface CardItemUpdate {
  orderItemOid: number;
  cardNumber: number;
}

/**
 * What a card item of an order in each state allows: its numbers are held `reserved` (not yet paid or on
 * invoice) or `sold` (`card_numbers.state`) and may be changed, or the order is `frozen` (goods on their way or
 * the order closed) and a change is a 409. One entry per spec `OrderState` (`satisfies`): a state the spec adds
 * is a type error here until it is placed.
 */
const CARD_ITEMS_BY_STATE = {
  pending_payment: 'reserved',
  received: 'reserved',
  paid: 'sold',
  transferred: 'sold',
  shipped: 'frozen',
  completed: 'frozen',
  cancelled: 'frozen',
  refunded: 'frozen',
} as const satisfies Record<OrderState, CardNumberState | 'frozen'>;

/** {@link CARD_ITEMS_BY_STATE} of a locked row's state (a spec `OrderState` by the orders' check constraint). */
function cardItemsOf(row: LockedCardItem): CardNumberState | 'frozen' {
  return CARD_ITEMS_BY_STATE[row.state as OrderState];
}

/** Applies all changes or none; throws ApiError 400/404/409 as documented. Returns the number of items changed. */
export async function bulkUpdateCardOrderItems(
  db: Kysely<DB>,
  updates: readonly CardItemUpdate[],
  meta: { actor: string; reason: string | null },
): Promise<number> {
  const errors: FieldErrors = {};
  const seenItems = new Map<number, number>();
  const seenNumbers = new Map<number, number>();
  updates.forEach((u, i) => {
    if (seenItems.has(u.orderItemOid))
      addFieldError(errors, `items[${i}].orderItemOid`, `order item ${u.orderItemOid} appears twice (also items[${seenItems.get(u.orderItemOid)}])`);
    if (seenNumbers.has(u.cardNumber))
      addFieldError(errors, `items[${i}].cardNumber`, `card number ${u.cardNumber} appears twice (also items[${seenNumbers.get(u.cardNumber)}])`);
    seenItems.set(u.orderItemOid, i);
    seenNumbers.set(u.cardNumber, i);
  });
  if (Object.keys(errors).length > 0) throw validationError(errors, 'Each order item and each card number may appear only once.');

  return db.transaction().execute(async (trx) => {
    // Lock the items (in id order, so concurrent bulk updates cannot deadlock) and their orders' state.
    const rows = await lockCardItems(trx, [...seenItems.keys()]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    const missing = updates.filter((u) => !byId.get(u.orderItemOid)?.card_type).map((u) => u.orderItemOid);
    if (missing.length > 0) throw new ApiError(404, `Not a card order item: ${missing.join(', ')}.`);
    const frozen = rows.filter((r) => cardItemsOf(r) === 'frozen');
    if (frozen.length > 0)
      throw new ApiError(
        409,
        `Orders ${[...new Set(frozen.map((r) => r.order_number))].join(', ')} can no longer be changed (${[...new Set(frozen.map((r) => r.state))].join(', ')}).`,
      );
    updates.forEach((u, i) => {
      const type = byId.get(u.orderItemOid)!.card_type! as CardType;
      if (!isInRange(type, u.cardNumber)) addFieldError(errors, `items[${i}].cardNumber`, `${u.cardNumber} is not a valid ${type} card number`);
    });
    if (Object.keys(errors).length > 0) throw validationError(errors, 'Card numbers must be valid for the card type of their item.');

    const changes = updates.filter((u) => byId.get(u.orderItemOid)!.card_number !== u.cardNumber);
    if (changes.length === 0) return 0;
    // Release the old numbers of the changed items (only the claims of their own order), keeping each claim's state.
    const old = changes.map((u) => byId.get(u.orderItemOid)!).filter((r) => r.card_number !== null);
    const released = await deleteClaimPairs(
      trx,
      old.map((r) => r.card_number!),
      old.map((r) => r.order_number),
    );
    const stateOfOrder = new Map(released.map((r) => [r.order_ref, r.state]));
    // Claim the new numbers, grouped by card type, order and claim state; a number someone else holds is not inserted → 409.
    const groups = new Map<string, { type: CardType; ref: string; state: string; numbers: number[] }>();
    for (const u of changes) {
      const r = byId.get(u.orderItemOid)!;
      // Not frozen (checked above): reserved or sold.
      const state = stateOfOrder.get(r.order_number) ?? cardItemsOf(r);
      const key = `${r.card_type}|${r.order_number}|${state}`;
      const g = groups.get(key) ?? { type: r.card_type! as CardType, ref: r.order_number, state, numbers: [] };
      g.numbers.push(u.cardNumber);
      groups.set(key, g);
    }
    for (const g of [...groups.values()].sort((a, b) => Math.min(...a.numbers) - Math.min(...b.numbers))) {
      const got = new Set(await insertClaims(trx, g.type, g.numbers, g.ref, g.state));
      const taken = g.numbers.filter((n) => !got.has(n));
      if (taken.length > 0) throw new ApiError(409, `Card numbers already taken: ${taken.join(', ')}.`);
    }
    for (const u of changes) {
      await setItemCardNumber(trx, u.orderItemOid, u.cardNumber, CARD_NUMBER_KEY);
    }
    for (const orderId of new Set(changes.map((u) => byId.get(u.orderItemOid)!.order_id))) {
      const r = rows.find((x) => x.order_id === orderId)!;
      await insertStateChange(trx, {
        orderId,
        from: r.state,
        to: r.state,
        actor: meta.actor,
        reason: `card numbers changed${meta.reason ? `: ${meta.reason}` : ''}`.slice(0, 500),
      });
    }
    return changes.length;
  });
}
