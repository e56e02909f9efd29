/**
 * Tables of the countries area. Mirrors migration 0002.
 */

/** `localized_countries`: imported country names per culture (maintenance import of localized countries). */
interface LocalizedCountriesTable {
  culture: string;
  /** ISO 3166-1 alpha-2, upper case. */
  country_code: string;
  name: string;
}

/** All countries tables. */
export interface CountriesTables {
  localized_countries: LocalizedCountriesTable;
}
