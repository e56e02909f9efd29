/**
 * Tables of the shop catalogue and lookups (articles, BOM slots, localized lists, card numbers, battery
 * records), one interface per domain, merged here for `db/schema.ts`. Mirrors migration 0002.
 */
import type { BatteryTables } from './battery.tables';
import type { CatalogTables } from './catalog.tables';
import type { CountriesTables } from './countries.tables';
import type { SiidTables } from './siid.tables';

/** All tables of migration 0002. */
export interface ShopTables extends CatalogTables, CountriesTables, SiidTables, BatteryTables {}
