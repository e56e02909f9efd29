/**
 * Import of shop articles from the ERP (`importArticles`; docs/decisions.md §6 ERP):
 * the ERP's custom fields decide "shop article" (`shopArticle`), "user group" (`shopUserGroup`), category,
 * card type, sub-item-only and configurable attributes; prices (net EUR, scale 1) and the sales BOM come
 * along; translations become the localized texts.
 *
 * - Everything is read from the ERP first; an ERP failure (→ `ErpError`) therefore writes nothing.
 * - Articles whose stored `erp_version` equals the ERP's are skipped unless `force`.
 * - Articles that are no longer shop articles (field cleared, inactive, deleted in the ERP) leave the shop.
 * - Each article is written in its own short transaction with a version-conditional upsert, so concurrent
 *   imports (two admins, an import racing a webhook) are safe and end in the same state.
 * - When anything changed, the in-process caches are cleared on every instance (the shop's article list
 *   may be cached).
 */
import type { Insertable, Kysely } from 'kysely';
import type { Logger } from 'pino';
import { USER_GROUPS } from '../auth/principal';
import type { DB } from '../db/schema';
import { CARD_TYPES } from '../siid/card-types';
import { customAttributeValue, type ErpClient } from '../erp/erp.client';
import {
  ERP_ATTRIBUTE_KEYS,
  type ErpArticle,
  type ErpArticlePrice,
  type ErpCustomAttributeDefinition,
  type ErpPropertyTranslation,
  type ErpSetSlotConfiguration,
  type ErpSystem,
} from '../erp/erp.types';
import type { ErpEntityHandler } from '../erp/erp-webhook.service';
import type { CacheRegistry } from '../maintenance/caches';
import * as repo from './catalog-import.repository';
import type { ArticleBomItemsTable, ArticlesTable, AttributeDefinition } from '../db/tables/catalog.tables';

/** Counts of one import run (ordering spec `ArticleImportResult`). */
export interface ArticleImportResult {
  erpSystem: ErpSystem;
  /** Articles read from the ERP. */
  read: number;
  /** Shop articles inserted or updated. */
  imported: number;
  /** Shop articles skipped because their ERP version was already stored. */
  unchanged: number;
  /** Articles that left the shop. */
  removed: number;
  /** ERP shop articles that could not be imported (no EUR price, invalid BOM …), by article number. */
  rejected: { articleNumber: string; reason: string }[];
}

/** Known configurable attributes (the ERP lists only their keys). Unknown keys become free text ≤ 100. */
const KNOWN_CONFIGURABLE_ATTRIBUTES: Readonly<Record<string, AttributeDefinition>> = {
  cardNumber: { key: 'cardNumber', type: 'text', required: false, maxLength: 7, options: [], defaultValue: null },
  personalDataFirstName: { key: 'personalDataFirstName', type: 'text', required: false, maxLength: 20, options: [], defaultValue: null },
  personalDataLastName: { key: 'personalDataLastName', type: 'text', required: false, maxLength: 20, options: [], defaultValue: null },
  feedbackSignal: {
    key: 'feedbackSignal',
    type: 'select',
    required: true,
    maxLength: null,
    options: ['beepAndFlash', 'flashOnly', 'beepOnly', 'silent'],
    defaultValue: 'beepAndFlash',
  },
};

/** VAT rate per weclapp `taxRateType` (German rates; the shop is operated from Germany). */
const VAT_BY_TAX_RATE_TYPE: Record<string, number> = { STANDARD: 19, REDUCED: 7, ZERO: 0 };

/** The definitions of the article custom fields of one ERP system. */
interface ArticleFields {
  shop: ErpCustomAttributeDefinition;
  group: ErpCustomAttributeDefinition;
  category: ErpCustomAttributeDefinition | null;
  cardType: ErpCustomAttributeDefinition | null;
  subitemOnly: ErpCustomAttributeDefinition | null;
  configurable: ErpCustomAttributeDefinition | null;
  setConfiguration: ErpCustomAttributeDefinition | null;
}

