/**
 * SQL of the catalogue. Free functions taking the executor first (a transaction may be passed).
 */
import type { Insertable, Kysely, Selectable } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { DB } from '../db/schema';
import type { ArticleBomItemsTable, ArticlesTable, LocalizedProductOptionsTable } from '../db/tables/catalog.tables';

/** An `articles` row. */
export type ArticleRow = Selectable<ArticlesTable>;
/** An `article_bom_items` row. */
export type BomItemRow = Selectable<ArticleBomItemsTable>;
/** A `localized_product_options` row. */
export type OptionLabelRow = Selectable<LocalizedProductOptionsTable>;

/** Filter of {@link selectArticlesWithBom}. */
export interface ArticleSelection {
  /** Only articles marked as shop articles. */
  shopOnly?: boolean;
  /** Only these article numbers (exact). */
  numbers?: readonly string[];
  /** Only card articles (`card_type` set). */
  cardsOnly?: boolean;
}

/**
 * Articles, ordered by sort order then article number, each with its BOM slots by position, in one
 * statement (the slots as a JSON array: every column of `article_bom_items` keeps its JavaScript shape
 * through JSON).
 */
export async function selectArticlesWithBom(db: Kysely<DB>, sel: ArticleSelection = {}): Promise<(ArticleRow & { bom_items: BomItemRow[] })[]> {
  if (sel.numbers && sel.numbers.length === 0) return [];
  let q = db
    .selectFrom('articles')
    .selectAll('articles')
    .select((eb) =>
      jsonArrayFrom(
        eb.selectFrom('article_bom_items as b').selectAll('b').whereRef('b.main_article_number', '=', 'articles.article_number').orderBy('b.position'),
      ).as('bom_items'),
    );
  if (sel.shopOnly) q = q.where('is_shop_article', '=', true);
  if (sel.cardsOnly) q = q.where('card_type', 'is not', null);
  if (sel.numbers) q = q.where('article_number', 'in', [...sel.numbers]);
  return q.orderBy('sort_order').orderBy('article_number').execute();
}

/** Cultures that have imported product option labels. */
export async function selectOptionLabelCultures(db: Kysely<DB>): Promise<string[]> {
  const rows = await db.selectFrom('localized_product_options').select('culture').distinct().execute();
  return rows.map((r) => r.culture);
}

/** Imported product option labels of one culture. */
export async function selectOptionLabels(db: Kysely<DB>, culture: string): Promise<OptionLabelRow[]> {
  return db.selectFrom('localized_product_options').selectAll().where('culture', '=', culture).execute();
}

/** Inserts or replaces an article by article number (demo loader now, ERP import later). */
export async function upsertArticle(db: Kysely<DB>, row: Insertable<ArticlesTable>): Promise<void> {
  const { article_number: _key, created_at: _created, ...rest } = row;
  await db
    .insertInto('articles')
    .values(row)
    .onConflict((oc) => oc.column('article_number').doUpdateSet({ ...rest, updated_at: new Date() }))
    .execute();
}

/** Replaces the BOM slots of one main article. */
export async function replaceBomItems(db: Kysely<DB>, mainArticleNumber: string, items: Insertable<ArticleBomItemsTable>[]): Promise<void> {
  await db.deleteFrom('article_bom_items').where('main_article_number', '=', mainArticleNumber).execute();
  if (items.length > 0) await db.insertInto('article_bom_items').values(items).execute();
}

/** The shop articles (`is_shop_article`) with the columns of the CSV export, by `sort_order` then article number. */
export async function selectShopArticlesForExport(db: Kysely<DB>) {
  return db
    .selectFrom('articles')
    .select(['article_number', 'name', 'user_group', 'is_subitem_only', 'card_type', 'net_price_cents', 'currency', 'vat_rate_percent', 'erp_version'])
    .where('is_shop_article', '=', true)
    .orderBy('sort_order')
    .orderBy('article_number')
    .execute();
}

/** Article number and category of article `articleNumber`, or undefined when there is none. */
export async function selectArticleCategory(db: Kysely<DB>, articleNumber: string): Promise<{ article_number: string; category: string | null } | undefined> {
  return db.selectFrom('articles').select(['article_number', 'category']).where('article_number', '=', articleNumber).executeTakeFirst();
}
