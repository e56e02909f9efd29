/**
 * SQL of the imported localized country lists. Free functions taking the executor first.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';

/** Cultures with an imported country list. */
export async function selectCountryCultures(db: Kysely<DB>): Promise<string[]> {
  const rows = await db.selectFrom('localized_countries').select('culture').distinct().execute();
  return rows.map((r) => r.culture);
}

/** The imported list of one culture (unordered). */
export async function selectCountries(db: Kysely<DB>, culture: string): Promise<{ countryCode: string; name: string }[]> {
  const rows = await db.selectFrom('localized_countries').select(['country_code', 'name']).where('culture', '=', culture).execute();
  return rows.map((r) => ({ countryCode: r.country_code, name: r.name }));
}