async function articleFields(erp: ErpClient, system: ErpSystem): Promise<ArticleFields> {
  const optional = (key: string) => erp.attributeDefinition(system, key).catch(() => null);
  const [shop, group, category, cardType, subitemOnly, configurable, setConfiguration] = await Promise.all([
    erp.attributeDefinition(system, ERP_ATTRIBUTE_KEYS.shopArticle),
    erp.attributeDefinition(system, ERP_ATTRIBUTE_KEYS.shopUserGroup),
    optional(ERP_ATTRIBUTE_KEYS.shopCategory),
    optional(ERP_ATTRIBUTE_KEYS.shopCardType),
    optional(ERP_ATTRIBUTE_KEYS.shopSubitemOnly),
    optional(ERP_ATTRIBUTE_KEYS.shopConfigurableAttributes),
    optional(ERP_ATTRIBUTE_KEYS.shopSetConfiguration),
  ]);
  return { shop, group, category, cardType, subitemOnly, configurable, setConfiguration };
}

/** Exact cents of a decimal string (`"50.34"` → 5034); null when it is not a non-negative amount. */
function decimalToCents(text: string): number | null {
  const m = /^(\d{1,12})(?:\.(\d{1,2})(0*))?$/.exec(text.trim());
  if (!m) return null;
  return Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
}

/** The mapped rows of one ERP article, or why it cannot be a shop article. */
type Mapped = { ok: true; isShop: boolean; row: Insertable<ArticlesTable>; bom: Insertable<ArticleBomItemsTable>[] } | { ok: false; reason: string };

/**
 * The shop's net EUR price among an article's weclapp prices: the first net price list (`NET1`), for every
 * customer (no `customerId`), valid at `now` (epoch ms; `startDate`/`endDate` absent = open), from one unit on
 * (the lowest `SCALE_FROM` scale); undefined when there is none.
 */
function listPrice(prices: ErpArticlePrice[], now: number): ErpArticlePrice | undefined {
  const usable = prices.filter(
    (p) =>
      p.currencyName === 'EUR' &&
      p.salesChannel === 'NET1' &&
      !p.customerId &&
      (p.startDate ?? -Infinity) <= now &&
      now < (p.endDate ?? Infinity) &&
      p.priceScaleType !== 'SCALE_TO',
  );
  return usable.sort((x, y) => Number(x.priceScaleValue) - Number(y.priceScaleValue))[0];
}

/** The set configurator rules of an article's custom attribute `shopSetConfiguration` by position; null when it is not a JSON array. */
function setSlots(text: string | boolean | null): Map<number, ErpSetSlotConfiguration> | null {
  if (typeof text !== 'string' || text.trim() === '') return new Map();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || !parsed.every((x) => x !== null && typeof x === 'object' && Number.isInteger((x as ErpSetSlotConfiguration).positionNumber)))
    return null;
  return new Map((parsed as ErpSetSlotConfiguration[]).map((x) => [x.positionNumber, x]));
}

/**
 * Maps an ERP article to the `articles` row and its BOM slots (pure): texts in the tenant language plus
 * `translations` (weclapp's property translations of `name` and `description`), the set configurator rules
 * from `shopSetConfiguration` (docs/weclapp.md "Articles").
 */
