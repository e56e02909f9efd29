import { sql, type Kysely } from 'kysely';

/**
 * The ERP hand-off creates one sales order per order whatever weclapp's queue does (docs/weclapp.md "Load
 * management and exactly one sales order"):
 * - `orders.erp_create_started_at`: when an instance last POSTed (or was about to POST) the order's sales order;
 *   while it is recent no instance POSTs again, they only look the sales order up by its reference.
 * - `orders.payment_on_hold_at`: when the payment provider reported the order's payment as on its way
 *   (`waiting`: bank transfer, purchase on invoice) or a payment that does not match the order (partial,
 *   excess) arrived; such an order no longer expires and staff see it in its history (docs/payrexx.md).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table orders add column erp_create_started_at timestamptz, add column payment_on_hold_at timestamptz`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table orders drop column erp_create_started_at, drop column payment_on_hold_at`.execute(db);
}
