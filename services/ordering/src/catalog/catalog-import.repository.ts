/**
 * SQL of the ERP article import (ordering spec §4.8 `import-articles`). The import service writes each
 * article in one short transaction of its own; concurrency safety comes from the advisory lock per new
 * article, the article row lock and a version-conditional upsert (see {@link upsertImportedArticle}).
 */
import { sql, type Insertable, type Kysely } from 'kysely';
import type { DB } from '../db/schema';
import type { ArticleBomItemsTable, ArticlesTable } from '../db/tables/catalog.tables';

/** Stored ERP version per article number, for all articles that came from the ERP. */
export async function selectErpVersions(db: Kysely<DB>): Promise<Map<string, { erpId: string | null; erpVersion: string | null; isShopArticle: boolean }>> {
  const rows = await db.selectFrom('articles').select(['article_number', 'erp_id', 'erp_version', 'is_shop_article']).execute();
  return new Map(rows.map((r) => [r.article_number, { erpId: r.erp_id, erpVersion: r.erp_version, isShopArticle: r.is_shop_article }]));
}

/**
 * Serializes the writers of one new article in the caller's transaction `trx` (held until it ends):
 * `articles` has two unique keys (number, ERP id) and ON CONFLICT arbitrates only one, so two imports
 * inserting the same new article would make the loser fail on the other key.
 */
export async function lockArticleImport(trx: Kysely<DB>, articleNumber: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`erp-article-import:${articleNumber}`}, 0))`.execute(trx);
}

/**
 * Upserts one imported article in `trx`. The upsert is conditional: an existing row is only overwritten when
 * its `erp_version` (or shop flag) differs from the imported one, or `force`. The row lock it takes
 * serializes concurrent imports of the same article until `trx` ends. Answers whether the row was written.
 */
export async function upsertImportedArticle(trx: Kysely<DB>, row: Insertable<ArticlesTable>, force: boolean): Promise<boolean> {
  const { article_number: _key, created_at: _created, sort_order: _sort, ...rest } = row;
  const written = await trx
    .insertInto('articles')
    .values(row)
    .onConflict((oc) =>
      oc
        .column('article_number')
        .doUpdateSet({ ...rest, updated_at: new Date() })
        .where(
          force
            ? sql<boolean>`true`
            : sql<boolean>`articles.erp_version is distinct from excluded.erp_version or articles.is_shop_article is distinct from excluded.is_shop_article`,
        ),
    )
    .returning('id')
    .executeTakeFirst();
  return written !== undefined;
}

/** Replaces the BOM slots of the main article `articleNumber` with `bom`, in `trx`. */
export async function replaceArticleBom(trx: Kysely<DB>, articleNumber: string, bom: Insertable<ArticleBomItemsTable>[]): Promise<void> {
  await trx.deleteFrom('article_bom_items').where('main_article_number', '=', articleNumber).execute();
  if (bom.length > 0) await trx.insertInto('article_bom_items').values(bom).execute();
}

/**
 * Takes articles out of the shop (`is_shop_article = false`, ERP version recorded) — for articles whose
 * shop field was cleared, that were deactivated, or deleted in the ERP. Answers the numbers changed.
 */
export async function removeFromShop(db: Kysely<DB>, changes: { articleNumber: string; erpVersion: string | null }[]): Promise<string[]> {
  const removed: string[] = [];
  for (const c of changes) {
    const r = await db
      .updateTable('articles')
      .set({ is_shop_article: false, erp_version: c.erpVersion, updated_at: new Date() })
      .where('article_number', '=', c.articleNumber)
      .where('is_shop_article', '=', true)
      .returning('article_number')
      .executeTakeFirst();
    if (r) removed.push(r.article_number);
  }
  return removed;
}

/** Article numbers of shop articles that came from the ERP (have an ERP id). */
export async function selectErpShopArticleNumbers(db: Kysely<DB>): Promise<string[]> {
  const rows = await db.selectFrom('articles').select('article_number').where('is_shop_article', '=', true).where('erp_id', 'is not', null).execute();
  return rows.map((r) => r.article_number);
}

/** The article number stored for an ERP entity id, or null. */
export async function articleNumberOfErpId(db: Kysely<DB>, erpId: string): Promise<string | null> {
  const r = await db.selectFrom('articles').select('article_number').where('erp_id', '=', erpId).executeTakeFirst();
  return r?.article_number ?? null;
}
