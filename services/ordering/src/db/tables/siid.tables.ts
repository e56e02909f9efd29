/**
 * Tables of the card-number (SIID) area. Mirrors migration 0002.
 */
import type { ColumnType } from 'kysely';

/**
 * `card_numbers`: every claimed card number. `service_id` is the primary key across all card types, so a
 * number can be claimed once only (docs/decisions.md §6: a database constraint, not a check).
 */
interface CardNumbersTable {
  service_id: number;
  card_type: string;
  /** `reserved` by an order not yet paid/transferred, `sold` afterwards. */
  state: ColumnType<string, string | undefined, string>;
  /** Reference of the claiming order (e.g. its id or number); null for numbers sold outside the shop. */
  order_ref: string | null;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

/** All SIID tables. */
export interface SiidTables {
  card_numbers: CardNumbersTable;
}
