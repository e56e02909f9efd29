/**
 * Tables of the battery lookup. Mirrors migration 0002.
 */
import type { ColumnType } from 'kysely';

/** `battery_records`: battery date of an active card (SIAC 8000001–8999999); null date = unknown. */
interface BatteryRecordsTable {
  card_number: number;
  /** `YYYY-MM-DD` (dates are read as strings, never as local-midnight instants). */
  battery_date: string | null;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

/** All battery tables. */
export interface BatteryTables {
  battery_records: BatteryRecordsTable;
}
