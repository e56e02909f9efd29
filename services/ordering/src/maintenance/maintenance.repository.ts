/**
 * SQL of the maintenance-mode flag. Functions take the executor first so callers may pass a transaction.
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema';

/** The stored flag: whether maintenance mode is on, and when and by whom it last changed. */
export interface MaintenanceState {
  enabled: boolean;
  changedAt: Date;
  changedBy: string | null;
}

/** Reads the flag row (created by migration 0005). */
export async function readMaintenanceState(db: Kysely<DB>): Promise<MaintenanceState> {
  const r = await db.selectFrom('maintenance_mode').select(['enabled', 'changed_at', 'changed_by']).executeTakeFirstOrThrow();
  return { enabled: r.enabled, changedAt: r.changed_at, changedBy: r.changed_by };
}

/**
 * Sets the flag with a conditional update (`where enabled <> $enabled`): of any number of concurrent calls
 * with the same value, exactly one changes the row (and its `changed_at`/`changed_by`); the others change
 * nothing. Returns whether this call changed it.
 */
export async function setMaintenanceEnabled(db: Kysely<DB>, enabled: boolean, changedBy: string): Promise<boolean> {
  const r = await db
    .updateTable('maintenance_mode')
    .set({ enabled, changed_at: sql<Date>`now()`, changed_by: changedBy })
    .where('enabled', '<>', enabled)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** PostgreSQL notification channel of cache clears. */
export const CLEAR_CACHES_CHANNEL = 'ordering_clear_caches';

/** `NOTIFY ordering_clear_caches` with payload `senderId`, delivered when the caller's transaction commits. */
export async function notifyClearCachesChannel<T>(db: Kysely<T>, senderId: string): Promise<void> {
  await sql`select pg_notify(${CLEAR_CACHES_CHANNEL}, ${senderId})`.execute(db);
}
