import { sql, type Kysely } from 'kysely';

/**
 * Drops `order_items_order_idx`: it indexed (order_id, position), exactly the columns of the
 * table's unique constraint, whose own index serves every lookup of an order's items. Every order item
 * insert maintained both.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop index order_items_order_idx`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create index order_items_order_idx on order_items (order_id, position)`.execute(db);
}
