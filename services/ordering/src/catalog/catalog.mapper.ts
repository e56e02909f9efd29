/**
 * Catalogue rows → domain articles → spec DTOs (`ArticleDTO`, `ArticleBomItemDTO`,
 * `ConfigurableAttribute`, ordering spec §2.5, §2.7).
 */
import type { components } from '../generated/openapi';
import { isUserGroup } from './user-groups';
import type { UserGroup } from '../auth/principal';
import { isCardType, type CardType } from '../siid/card-types';
import type { ArticleRow, BomItemRow } from './catalog.repository';
import type { AttributeDefinition, LocalizedText } from '../db/tables/catalog.tables';

type Schemas = components['schemas'];
/** Spec `ArticleDTO`. */
export type ArticleDTO = Schemas['ArticleDTO'];
/** Spec `ArticleBomItemDTO`. */
type ArticleBomItemDTO = Schemas['ArticleBomItemDTO'];
/** Spec `ConfigurableAttribute`. */
export type ConfigurableAttributeDTO = Schemas['ConfigurableAttribute'];

/** A sub item slot of a main article (bill of materials). */
export interface CatalogBomItem {
  /** `articleBomItemOid`: 1-based position within the main article. */
  position: number;
  /** Article preselected in the slot (one of `validArticleNumbers`). */
  defaultArticleNumber: string;
  /** Articles that may fill the slot. */
  validArticleNumbers: string[];
  /** Quantity per main item. */
  quantity: number;
  /** Preset configuration of the slot's item. */
  defaultConfiguration: Record<string, string>;
  /** Shown but not changeable (article, quantity and configuration fixed). */
  isLocked: boolean;
  /** The customer may set configuration options of the slot's item. */
  isConfigurable: boolean;
  /** The customer may leave the slot out. */
  isOptional: boolean;
  /** Attribute keys of the slot's article that do not apply within this set. */
  excludedCustomAttributes: string[];
}

/** A catalogue article with its BOM slots (the domain view used by listings and the order pipeline). */
export interface CatalogArticle {
  articleNumber: string;
  erpId: string | null;
  erpVersion: string | null;
  isShopArticle: boolean;
  /** Lowest user group that may order it. */
  userGroup: UserGroup;
  category: string | null;
  /** Name by culture (`en` always present). */
  names: LocalizedText;
  /** Description by culture (may be empty). */
  descriptions: LocalizedText;
  /** Net unit price in cents of `currency` (excluding VAT). */
  netPriceCents: number;
  /** ISO 4217. */
  currency: string;
  /** VAT rate in percent, e.g. 19 or 8.1. */
  vatRatePercent: number;
  cardType: CardType | null;
  isSubitemOnly: boolean;
  attributes: AttributeDefinition[];
  imageUrl: string | null;
  sortOrder: number;
  /** Slots ordered by position; empty for simple articles. */
  bomItems: CatalogBomItem[];
}

/** Domain article from its row and its BOM rows. */
export function toCatalogArticle(row: ArticleRow, bomRows: readonly BomItemRow[]): CatalogArticle {
  return {
    articleNumber: row.article_number,
    erpId: row.erp_id,
    erpVersion: row.erp_version,
    isShopArticle: row.is_shop_article,
    // The column's check constraint admits only the three groups; `internal` is the safe reading otherwise.
    userGroup: isUserGroup(row.user_group) ? row.user_group : 'internal',
    category: row.category,
    names: row.name,
    descriptions: row.description,
    netPriceCents: row.net_price_cents,
    currency: row.currency,
    vatRatePercent: Number(row.vat_rate_percent),
    cardType: isCardType(row.card_type) ? row.card_type : null,
    isSubitemOnly: row.is_subitem_only,
    attributes: row.configurable_attributes,
    imageUrl: row.image_url,
    sortOrder: row.sort_order,
    bomItems: bomRows
      .map((b) => ({
        position: b.position,
        defaultArticleNumber: b.default_article_number,
        validArticleNumbers: b.valid_article_numbers,
        quantity: b.quantity,
        defaultConfiguration: b.default_configuration,
        isLocked: b.is_locked,
        isConfigurable: b.is_configurable,
        isOptional: b.is_optional,
        excludedCustomAttributes: b.excluded_custom_attributes,
      }))
      .sort((a, b) => a.position - b.position),
  };
}

/**
 * Gross unit price in cents: net plus VAT at `vatRatePercent`, the VAT rounded half away from zero to
 * whole cents (spec conventions). Exact integer arithmetic on the rate in hundredths of a percent.
 */
export function grossCents(netCents: number, vatRatePercent: number): number {
  const basisPoints = Math.round(vatRatePercent * 100);
  const vat = Math.floor((Math.abs(netCents) * basisPoints + 5_000) / 10_000);
  return netCents + Math.sign(netCents) * vat;
}

/** What a DTO needs besides the article: the caller's availability, texts and labels. */
export interface DtoContext {
  /** Whether the caller's group may order the article. */
  isAvailable(article: CatalogArticle): boolean;
  /** Localized text (culture → text) for the request's languages, English fallback. */
  localize(texts: LocalizedText): string | null;
  /** Localized name of another article (BOM defaults); the article number when unknown. */
  nameOf(articleNumber: string): string;
  /** Attribute with its localized labels. */
  attribute(def: AttributeDefinition): ConfigurableAttributeDTO;
}

function bomItemDTO(item: CatalogBomItem, ctx: DtoContext): ArticleBomItemDTO {
  return {
    articleBomItemOid: item.position,
    orderItem: {
      articleNumber: item.defaultArticleNumber,
      articleName: ctx.nameOf(item.defaultArticleNumber),
      quantity: item.quantity,
      configuration: { ...item.defaultConfiguration },
      articleBomItemOid: item.position,
    },
    validArticleNumbers: [...item.validArticleNumbers],
    isLocked: item.isLocked,
    isConfigurable: item.isConfigurable,
    isOptional: item.isOptional,
    excludedCustomAttributes: [...item.excludedCustomAttributes],
  };
}

/** Spec `ArticleDTO` of an article for one request. */
export function toArticleDTO(a: CatalogArticle, ctx: DtoContext): ArticleDTO {
  const dto: ArticleDTO = {
    articleNumber: a.articleNumber,
    name: ctx.localize(a.names) ?? a.articleNumber,
    description: ctx.localize(a.descriptions),
    category: a.category,
    netPriceCents: a.netPriceCents,
    grossPriceCents: grossCents(a.netPriceCents, a.vatRatePercent),
    currency: a.currency,
    vatRatePercent: a.vatRatePercent,
    cardType: a.cardType,
    isAvailable: ctx.isAvailable(a),
    userGroup: a.userGroup,
    isSubitemOnly: a.isSubitemOnly,
    bomItems: a.bomItems.map((b) => bomItemDTO(b, ctx)),
    configurableAttributes: a.attributes.map((d) => ctx.attribute(d)),
    imageUrl: a.imageUrl,
  };
  if (a.erpVersion !== null) dto.erpVersion = a.erpVersion;
  return dto;
}
