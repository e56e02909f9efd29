/**
 * Kysely table types of the `ordering` schema: one interface per area, merged here.
 */
import type { IdentityTables } from '../identity/identity.tables';
import type { MaintenanceTables } from '../maintenance/maintenance.tables';
import type { OutboxTables } from '../outbox/outbox.tables';
import type { ShopTables } from '../shop/shop.tables';

/** All tables of the ordering schema. */
export interface DB extends IdentityTables, ShopTables, OutboxTables, MaintenanceTables {}
