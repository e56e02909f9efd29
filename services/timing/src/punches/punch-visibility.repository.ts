/**
 * The readers' visibility rule of the gap-free protocol (`punches.repository.ts`, module comment): a punch is
 * exposed only when its writer's transaction id is below the xmin of the reading statement's snapshot. Used
 * by the punch statements' scope conditions and by the live hub's re-check of a notified id; the rendered page
 * statements (`sql/*.sql`) state the same rule through their `vis` CTE and visible head.
 */
import type pg from 'pg';

/** The rule as an SQL condition on the punch row `alias`, evaluated in the statement's own snapshot. */
export function visibleRow(alias: string): string {
  return `${alias}.txid < (select pg_snapshot_xmin(pg_current_snapshot()))`;
}

/**
 * Whether punch `id` passes the readers' visibility rule now (the live hub's re-check after a notification);
 * a missing row counts as visible (the caller wakes its readers, which re-read). Throws the driver's error.
 */
export async function isPunchVisible(db: pg.Pool | pg.ClientBase, id: number): Promise<boolean> {
  const { rows } = await db.query<{ visible: boolean }>(`select ${visibleRow('p')} as visible from punches p where p.id = $1`, [id]);
  return rows.length === 0 || rows[0].visible;
}
