/**
 * Kysely table types of the `ordering` schema: one interface per area, merged here.
 */
import type { DiscountTables } from '../discounts/discounts.tables';
import type { ErpTables } from '../erp/erp.tables';
import type { IdentityTables } from '../identity/identity.tables';
import type { MaintenanceTables } from '../maintenance/maintenance.tables';
import type { OrderTables } from '../orders/orders.tables';
import type { OutboxTables } from '../outbox/outbox.tables';
import type { PaymentTables } from '../payment/payment.tables';
import type { ShopTables } from '../shop/shop.tables';

/** All tables of the ordering schema. */
export interface DB extends IdentityTables, ShopTables, OutboxTables, MaintenanceTables, DiscountTables, OrderTables, ErpTables, PaymentTables {}
