/**
 * Maintenance imports of localized lists (`importLocalizedCountries`, `importLocalizedProductOptions`): one
 * culture's list replaces the stored list of that culture in one transaction (readers see the old or the new
 * list). The country operations (`countries.service.ts`) and the card-configuration / article answers
 * (`catalog.service.ts` attribute labels) read these tables. Duplicate codes/keys and unknown country codes are
 * rejected (400) before anything is written.
 */
import { validationError } from '@sports-timing/shared';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { canonicalCulture } from '../culture/culture';
import { isKnownCountryCode } from '../countries/countries.service';
import type { DB } from '../db/schema';
import type { components } from '../generated/openapi';
import type { CacheRegistry } from '../maintenance/caches';
import { replaceLocalizedCountries, replaceLocalizedProductOptions } from './localization.repository';

type CountriesBody = components['schemas']['LocalizedCountriesResourceDTO'];
type ProductOptionsBody = components['schemas']['LocalizedProductOptionsResourceDTO'];

async function changed(db: Kysely<DB>, caches: CacheRegistry, logger: Logger): Promise<void> {
  await caches.clearEverywhere(db, logger);
}

/** Replaces the country names of one culture (then clears `caches` everywhere); answers the summary text. Throws 400 on duplicates/unknown codes. */
export async function importLocalizedCountries(db: Kysely<DB>, caches: CacheRegistry, logger: Logger, body: CountriesBody): Promise<string> {
  const culture = canonicalCulture(body.culture);
  const seen = new Set<string>();
  const errors: Record<string, string[]> = {};
  const rows = body.countries.map((c, i) => {
    const code = c.countryCode.toUpperCase();
    if (seen.has(code)) errors[`countries[${i}].countryCode`] = [`'${code}' appears more than once.`];
    else if (!isKnownCountryCode(code)) errors[`countries[${i}].countryCode`] = [`'${code}' is not an ISO 3166-1 alpha-2 country code.`];
    seen.add(code);
    return { culture, country_code: code, name: c.name.trim() };
  });
  if (Object.keys(errors).length) throw validationError(errors);
  await db.transaction().execute(async (trx) => {
    // Two imports of one culture would both delete nothing and then collide on insert: the repository serializes them.
    await replaceLocalizedCountries(trx, culture, rows);
  });
  await changed(db, caches, logger);
  return `Imported ${rows.length} countries for culture ${culture}.`;
}

/** Replaces the product option labels of one culture (then clears `caches` everywhere); answers the summary text. Throws 400 on duplicate keys. */
export async function importLocalizedProductOptions(db: Kysely<DB>, caches: CacheRegistry, logger: Logger, body: ProductOptionsBody): Promise<string> {
  const culture = canonicalCulture(body.culture);
  const seen = new Set<string>();
  const errors: Record<string, string[]> = {};
  const rows = body.attributes.map((a, i) => {
    if (seen.has(a.key)) errors[`attributes[${i}].key`] = [`'${a.key}' appears more than once.`];
    seen.add(a.key);
    const values = new Set<string>();
    for (const [j, o] of (a.options ?? []).entries()) {
      if (values.has(o.value)) errors[`attributes[${i}].options[${j}].value`] = [`'${o.value}' appears more than once.`];
      values.add(o.value);
    }
    return { culture, attribute_key: a.key, label: a.label, options: JSON.stringify((a.options ?? []).map((o) => ({ value: o.value, label: o.label }))) };
  });
  if (Object.keys(errors).length) throw validationError(errors);
  await db.transaction().execute(async (trx) => {
    await replaceLocalizedProductOptions(trx, culture, rows);
  });
  await changed(db, caches, logger);
  return `Imported ${rows.length} product options for culture ${culture}.`;
}
