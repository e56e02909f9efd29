/**
 * Shop catalogue (`listShopArticles`, `getShopArticle`, `ArticleDTO`; docs/decisions.md §6): listing and lookup of shop
 * articles for a caller's user group, localized; the domain view of articles for the order pipeline;
 * card products of the card-reservation area (tag `card-reservation`).
 */
import type { Kysely } from 'kysely';
import { ApiError, JsonBody, validationError } from '@sports-timing/shared';
import type { UserGroup } from '../auth/principal';
import type { DB } from '../db/schema';
import { CARD_TYPES, type CardType } from '../siid/card-types';
import { BUILT_IN_LABEL_CULTURES, BUILT_IN_LABELS } from './attribute-labels';
import * as repo from './catalog.repository';
import { toArticleDTO, toCatalogArticle, type ArticleDTO, type CatalogArticle, type ConfigurableAttributeDTO, type DtoContext } from './catalog.mapper';
import type { AttributeDefinition } from '../db/tables/catalog.tables';
import { localize, resolveCulture } from '../culture/culture';
import { isAvailableTo } from './user-groups';
import type { ArticleListCache } from './catalog-caches';

/** Most article numbers in `filterByArticleNumbers` (spec). */
const MAX_FILTER_NUMBERS = 200;

/** Loads articles with their BOM slots (one statement), ordered by sort order then article number. */
async function loadArticles(db: Kysely<DB>, sel: repo.ArticleSelection = {}): Promise<CatalogArticle[]> {
  const rows = await repo.selectArticlesWithBom(db, sel);
  return rows.map(({ bom_items, ...row }) => toCatalogArticle(row, bom_items));
}

/**
 * Articles by number, whether shop articles or not (the order pipeline checks `isShopArticle`,
 * availability and BOM rules itself). Unknown numbers are absent from the map.
 */
export async function findCatalogArticles(db: Kysely<DB>, articleNumbers: readonly string[]): Promise<Map<string, CatalogArticle>> {
  const unique = [...new Set(articleNumbers)];
  const articles = await loadArticles(db, { numbers: unique });
  return new Map(articles.map((a) => [a.articleNumber, a]));
}

/** Labels of configurable attributes in one resolved culture. */
export interface AttributeLabeler {
  /** The culture labels are taken from (after fallback). */
  culture: string;
  /** The attribute with labels: imported for `culture`, else built-in, else the key/value itself. */
  attribute(def: AttributeDefinition): ConfigurableAttributeDTO;
}

/**
 * Attribute labels for the preferred languages: the culture is resolved among the cultures with imported
 * product options and the built-in ones (en, de, fr); per label the imported text wins, then the built-in
 * text of the culture's language, then English, then the key or value itself.
 */
export async function attributeLabeler(db: Kysely<DB>, preferences: readonly string[]): Promise<AttributeLabeler> {
  const imported = await repo.selectOptionLabelCultures(db);
  // Imported spellings last: on a case-insensitive tie the imported culture is the one resolved.
  const culture = resolveCulture(preferences, [...BUILT_IN_LABEL_CULTURES, ...imported]);
  const rows = imported.includes(culture) ? await repo.selectOptionLabels(db, culture) : [];
  const stored = new Map(rows.map((r) => [r.attribute_key, r]));
  const lang = culture.split('-')[0].toLowerCase();
  const builtIn = (texts: Record<string, string> | undefined): string | undefined => texts?.[culture] ?? texts?.[lang] ?? texts?.en;
  return {
    culture,
    attribute(def) {
      const row = stored.get(def.key);
      const builtin = BUILT_IN_LABELS[def.key];
      const optionLabels = new Map((row?.options ?? []).map((o) => [o.value, o.label]));
      return {
        key: def.key,
        label: row?.label ?? builtIn(builtin?.label) ?? def.key,
        type: def.type,
        required: def.required,
        maxLength: def.type === 'text' ? def.maxLength : null,
        options: def.options.map((value) => ({ value, label: optionLabels.get(value) ?? builtIn(builtin?.options?.[value]) ?? value })),
        defaultValue: def.defaultValue,
      };
    },
  };
}

async function dtoContext(
  db: Kysely<DB>,
  callerGroup: UserGroup,
  preferences: readonly string[],
  known: ReadonlyMap<string, CatalogArticle>,
  referenced: readonly string[],
): Promise<DtoContext> {
  const missing = referenced.filter((n) => !known.has(n));
  const extra = missing.length > 0 ? await findCatalogArticles(db, missing) : new Map<string, CatalogArticle>();
  const labeler = await attributeLabeler(db, preferences);
  return {
    isAvailable: (a) => isAvailableTo(a.userGroup, callerGroup),
    localize: (texts) => localize(texts, preferences),
    nameOf: (n) => {
      const a = known.get(n) ?? extra.get(n);
      return (a && localize(a.names, preferences)) ?? n;
    },
    attribute: (d) => labeler.attribute(d),
  };
}

