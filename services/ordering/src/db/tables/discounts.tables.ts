/**
 * Tables of discount campaigns, codes and redemptions (docs/decisions.md §6). Mirrors migrations 0004 and 0013.
 */
import type { ColumnType, Generated } from 'kysely';

/** `discount_campaigns`: the terms shared by the codes of one campaign. */
export interface DiscountCampaignsTable {
  id: Generated<number>;
  name: string;
  description: string | null;
  /** `percent` of the applicable net amount, or a `fixedAmount` of net cents per order. */
  kind: string;
  /** Percentage as an exact decimal string (`numeric(5,2)`, e.g. `"12.50"`); null for `fixedAmount`. */
  percent: ColumnType<string | null, string | number | null, string | number | null>;
  /** Net cents deducted once per order (kind `fixedAmount`); null for `percent`. */
  amount_cents: number | null;
  /** ISO 4217 currency of `amount_cents` and `minimum_order_net_cents`. */
  currency: string;
  /** Start of validity (inclusive, UTC); null = immediately. */
  valid_from: Date | null;
  /** End of validity (exclusive, UTC); null = open-ended. */
  valid_to: Date | null;
  /** Minimum net item total (before discounts) in cents. */
  minimum_order_net_cents: ColumnType<number, number | undefined, number>;
  /** The discount applies only to these article numbers; empty = all. */
  restricted_article_numbers: ColumnType<string[], string[] | undefined, string[]>;
  max_redemptions_per_code: number;
  /** Who created the campaign (`user:<id>` / `client:<id>`). */
  created_by: string | null;
  created_at: ColumnType<Date, Date | undefined, never>;
}

/** `discount_codes`: one code (upper case) and its redemption counter (`redemptions <= max_redemptions`). */
interface DiscountCodesTable {
  id: Generated<number>;
  campaign_id: number;
  code: string;
  max_redemptions: number;
  redemptions: ColumnType<number, number | undefined, number>;
  created_at: ColumnType<Date, Date | undefined, never>;
}

/** `discount_redemptions`: which order redeemed which code, and the net cents it deducted. */
interface DiscountRedemptionsTable {
  code_id: number;
  order_id: number;
  net_amount_cents: number;
  created_at: ColumnType<Date, Date | undefined, never>;
  /** When the short hold of an unpaid order ended and the use went back to the pool; null while held or used (migration 0013). */
  released_at: Date | null;
}

/** All discount tables. */
export interface DiscountTables {
  discount_campaigns: DiscountCampaignsTable;
  discount_codes: DiscountCodesTable;
  discount_redemptions: DiscountRedemptionsTable;
}
