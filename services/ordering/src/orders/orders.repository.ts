/**
 * SQL of orders, order items, state history and idempotency records. Free functions taking the executor
 * first; the order pipeline passes its transaction.
 */
import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import type { DB } from '../db/schema';
import type { IdempotencyKeysTable, OrderItemsTable, OrdersTable } from './orders.tables';

/** A stored `orders` row. */
export type OrderRow = Selectable<OrdersTable>;
/** A stored `order_items` row. */
export type OrderItemRow = Selectable<OrderItemsTable>;
/** A stored `idempotency_keys` row. */
export type IdempotencyRow = Selectable<IdempotencyKeysTable>;

/** Takes the next order id from the identity sequence (the order number is derived from it). */
export async function nextOrderId(db: Kysely<DB>): Promise<number> {
  const r = await sql<{ id: number }>`select nextval(pg_get_serial_sequence('orders', 'id'))::int as id`.execute(db);
  return r.rows[0].id;
}

/** Inserts an order row (with its id from {@link nextOrderId}); returns it as stored. */
export async function insertOrder(db: Kysely<DB>, row: Insertable<OrdersTable>): Promise<OrderRow> {
  return db.insertInto('orders').values(row).returningAll().executeTakeFirstOrThrow();
}

/** Inserts items in one statement; returns the stored rows in input order. */
export async function insertItems(db: Kysely<DB>, rows: Insertable<OrderItemsTable>[]): Promise<OrderItemRow[]> {
  if (rows.length === 0) return [];
  const stored = await db.insertInto('order_items').values(rows).returningAll().execute();
  const byPosition = new Map(stored.map((r) => [r.position, r]));
  return rows.map((r) => byPosition.get(r.position)!);
}

/** Appends a state change to an order's history. */
export async function insertStateChange(db: Kysely<DB>, change: { orderId: number; from: string | null; to: string; actor: string; reason: string | null }): Promise<void> {
  await db.insertInto('order_state_changes').values({ order_id: change.orderId, from_state: change.from, to_state: change.to, actor: change.actor, reason: change.reason }).execute();
}

/** An order row by id, or undefined. */
export async function selectOrder(db: Kysely<DB>, id: number): Promise<OrderRow | undefined> {
  return db.selectFrom('orders').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The items of an order by position. */
export async function selectItems(db: Kysely<DB>, orderId: number): Promise<OrderItemRow[]> {
  return db.selectFrom('order_items').selectAll().where('order_id', '=', orderId).orderBy('position').execute();
}

/**
 * Takes an idempotency key for this transaction: inserts the record, or takes over an expired one.
 * A record of a transaction still in flight makes this wait (bounded by the caller's `lock_timeout`)
 * until that transaction ends. Returns null when the key is now this transaction's, else the committed
 * record that holds it.
 */
export async function takeIdempotencyKey(db: Kysely<DB>, rec: { scope: string; key: string; requestHash: string; expiresAt: Date }): Promise<IdempotencyRow | null> {
  const taken = await sql<{ scope: string }>`
    insert into idempotency_keys (scope, key, request_hash, expires_at)
    values (${rec.scope}, ${rec.key}, ${rec.requestHash}, ${rec.expiresAt})
    on conflict (scope, key) do update
      set request_hash = excluded.request_hash, order_id = null, response_status = null, response_body = null,
          created_at = now(), expires_at = excluded.expires_at
      where idempotency_keys.expires_at <= now()
    returning scope`.execute(db);
  if (taken.rows.length === 1) return null;
  const existing = await db.selectFrom('idempotency_keys').selectAll().where('scope', '=', rec.scope).where('key', '=', rec.key).executeTakeFirst();
  return existing ?? null;
}

/** Stores the response of the request that holds an idempotency key. */
export async function completeIdempotencyKey(db: Kysely<DB>, rec: { scope: string; key: string; orderId: number; status: number; body: unknown }): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ order_id: rec.orderId, response_status: rec.status, response_body: JSON.stringify(rec.body) })
    .where('scope', '=', rec.scope)
    .where('key', '=', rec.key)
    .execute();
}

/** Deletes up to `limit` expired idempotency records nobody holds; returns how many. */
export async function purgeExpiredIdempotencyKeys(db: Kysely<DB>, limit: number): Promise<number> {
  const r = await sql`
    delete from idempotency_keys where ctid in (
      select ctid from idempotency_keys where expires_at <= now() limit ${limit} for update skip locked)`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}