/** Parameters of {@link shopArticleListBody} (spec `listShopArticles`). */
export interface ShopArticleQuery {
  /** The caller's user group (see `effectiveUserGroup`). */
  callerGroup: UserGroup;
  includeUnavailableArticles: boolean;
  includeSubitemArticles: boolean;
  /** Raw comma list; empty or absent = no filter. */
  filterByArticleNumbers: string | undefined;
  /** Preferred cultures, most preferred first (`parseAcceptLanguage`). */
  preferences: readonly string[];
}

/** The article numbers of a `filterByArticleNumbers` value; 400 above {@link MAX_FILTER_NUMBERS}. */
function parseArticleNumberFilter(raw: string | undefined): Set<string> {
  const numbers = new Set(
    (raw ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
  if (numbers.size > MAX_FILTER_NUMBERS) throw validationError({ filterByArticleNumbers: [`At most ${MAX_FILTER_NUMBERS} article numbers.`] });
  return numbers;
}

/**
 * Shop articles per spec `listShopArticles` rules 1–3: the listed articles are the shop articles named by the
 * filter (all without one), sub-item-only ones only with `includeSubitemArticles`; with that flag, every shop
 * article named in a BOM slot of a listed article is added (one level). Unless `includeUnavailableArticles`,
 * articles the caller's group may not order are left out at both steps. Ordered by sort order, then article
 * number. The answer comes from `lists`, the app's list cache over `db` (`catalog-caches.ts`); the JSON body is
 * serialized once per cached list (and gzip-compressed once on first demand), so that the hot read does no
 * per-request serialization.
 */
export async function shopArticleListBody(db: Kysely<DB>, lists: ArticleListCache, q: ShopArticleQuery): Promise<JsonBody<ArticleDTO[]>> {
  const filter = parseArticleNumberFilter(q.filterByArticleNumbers);
  const key = JSON.stringify([q.callerGroup, q.includeUnavailableArticles, q.includeSubitemArticles, [...filter].sort(), q.preferences]);
  return lists.get(key, async () => new JsonBody(await buildShopArticleList(db, q, filter)));
}

async function buildShopArticleList(db: Kysely<DB>, q: ShopArticleQuery, filter: Set<string>): Promise<ArticleDTO[]> {
  const all = await loadArticles(db, { shopOnly: true });
  const byNumber = new Map(all.map((a) => [a.articleNumber, a]));
  const keep = (a: CatalogArticle) => q.includeUnavailableArticles || isAvailableTo(a.userGroup, q.callerGroup);
  const listed = all.filter((a) => (filter.size === 0 || filter.has(a.articleNumber)) && (q.includeSubitemArticles || !a.isSubitemOnly) && keep(a));
  const result = new Set(listed);
  if (q.includeSubitemArticles) {
    for (const main of listed) {
      for (const slot of main.bomItems) {
        for (const n of slot.validArticleNumbers) {
          const sub = byNumber.get(n);
          if (sub && keep(sub)) result.add(sub);
        }
      }
    }
  }
  // `all` is in catalogue order: filtering it keeps that order.
  const ordered = all.filter((a) => result.has(a));
  const referenced = ordered.flatMap((a) => a.bomItems.map((b) => b.defaultArticleNumber));
  const ctx = await dtoContext(db, q.callerGroup, q.preferences, byNumber, referenced);
  return ordered.map((a) => toArticleDTO(a, ctx));
}

/**
 * One shop article (spec `getShopArticle`): 404 NOT_FOUND when it does not exist or is not a shop
 * article; an article the caller's group may not order comes with `isAvailable: false`.
 */
export async function getShopArticle(db: Kysely<DB>, articleNumber: string, callerGroup: UserGroup, preferences: readonly string[]): Promise<ArticleDTO> {
  const [article] = await loadArticles(db, { shopOnly: true, numbers: [articleNumber] });
  if (!article) throw new ApiError(404, `Article ${articleNumber} not found.`);
  const ctx = await dtoContext(
    db,
    callerGroup,
    preferences,
    new Map([[article.articleNumber, article]]),
    article.bomItems.map((b) => b.defaultArticleNumber),
  );
  return toArticleDTO(article, ctx);
}

/**
 * The card product of each card type (card-reservation area): the shop article with that card type that
 * is not sub-item-only, first by sort order then article number. Types without one are absent.
 */
export async function cardProducts(db: Kysely<DB>): Promise<Map<CardType, CatalogArticle>> {
  const cards = await loadArticles(db, { shopOnly: true, cardsOnly: true });
  const result = new Map<CardType, CatalogArticle>();
  for (const t of CARD_TYPES) {
    const product = cards.find((a) => a.cardType === t && !a.isSubitemOnly);
    if (product) result.set(t, product);
  }
  return result;
}

/** A shop card article by number (`productId` of the card-reservation area), or null. */
export async function findCardArticle(db: Kysely<DB>, articleNumber: string): Promise<CatalogArticle | null> {
  const [article] = await loadArticles(db, { shopOnly: true, cardsOnly: true, numbers: [articleNumber] });
  return article ?? null;
}
