/**
 * Tables of the maintenance area. Mirrors migration 0005.
 */
import type { ColumnType } from 'kysely';

/** `maintenance_mode`: exactly one row (primary key `singleton = true`), the flag shared by all instances. */
interface MaintenanceModeTable {
  singleton: ColumnType<boolean, true | undefined, never>;
  enabled: boolean;
  /** When the flag last changed (UTC). */
  changed_at: ColumnType<Date, Date | undefined, Date>;
  /** Who changed it: `user:<id>:<name>` or `client:<id>:<name>`; null for the initial row. */
  changed_by: string | null;
}

/** All maintenance tables. */
export interface MaintenanceTables {
  maintenance_mode: MaintenanceModeTable;
}
