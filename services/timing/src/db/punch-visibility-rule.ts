/**
 * The readers' visibility rule of the gap-free protocol (punches/punches.repository.ts, module comment), the one
 * place it is spelled: a punch is exposed only when its writer's transaction id is below the statement's
 * *own-writers horizon*, `timing.punch_visible_xmin()` (migration 0012): the oldest running xid of the snapshot
 * that is not known to be a stranger (a transaction without the punch writer lock, which can never insert a
 * punch), else the snapshot's xmax. Unlike the snapshot's xmin, no transaction elsewhere on the cluster can hold
 * it back. The same rule filters the `punch_counts` deltas (their `txid` is the writer's). Used by the punch
 * statements' scope conditions and counters, the event status (events/event-status.repository.ts) and the live
 * hub's re-check of a notified id (punches/punch-visibility.repository.ts). In `db/` because `events/` sits
 * below `punches/` (docs/architecture.md "Folder layers").
 */

/**
 * The horizon as an SQL expression (xid8). Evaluate it once per statement (`(select …)`, or a CTE): a
 * session refreshes its list of strangers while evaluating it, so two evaluations in one statement may differ.
 */
export const VISIBLE_XMIN = 'timing.punch_visible_xmin()';

/**
 * The rule as an SQL condition on the row `alias` (a punch, or a `punch_counts` delta; null: the statement's
 * only table, unqualified), in the statement's own snapshot; `xmin` is the statement's one evaluation of
 * {@link VISIBLE_XMIN} (default: an uncorrelated subquery, run once).
 */
export function visibleRow(alias: string | null, xmin = `(select ${VISIBLE_XMIN})`): string {
  return `${alias === null ? '' : `${alias}.`}txid < ${xmin}`;
}

/**
 * The visible head: the highest punch id the readers' rule exposes in the statement's snapshot, 0 when none (a
 * backward walk of the primary key past the few newest rows that are still hidden); `xmin` the statement's
 * one evaluation of the horizon.
 */
export function visibleHead(xmin: string): string {
  return `coalesce((select max(h.id) from punches h where ${visibleRow('h', xmin)}), 0)::text`;
}

/** The statement's one evaluation of the horizon in statements that define the CTE `vis` (page, counters). */
export const VIS_XMIN = '(select xmin from vis)';

/** CTE `vis`: the horizon ({@link VISIBLE_XMIN}), evaluated once for the whole statement. */
export const VIS_CTE = `vis as materialized (select ${VISIBLE_XMIN} as xmin)`;
