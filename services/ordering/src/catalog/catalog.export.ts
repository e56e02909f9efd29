/**
 * Shop articles as CSV (`getShopArticlesAsCsv`): UTF-8, comma-separated, header row
 * `articleNumber,name,userGroup,isSubitemOnly,cardType,netPriceCents,currency,vatRatePercent,erpVersion`,
 * built with csv-stringify with `escape_formulas` (cells starting with `=`, `+`, `-`, `@`, tab or CR get a
 * leading `'`, so ERP texts cannot become spreadsheet formulas).
 */
import { stringify } from 'csv-stringify/sync';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';
import { selectShopArticlesForExport } from './catalog.repository';

/** Header row of the export. */
const SHOP_ARTICLE_CSV_COLUMNS = [
  'articleNumber',
  'name',
  'userGroup',
  'isSubitemOnly',
  'cardType',
  'netPriceCents',
  'currency',
  'vatRatePercent',
  'erpVersion',
] as const;

/** All shop articles (catalogue order) as CSV text; the English name is the fallback text. */
export async function shopArticlesCsv(db: Kysely<DB>): Promise<string> {
  const rows = await selectShopArticlesForExport(db);
  return stringify(
    rows.map((r) => [
      r.article_number,
      r.name.en ?? '',
      r.user_group,
      r.is_subitem_only,
      r.card_type ?? '',
      Number(r.net_price_cents),
      r.currency,
      String(r.vat_rate_percent),
      r.erp_version ?? '',
    ]),
    { header: true, columns: [...SHOP_ARTICLE_CSV_COLUMNS], escape_formulas: true, cast: { boolean: (v) => (v ? 'true' : 'false') } },
  );
}
