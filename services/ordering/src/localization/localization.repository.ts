/**
 * SQL of the localized lists (`localized_countries`, `localized_product_options`). Free functions taking the
 * executor first; the imports pass their transaction.
 */
import { sql, type Insertable, type Kysely } from 'kysely';
import type { DB } from '../db/schema';

/**
 * Replaces the stored country names of `culture` with `rows` (delete, then insert), under a transaction-level
 * advisory lock per culture so two imports of one culture cannot collide on insert. Call inside a transaction.
 */
export async function replaceLocalizedCountries(trx: Kysely<DB>, culture: string, rows: Insertable<DB['localized_countries']>[]): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`localized-countries:${culture}`}, 0))`.execute(trx);
  await trx.deleteFrom('localized_countries').where('culture', '=', culture).execute();
  await trx.insertInto('localized_countries').values(rows).execute();
}

/**
 * Replaces the stored product option labels of `culture` with `rows` (options as JSON text), under a
 * transaction-level advisory lock per culture. Call inside a transaction.
 */
export async function replaceLocalizedProductOptions(trx: Kysely<DB>, culture: string, rows: Insertable<DB['localized_product_options']>[]): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`localized-product-options:${culture}`}, 0))`.execute(trx);
  await trx.deleteFrom('localized_product_options').where('culture', '=', culture).execute();
  await trx.insertInto('localized_product_options').values(rows).execute();
}
