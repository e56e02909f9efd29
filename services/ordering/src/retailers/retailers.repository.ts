/**
 * SQL of the retailers (`retailers`, migration 0007): replaced per ERP system by the import, read by the
 * retailer lists (ordering spec §4.5).
 */
import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import type { DB } from '../db/schema';
import type { RetailersTable } from '../db/tables/erp.tables';

/** A stored retailer. */
export type RetailerRow = Selectable<RetailersTable>;

/** Serializes the imports of `erpSystem` in the caller's transaction `trx` (held until it ends). */
export async function lockRetailerImport(trx: Kysely<DB>, erpSystem: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`erp-retailer-import:${erpSystem}`}, 0))`.execute(trx);
}

/**
 * Replaces the retailers of `erpSystem` with `rows` in `trx`: those not in `rows` are deleted, the others
 * upserted by ERP id. Answers how many stored retailers were removed.
 */
export async function replaceRetailerRows(trx: Kysely<DB>, erpSystem: string, rows: Insertable<RetailersTable>[]): Promise<{ removed: number }> {
  const ids = rows.map((r) => r.erp_id);
  let del = trx.deleteFrom('retailers').where('erp_system', '=', erpSystem);
  if (ids.length > 0) del = del.where('erp_id', 'not in', ids);
  const removed = await del.executeTakeFirst();
  for (const row of rows) {
    const { erp_system: _s, erp_id: _i, ...rest } = row;
    await trx
      .insertInto('retailers')
      .values(row)
      .onConflict((oc) => oc.columns(['erp_system', 'erp_id']).doUpdateSet(rest))
      .execute();
  }
  return { removed: Number(removed.numDeletedRows) };
}

/** Retailers of `erpSystem` (only public ones when `publicOnly`), by country code, then name. */
export async function selectRetailers(db: Kysely<DB>, erpSystem: string, publicOnly: boolean): Promise<RetailerRow[]> {
  let q = db.selectFrom('retailers').selectAll().where('erp_system', '=', erpSystem);
  if (publicOnly) q = q.where('is_public', '=', true);
  return q.orderBy('country_code').orderBy('company').orderBy('erp_id').execute();
}
