/**
 * Tables of the catalogue (articles, BOM slots, localized product option labels). Mirrors migration 0002.
 */
import type { ColumnType, Generated } from 'kysely';
import type { components } from '../../generated/openapi';

/** Texts by culture (BCP 47 tag → text); `en` is always present in names and is the fallback. */
export type LocalizedText = Record<string, string>;

/**
 * A configuration option of an article as stored (labels are not stored here: they come from the
 * imported localized product options or the built-in labels).
 */
export interface AttributeDefinition {
  /** Key of the order item's `configuration`, e.g. `feedbackSignal`, `cardNumber`. */
  key: string;
  type: components['schemas']['ConfigurableAttribute']['type'];
  required: boolean;
  /** Maximum length of a `text` value; null for other types. */
  maxLength: number | null;
  /** Values of a `select` attribute, in display order; empty for other types. */
  options: string[];
  defaultValue: string | null;
}

/** `articles`: ERP articles; `is_shop_article` and `user_group` are the ERP's two custom fields (docs/decisions.md §6). */
export interface ArticlesTable {
  id: Generated<number>;
  article_number: string;
  erp_id: string | null;
  erp_version: string | null;
  is_shop_article: ColumnType<boolean, boolean | undefined, boolean>;
  /** Who may order it: `public` < `retailer` < `internal`. */
  user_group: ColumnType<string, string | undefined, string>;
  category: string | null;
  name: ColumnType<LocalizedText, string, string>;
  description: ColumnType<LocalizedText, string | undefined, string>;
  /** Net unit price (excluding VAT) in cents of `currency`. */
  net_price_cents: number;
  currency: ColumnType<string, string | undefined, string>;
  /** VAT rate in percent as an exact decimal string (`numeric(5,2)`), e.g. `"19.00"`. */
  vat_rate_percent: ColumnType<string, string | number, string | number>;
  card_type: string | null;
  is_subitem_only: ColumnType<boolean, boolean | undefined, boolean>;
  configurable_attributes: ColumnType<AttributeDefinition[], string | undefined, string>;
  image_url: string | null;
  sort_order: ColumnType<number, number | undefined, number>;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

/** `article_bom_items`: sub item slots of a main article; `position` is the `articleBomItemOid`. */
export interface ArticleBomItemsTable {
  main_article_number: string;
  position: number;
  default_article_number: string;
  valid_article_numbers: string[];
  /** Quantity per main item. */
  quantity: ColumnType<number, number | undefined, number>;
  default_configuration: ColumnType<Record<string, string>, string | undefined, string>;
  is_locked: ColumnType<boolean, boolean | undefined, boolean>;
  is_configurable: ColumnType<boolean, boolean | undefined, boolean>;
  is_optional: ColumnType<boolean, boolean | undefined, boolean>;
  excluded_custom_attributes: ColumnType<string[], string[] | undefined, string[]>;
}

/** One localized option value label as stored in `localized_product_options.options`. */
interface StoredOptionLabel {
  value: string;
  label: string;
}

/** `localized_product_options`: labels of configurable attributes per culture (maintenance import). */
export interface LocalizedProductOptionsTable {
  culture: string;
  attribute_key: string;
  label: string;
  options: ColumnType<StoredOptionLabel[], string | undefined, string>;
}

/** All catalogue tables. */
export interface CatalogTables {
  articles: ArticlesTable;
  article_bom_items: ArticleBomItemsTable;
  localized_product_options: LocalizedProductOptionsTable;
}