function mapArticle(a: ErpArticle, f: ArticleFields, sortOrder: number, translations: ErpPropertyTranslation[], now = Date.now()): Mapped {
  const value = (d: ErpCustomAttributeDefinition | null) => (d ? customAttributeValue(a.customAttributes, d) : null);
  const isShop = value(f.shop) === true && a.active;
  const groupValue = value(f.group);
  // An unknown or missing group exposes the article to the fewest callers.
  const userGroup = typeof groupValue === 'string' && (USER_GROUPS as readonly string[]).includes(groupValue) ? groupValue : 'internal';
  const price = listPrice(a.articlePrices ?? [], now);
  const cents = price ? decimalToCents(price.price) : null;
  if (isShop && cents === null) return { ok: false, reason: 'no net EUR price' };
  const name: Record<string, string> = { en: a.name };
  const description: Record<string, string> = a.description ? { en: a.description } : {};
  for (const p of translations) {
    const target = p.propertyName === 'name' ? name : p.propertyName === 'description' ? description : null;
    for (const v of target ? (p.values ?? []) : []) {
      const lang = (v.locale ?? '').toLowerCase().replace('_', '-');
      if (!/^[a-z]{2,3}(-[a-z0-9]{2,8})*$/.test(lang) || lang === 'en' || !v.text) continue;
      target![lang] = v.text;
    }
  }
  const cardType = value(f.cardType);
  const category = value(f.category);
  const configurable = value(f.configurable);
  const attributes: AttributeDefinition[] = (typeof configurable === 'string' ? configurable.split(',') : [])
    .map((k) => k.trim())
    .filter((k) => /^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(k))
    .map((key) => KNOWN_CONFIGURABLE_ATTRIBUTES[key] ?? { key, type: 'text', required: false, maxLength: 100, options: [], defaultValue: null });
  const bom: Insertable<ArticleBomItemsTable>[] = [];
  const slots = setSlots(value(f.setConfiguration));
  if (!slots) return { ok: false, reason: 'shopSetConfiguration is not a JSON array of slots' };
  for (const bomItem of a.salesBillOfMaterialItems ?? []) {
    const item = { ...slots.get(bomItem.positionNumber), ...bomItem };
    if (!item.articleNumber) return { ok: false, reason: `BOM position ${item.positionNumber}: no article number` };
    const valid = item.validArticleNumbers?.length ? item.validArticleNumbers : [item.articleNumber];
    const quantity = Number(item.quantity);
    if (!valid.includes(item.articleNumber)) return { ok: false, reason: `BOM position ${item.positionNumber}: default article not among the valid ones` };
    if (!Number.isInteger(quantity) || quantity < 1 || quantity > 1000)
      return { ok: false, reason: `BOM position ${item.positionNumber}: quantity ${item.quantity} is not a whole number 1–1000` };
    if (item.locked && item.optional) return { ok: false, reason: `BOM position ${item.positionNumber}: locked and optional` };
    bom.push({
      main_article_number: a.articleNumber,
      position: item.positionNumber,
      default_article_number: item.articleNumber,
      valid_article_numbers: valid,
      quantity,
      default_configuration: JSON.stringify(item.defaultConfiguration ?? {}),
      is_locked: item.locked ?? false,
      is_configurable: item.configurable ?? false,
      is_optional: item.optional ?? false,
      excluded_custom_attributes: item.excludedCustomAttributes ?? [],
    });
  }
  return {
    ok: true,
    isShop,
    row: {
      article_number: a.articleNumber,
      erp_id: a.id,
      erp_version: a.version,
      is_shop_article: isShop,
      user_group: userGroup,
      category: typeof category === 'string' ? category : null,
      name: JSON.stringify(name),
      description: JSON.stringify(description),
      net_price_cents: cents ?? 0,
      currency: 'EUR',
      vat_rate_percent: VAT_BY_TAX_RATE_TYPE[a.taxRateType ?? 'STANDARD'] ?? 19,
      card_type: typeof cardType === 'string' && (CARD_TYPES as readonly string[]).includes(cardType) ? cardType : null,
      is_subitem_only: value(f.subitemOnly) === true,
      configurable_attributes: JSON.stringify(attributes),
      image_url: null,
      sort_order: sortOrder,
    },
    bom,
  };
}

/** Dependencies of the import. */
export interface ArticleImportDeps {
  db: Kysely<DB>;
  erp: ErpClient;
  logger: Logger;
  /** The app's cache registry: cleared here and on every other instance when the import changed anything. */
  caches: CacheRegistry;
}

