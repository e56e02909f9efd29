/**
 * Kysely table types of the `ordering` schema: one interface per area, merged here.
 */
import type { DiscountTables } from './tables/discounts.tables';
import type { ErpTables } from './tables/erp.tables';
import type { IdentityTables } from './tables/identity.tables';
import type { MaintenanceTables } from './tables/maintenance.tables';
import type { OrderTables } from './tables/orders.tables';
import type { OutboxTables } from './tables/outbox.tables';
import type { PaymentTables } from './tables/payment.tables';
import type { ShopTables } from './tables/shop.tables';

/** All tables of the ordering schema. */
export interface DB extends IdentityTables, ShopTables, OutboxTables, MaintenanceTables, DiscountTables, OrderTables, ErpTables, PaymentTables {}
