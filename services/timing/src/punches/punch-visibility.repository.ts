/**
 * The readers' visibility rule run on its own: the live hub's re-check of a notified id, and what the visible
 * head waits on. The rule itself (`visibleRow`, the horizon `VISIBLE_XMIN`) is spelled once, in
 * db/punch-visibility-rule.ts, which the punch statements, the counters and the event status embed too.
 */
import type pg from 'pg';
import { VISIBLE_XMIN, visibleRow } from '../db/punch-visibility-rule';

/**
 * Whether punch `id` passes the readers' visibility rule now (the live hub's re-check after a notification);
 * a missing row counts as visible (the caller wakes its readers, which re-read). Throws the driver's error.
 */
export async function isPunchVisible(db: pg.Pool | pg.ClientBase, id: number): Promise<boolean> {
  const { rows } = await db.query<{ visible: boolean }>(`select ${visibleRow('p')} as visible from punches p where p.id = $1`, [id]);
  return rows.length === 0 || rows[0].visible;
}

/**
 * What the visible head waits on now ({@link readVisibilityWait}; spec `PunchVisibility`): `waitSeconds`, how
 * long the transaction at the horizon has been running (0 when nothing holds the head back: the horizon is the
 * snapshot's xmax); `waitsOn`, that transaction (its backend's pid, application or backend type and state; a
 * prepared transaction's gid; else its xid), absent when none.
 */
export interface VisibilityWait {
  waitSeconds: number;
  waitsOn?: string;
}

/**
 * Reads {@link VisibilityWait} in one statement: the horizon ({@link VISIBLE_XMIN}) and, when it is a running
 * xid, its backend in `pg_stat_activity` or its entry in `pg_prepared_xacts` (both cluster-wide). Only the
 * service's own writers in flight, a prepared transaction or, for a moment, an xid of unknown standing can be
 * there (migration 0012). Throws the driver's error.
 */
export async function readVisibilityWait(db: pg.Pool | pg.ClientBase): Promise<VisibilityWait> {
  const { rows } = await db.query<{ seconds: number; waits_on: string | null }>(`
    with h as materialized (select ${VISIBLE_XMIN} as x, pg_snapshot_xmax(pg_current_snapshot()) as xmax)
    select coalesce(extract(epoch from clock_timestamp() - coalesce(a.xact_start, p.prepared)), 0)::float8 as seconds,
      case when a.pid is not null then format('pid %s (%s, %s)', a.pid, coalesce(nullif(a.application_name, ''), a.backend_type), a.state)
           when p.gid is not null then format('prepared transaction %s', p.gid)
           when h.x < h.xmax then format('xid %s', h.x) end as waits_on
    from h
    left join pg_catalog.pg_stat_activity a on h.x < h.xmax and a.backend_xid = xid(h.x)
    left join pg_catalog.pg_prepared_xacts p on h.x < h.xmax and p.transaction = xid(h.x)`);
  const waitSeconds = Math.max(0, rows[0].seconds);
  return rows[0].waits_on === null ? { waitSeconds } : { waitSeconds, waitsOn: rows[0].waits_on };
}
