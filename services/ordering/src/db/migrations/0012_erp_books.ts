import { sql, type Kysely } from 'kysely';

/**
 * The ERP hand-off creates one sales order per order whatever weclapp's queue does (docs/weclapp.md "Load
 * management and exactly one sales order"):
 * - `orders.erp_create_started_at`: when an instance last POSTed (or was about to POST) the order's sales order;
 *   while it is recent no instance POSTs again, they only look the sales order up by its reference.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table orders add column erp_create_started_at timestamptz`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table orders drop column erp_create_started_at`.execute(db);
}
