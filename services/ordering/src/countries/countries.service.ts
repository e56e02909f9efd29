/**
 * Countries (ordering spec §2.1, §4.2 `get-countries-list`, §4.3 rule 4): localized country lists and
 * the mapping between ISO 3166-1 alpha-2 codes and the internal country id.
 *
 * Internal country id = ISO 3166-1 numeric code (e.g. DE ↔ 276, AT ↔ 40), taken from i18n-iso-countries.
 * Names come from the imported list of the resolved culture when one exists, else from
 * i18n-iso-countries (official names) in the supported locales below; sorted with `Intl.Collator`.
 */
import countries from 'i18n-iso-countries';
import cs from 'i18n-iso-countries/langs/cs.json';
import da from 'i18n-iso-countries/langs/da.json';
import de from 'i18n-iso-countries/langs/de.json';
import en from 'i18n-iso-countries/langs/en.json';
import es from 'i18n-iso-countries/langs/es.json';
import fi from 'i18n-iso-countries/langs/fi.json';
import fr from 'i18n-iso-countries/langs/fr.json';
import hu from 'i18n-iso-countries/langs/hu.json';
import it from 'i18n-iso-countries/langs/it.json';
import ja from 'i18n-iso-countries/langs/ja.json';
import nb from 'i18n-iso-countries/langs/nb.json';
import nl from 'i18n-iso-countries/langs/nl.json';
import pl from 'i18n-iso-countries/langs/pl.json';
import sv from 'i18n-iso-countries/langs/sv.json';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';
import { resolveCulture } from '../culture/culture';
import * as repo from './countries.repository';

for (const locale of [cs, da, de, en, es, fi, fr, hu, it, ja, nb, nl, pl, sv]) countries.registerLocale(locale);

/** Locales of the built-in country names. */
const BUILT_IN_COUNTRY_LOCALES = ['en', 'de', 'fr', 'it', 'es', 'cs', 'sv', 'nb', 'fi', 'da', 'nl', 'pl', 'hu', 'ja'] as const;

/** A country and its localized name (spec `CountryOption`). */
interface CountryOption {
  /** ISO 3166-1 alpha-2, upper case. */
  countryCode: string;
  name: string;
}

/** A localized country list and the culture it is in. */
export interface CountryList {
  culture: string;
  /** Sorted by name in `culture`. */
  countries: CountryOption[];
}

// Built-in lists never change at run time: sort each locale once.
const builtInSorted = new Map<string, readonly CountryOption[]>();

function builtInCountries(locale: string): CountryOption[] {
  let sorted = builtInSorted.get(locale);
  if (!sorted) {
    const names = countries.getNames(locale, { select: 'official' });
    sorted = sortByName(
      Object.entries(names).map(([countryCode, name]) => ({ countryCode, name })),
      locale,
    );
    builtInSorted.set(locale, sorted);
  }
  return sorted.map((c) => ({ ...c }));
}

function sortByName(list: CountryOption[], culture: string): CountryOption[] {
  let collator: Intl.Collator;
  try {
    collator = new Intl.Collator(culture, { sensitivity: 'base' });
  } catch {
    collator = new Intl.Collator('en', { sensitivity: 'base' });
  }
  return list.sort((a, b) => collator.compare(a.name, b.name) || a.countryCode.localeCompare(b.countryCode));
}

/**
 * The country list for the preferred cultures (most preferred first): the culture is resolved among the
 * imported lists and the built-in locales (exact tag, then language, fallback English); the imported
 * list of that culture wins over the built-in names.
 */
export async function listCountries(db: Kysely<DB>, preferences: readonly string[]): Promise<CountryList> {
  const imported = await repo.selectCountryCultures(db);
  // Imported spellings last: on a case-insensitive tie the imported culture is the one resolved.
  const culture = resolveCulture(preferences, [...BUILT_IN_COUNTRY_LOCALES, ...imported]);
  if (!imported.includes(culture)) return { culture, countries: builtInCountries(culture) };
  return { culture, countries: sortByName(await repo.selectCountries(db, culture), culture) };
}

/** Whether `code` is an assigned ISO 3166-1 alpha-2 code (upper case expected). */
export function isKnownCountryCode(code: string): boolean {
  return /^[A-Z]{2}$/.test(code) && countries.isValid(code);
}

/** Internal country id (ISO 3166-1 numeric) of an alpha-2 code, e.g. `DE` → 276; null when unknown. */
export function countryIdForCode(code: string): number | null {
  const upper = code.toUpperCase();
  if (!isKnownCountryCode(upper)) return null;
  const numeric = countries.alpha2ToNumeric(upper);
  return numeric ? Number(numeric) : null;
}

/** Alpha-2 code of an internal country id (ISO 3166-1 numeric), e.g. 276 → `DE`; null when unknown. */
export function codeForCountryId(id: number): string | null {
  if (!Number.isInteger(id) || id <= 0 || id > 999) return null;
  return countries.numericToAlpha2(String(id).padStart(3, '0')) ?? null;
}
