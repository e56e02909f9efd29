/**
 * The order state machine (docs/decisions.md §6, ordering spec `OrderState`), in one table.
 *
 * ```
 * pending_payment ─paid─▶ paid ─ERP sales order─▶ transferred ─shipped─▶ shipped ─▶ completed
 *        │                  │                          │                     │          │
 *        └▶ cancelled       └──────────┬───────────────┴─────────────────────┴──────────┘
 *                                      ▼ refunded (prepaid orders only: the money goes back)
 * received (invoice) ─ERP sales order─▶ transferred …;  received ─▶ cancelled
 * ```
 * Decisions: `cancelled` and `refunded` are final; a payment can be cancelled only while the order is
 * still `pending_payment` (a stale `cancelled` never undoes a `paid`); invoice orders (`received`) never
 * pass `paid` and cannot be refunded through the payment provider (a credit note is an ERP matter).
 * Every transition is a conditional UPDATE (`where state = any(allowed sources)`) plus a history row in the
 * same transaction, so two racing transitions from one state yield exactly one winner.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';
import { ORDER_STATES, type OrderState } from './order.types';
import { insertStateChange, updateOrderStateIf } from './orders.repository';

/** Allowed transitions: state → states it may move to. @internal */
export const ORDER_TRANSITIONS: Readonly<Record<OrderState, readonly OrderState[]>> = {
  pending_payment: ['paid', 'cancelled'],
  received: ['transferred', 'cancelled'],
  paid: ['transferred', 'refunded'],
  transferred: ['shipped', 'refunded'],
  shipped: ['completed', 'refunded'],
  completed: ['refunded'],
  cancelled: [],
  refunded: [],
};

/** The states an order may be in to move to `to`. */
function sourcesOf(to: OrderState): OrderState[] {
  return ORDER_STATES.filter((s) => ORDER_TRANSITIONS[s].includes(to));
}

/** Who changed the state and why (stored in `order_state_changes`). */
export interface TransitionMeta {
  /** `user:<id>`, `client:<id>`, `anonymous`, `system:<component>`, `payment:<transaction id>`, `erp:<system>`. */
  actor: string;
  reason?: string | null;
  /** Only from these states (a subset of the allowed sources), e.g. `['paid']` for the ERP hand-off. */
  from?: readonly OrderState[];
}

/** Outcome of {@link transitionOrder}. */
export type TransitionResult =
  | { changed: true; from: OrderState; to: OrderState }
  /** Nothing changed: unknown order, already in `to`, or the transition is not allowed from `current`. */
  | { changed: false; current: OrderState | null; to: OrderState };

/**
 * Moves order `orderId` to `to` if its current state allows it, in the caller's transaction `trx`, and
 * appends the history row. Illegal, stale or repeated transitions change nothing and return
 * `{ changed: false }` (never throw): callbacks that arrive twice or late are expected.
 * The row lock taken here serializes concurrent transitions of one order; the loser sees the winner's state.
 */
export async function transitionOrder(trx: Kysely<DB>, orderId: number, to: OrderState, meta: TransitionMeta): Promise<TransitionResult> {
  const allowed = sourcesOf(to).filter((s) => !meta.from || meta.from.includes(s));
  // One statement locks the row and applies the change only from an allowed source, so the check and the
  // change are one atomic step.
  const found = await updateOrderStateIf(trx, orderId, to, allowed);
  const row = found && { from_state: found.from_state as OrderState, changed: found.changed };
  if (!row) return { changed: false, current: null, to };
  if (!row.changed) return { changed: false, current: row.from_state, to };
  await insertStateChange(trx, { orderId, from: row.from_state, to, actor: meta.actor, reason: meta.reason ?? null });
  return { changed: true, from: row.from_state, to };
}

/** Thrown by {@link requireTransition} when a transition a caller insists on is not allowed now. @internal */
export class IllegalTransitionError extends Error {
  constructor(
    readonly orderId: number,
    readonly current: OrderState | null,
    readonly to: OrderState,
  ) {
    super(current === null ? `order ${orderId} does not exist` : `order ${orderId} cannot move from ${current} to ${to}`);
    this.name = 'IllegalTransitionError';
  }
}

/** Like {@link transitionOrder} but throws {@link IllegalTransitionError} when nothing changed. @internal */
export async function requireTransition(trx: Kysely<DB>, orderId: number, to: OrderState, meta: TransitionMeta): Promise<{ from: OrderState; to: OrderState }> {
  const r = await transitionOrder(trx, orderId, to, meta);
  if (!r.changed) throw new IllegalTransitionError(orderId, r.current, to);
  return r;
}