/** Applies the mapped ERP articles; `complete` = the list is the whole ERP catalogue (absent → removed). */
async function apply(
  deps: ArticleImportDeps,
  system: ErpSystem,
  articles: ErpArticle[],
  fields: ArticleFields,
  force: boolean,
  complete: boolean,
  deletedIds: string[] = [],
): Promise<ArticleImportResult> {
  const result: ArticleImportResult = { erpSystem: system, read: articles.length, imported: 0, unchanged: 0, removed: 0, rejected: [] };
  const stored = await repo.selectErpVersions(deps.db);
  const leave: { articleNumber: string; erpVersion: string | null }[] = [];
  for (const [i, a] of articles.entries()) {
    const before = stored.get(a.articleNumber);
    let mapped = mapArticle(a, fields, (i + 1) * 10, []);
    // The other-language texts are read only for an article that is about to be written.
    const willWrite = mapped.ok && mapped.isShop && (force || !before || before.erpVersion !== a.version || !before.isShopArticle);
    if (willWrite) mapped = mapArticle(a, fields, (i + 1) * 10, await deps.erp.articleTranslations(system, a.id));
    if (!mapped.ok) {
      result.rejected.push({ articleNumber: a.articleNumber, reason: mapped.reason });
      if (before?.isShopArticle) leave.push({ articleNumber: a.articleNumber, erpVersion: a.version });
      continue;
    }
    if (!mapped.isShop) {
      // Not a shop article: only articles the shop has need an update (to leave it).
      if (before?.isShopArticle) leave.push({ articleNumber: a.articleNumber, erpVersion: a.version });
      continue;
    }
    if (!force && before && before.erpVersion === a.version && before.isShopArticle) {
      result.unchanged++;
      continue;
    }
    if (await writeImportedArticle(deps.db, mapped.row, mapped.bom, force)) result.imported++;
    else result.unchanged++;
  }
  if (complete) {
    const inErp = new Set(articles.map((a) => a.articleNumber));
    for (const number of await repo.selectErpShopArticleNumbers(deps.db)) if (!inErp.has(number)) leave.push({ articleNumber: number, erpVersion: null });
  }
  for (const id of deletedIds) {
    const number = await repo.articleNumberOfErpId(deps.db, id);
    if (number) leave.push({ articleNumber: number, erpVersion: null });
  }
  result.removed = (await repo.removeFromShop(deps.db, leave)).length;
  if (result.imported > 0 || result.removed > 0) {
    await deps.caches.clearEverywhere(deps.db, deps.logger);
  }
  deps.logger.info(
    { erpSystem: system, read: result.read, imported: result.imported, unchanged: result.unchanged, removed: result.removed, rejected: result.rejected.length },
    'ERP article import',
  );
  return result;
}

/**
 * Imports all articles of `system` (`importArticles`). Throws `ErpError` when the ERP
 * cannot be read (nothing is written then).
 */
export async function importArticles(deps: ArticleImportDeps, system: ErpSystem, options: { force?: boolean } = {}): Promise<ArticleImportResult> {
  const fields = await articleFields(deps.erp, system);
  const articles = await deps.erp.listArticles(system);
  return apply(deps, system, articles, fields, options.force ?? false, true);
}

/**
 * Re-imports one article by its ERP id (webhooks: created, changed or deleted). The article is re-read from
 * the ERP (the webhook body is never trusted); not found → it leaves the shop. Throws `ErpError`.
 */
async function importArticleById(deps: ArticleImportDeps, system: ErpSystem, erpId: string): Promise<ArticleImportResult> {
  const fields = await articleFields(deps.erp, system);
  const article = await deps.erp.getArticle(system, erpId);
  if (!article) return apply(deps, system, [], fields, false, false, [erpId]);
  return apply(deps, system, [article], fields, false, false);
}

/**
 * Writes one imported article and its BOM slots in one short transaction: the lock for a new article, then
 * the conditional upsert, and the BOM replacement only when the row was written, so a second import that
 * finds the version already stored changes nothing. Answers whether the article was written.
 */
async function writeImportedArticle(db: Kysely<DB>, row: Insertable<ArticlesTable>, bom: Insertable<ArticleBomItemsTable>[], force: boolean): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    await repo.lockArticleImport(trx, row.article_number);
    if (!(await repo.upsertImportedArticle(trx, row, force))) return false;
    await repo.replaceArticleBom(trx, row.article_number, bom);
    return true;
  });
}

/**
 * ERP webhook handler of `article` (`receiveErpWebhook`) of the app whose cache registry is `caches`: a created,
 * changed or deleted article is re-imported alone (re-read from the ERP, never from the webhook body). The
 * handler throws what {@link importArticleById} throws.
 */
export function articleWebhookHandler(caches: CacheRegistry): ErpEntityHandler {
  return async (event, ctx) => {
    await importArticleById({ db: ctx.db, erp: ctx.erp, logger: ctx.logger, caches }, event.erpSystem, event.entityId);
  };
}
