/**
 * SQL of orders, order items, state history and idempotency records. Free functions taking the executor
 * first; the order pipeline passes its transaction.
 */
import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import type { DB } from '../db/schema';
import { insertMessages, messagesInsert, notifyOutbox, type NewOutboxMessage } from '../outbox/outbox.repository';
import type { IdempotencyKeysTable, OrderItemsTable, OrdersTable } from './orders.tables';

/** A stored `orders` row. */
export type OrderRow = Selectable<OrdersTable>;
/** A stored `order_items` row. */
export type OrderItemRow = Selectable<OrderItemsTable>;
/** A stored `idempotency_keys` row. */
export type IdempotencyRow = Selectable<IdempotencyKeysTable>;

/**
 * Inserts a new order in one statement: its id is drawn from the identity sequence, its order number is
 * `orderNumberPrefix` followed by the id padded to at least 6 digits (see `orderNumberFor`), and the first
 * entry of its state history (`from_state` null, `to_state` its state) is written with it. Returns the row
 * as stored.
 */
export async function insertNewOrder(
  db: Kysely<DB>,
  row: Omit<Insertable<OrdersTable>, 'id' | 'order_number'>,
  orderNumberPrefix: string,
  history: { actor: string; reason: string | null },
): Promise<OrderRow> {
  // `new_id` is referenced more than once and calls a volatile function: PostgreSQL evaluates it once.
  const id = sql<number>`(select id from new_id)`;
  return db
    .with('new_id', (qb) => qb.selectNoFrom(sql<number>`nextval(pg_get_serial_sequence('orders', 'id'))::int`.as('id')))
    .with('new_order', (qb) =>
      qb
        .insertInto('orders')
        .values({ ...row, id, order_number: sql<string>`${orderNumberPrefix}::text || lpad(${id}::text, greatest(6, length(${id}::text)), '0')` })
        .returningAll(),
    )
    .with('history', (qb) =>
      qb
        .insertInto('order_state_changes')
        .columns(['order_id', 'from_state', 'to_state', 'actor', 'reason'])
        .expression((eb) =>
          eb
            .selectFrom('new_order')
            .select(['new_order.id', sql<null>`null::text`.as('from_state'), 'new_order.state', sql<string>`${history.actor}::text`.as('actor'), sql<string | null>`${history.reason}::text`.as('reason')]),
        ),
    )
    .selectFrom('new_order')
    .selectAll()
    .executeTakeFirstOrThrow();
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
 * Takes an idempotency key for this transaction in one statement: inserts the record, or takes over an
 * expired one. A record of a transaction still in flight makes this wait, at most `waitMs` (a transaction-
 * local `lock_timeout`, reset to none before the statement ends so later waits of the transaction are not
 * bounded by it; PostgreSQL raises 55P03 when it expires). When the key was taken, up to `purgeLimit`
 * expired records nobody holds are deleted on the way. Returns null when the key is now this
 * transaction's, else the committed record that holds it (read by a second statement, whose snapshot
 * sees the record the wait was for).
 */
export async function takeIdempotencyKey(
  db: Kysely<DB>,
  rec: { scope: string; key: string; requestHash: string; expiresAt: Date; waitMs: number; purgeLimit: number },
): Promise<IdempotencyRow | null> {
  // The insert reads its row from `wait_bound`, so the bound is set before it can wait; `unbound` reads
  // the insert's result, so the reset runs after the wait.
  const taken = await sql<{ taken: number }>`
    with wait_bound as materialized (select set_config('lock_timeout', ${`${Math.max(1, Math.round(rec.waitMs))}ms`}, true)),
    taken as (
      insert into idempotency_keys (scope, key, request_hash, expires_at)
      select ${rec.scope}, ${rec.key}, ${rec.requestHash}, ${rec.expiresAt}::timestamptz from wait_bound
      on conflict (scope, key) do update
        set request_hash = excluded.request_hash, order_id = null, response_status = null, response_body = null,
            created_at = now(), expires_at = excluded.expires_at
        where idempotency_keys.expires_at <= now()
      returning scope),
    unbound as materialized (select set_config('lock_timeout', '0', true) from (select count(*) from taken) t),
    purged as (
      delete from idempotency_keys where ctid in (
        select ctid from idempotency_keys
        where expires_at <= now() and not (scope = ${rec.scope} and key = ${rec.key})
        limit ${rec.purgeLimit} for update skip locked)
      and exists (select 1 from taken))
    select (select count(*) from taken)::int as taken, (select count(*) from unbound)::int as unbound`.execute(db);
  if (taken.rows[0].taken === 1) return null;
  const existing = await db.selectFrom('idempotency_keys').selectAll().where('scope', '=', rec.scope).where('key', '=', rec.key).executeTakeFirst();
  return existing ?? null;
}

/**
 * The last writes of an order transaction in one statement: its outbox rows (at least one: the
 * confirmation e-mail; dispatchers woken on commit) and, when the request holds an idempotency key, the
 * stored response of that key.
 */
export async function insertOutboxAndCompleteKey(
  db: Kysely<DB>,
  messages: readonly NewOutboxMessage[],
  completion: { scope: string; key: string; orderId: number; status: number; body: unknown } | null,
): Promise<void> {
  if (!completion) {
    await insertMessages(db, messages);
    return;
  }
  await db
    .with('inserted', (qb) => messagesInsert(qb, messages))
    .with('completed', (qb) =>
      qb
        .updateTable('idempotency_keys')
        .set({ order_id: completion.orderId, response_status: completion.status, response_body: JSON.stringify(completion.body) })
        .where('scope', '=', completion.scope)
        .where('key', '=', completion.key)
        .returning('scope'),
    )
    .selectFrom('inserted')
    .select(['inserted.id', notifyOutbox().as('notified')])
    .execute();
}
