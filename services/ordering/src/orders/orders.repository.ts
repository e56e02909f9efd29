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
 * An item of {@link insertNewOrder} (the `order_items` columns but order and parent ids): `parent_position`
 * is the position of its main item (sub items), else null.
 */
export type NewOrderItem = Omit<Insertable<OrderItemsTable>, 'id' | 'order_id' | 'parent_item_id' | 'configuration'> & {
  parent_position: number | null;
  configuration: Record<string, string>;
};

/** The item columns {@link insertNewOrder} takes from its input, in insert order. */
const ITEM_COLUMNS = [
  'line_no',
  'position',
  'article_number',
  'article_name',
  'quantity',
  'configuration',
  'article_bom_item_oid',
  'unit_net_price_cents',
  'net_amount_cents',
  'discount_net_cents',
  'vat_rate_percent',
  'vat_cents',
  'card_type',
  'card_number',
] as const;

/**
 * Inserts a new order with its items in one statement: its id is drawn from the identity sequence, its order
 * number is `orderNumberPrefix` followed by the id padded to at least 6 digits (see `orderNumberFor`), the
 * first entry of its state history (`from_state` null, `to_state` its state) is written with it, and each sub
 * item points at the main item at its `parent_position`. Returns the order row and the item rows (by
 * position) as stored.
 */
export async function insertNewOrder(
  db: Kysely<DB>,
  row: Omit<Insertable<OrdersTable>, 'id' | 'order_number'>,
  orderNumberPrefix: string,
  history: { actor: string; reason: string | null },
  items: readonly NewOrderItem[],
): Promise<{ order: OrderRow; items: OrderItemRow[] }> {
  // `new_id` is referenced more than once and calls a volatile function: PostgreSQL evaluates it once.
  const id = sql<number>`(select id from new_id)`;
  const columns = sql.raw(ITEM_COLUMNS.join(', '));
  const inputColumns = sql.raw(ITEM_COLUMNS.map((c) => `input.${c}`).join(', '));
  const stored = await db
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
    // The items travel as one JSON parameter; sub items are joined to their main item's new row.
    .with(
      'input',
      // Raw CTE bodies are not parenthesized by Kysely: they bring their own parentheses.
      () => sql`(select * from jsonb_to_recordset(${JSON.stringify(items)}::jsonb) as input(
        parent_position int, line_no int, position int, article_number text, article_name text, quantity int, configuration jsonb,
        article_bom_item_oid int, unit_net_price_cents bigint, net_amount_cents bigint, discount_net_cents bigint,
        vat_rate_percent numeric, vat_cents bigint, card_type text, card_number int))`,
    )
    .with('mains', () => sql`(insert into order_items (order_id, parent_item_id, ${columns}) select ${id}, null, ${inputColumns} from input where input.parent_position is null returning *)`)
    .with(
      'subs',
      () => sql`(insert into order_items (order_id, parent_item_id, ${columns})
        select ${id}, mains.id, ${inputColumns} from input join mains on mains.position = input.parent_position returning *)`,
    )
    .selectFrom('new_order')
    .selectAll()
    // The item rows as JSON, numeric as text: what pg gives for the row itself (int8 and jsonb arrive alike).
    .select(
      sql<OrderItemRow[]>`(select coalesce(jsonb_agg(to_jsonb(i) || jsonb_build_object('vat_rate_percent', i.vat_rate_percent::text) order by i.position), '[]')
        from (select * from mains union all select * from subs) i)`.as('items'),
    )
    .executeTakeFirstOrThrow();
  const { items: itemRows, ...order } = stored;
  return { order, items: itemRows };
}

/**
 * Sets the card numbers drawn for items of order `orderId` after its insert, by position; each item's
 * configuration gets the number (as text) under `configurationKey`. Returns the changed rows.
 */
export async function setDrawnCardNumbers(db: Kysely<DB>, orderId: number, drawn: readonly { position: number; cardNumber: number }[], configurationKey: string): Promise<OrderItemRow[]> {
  if (drawn.length === 0) return [];
  const r = await sql<OrderItemRow>`
    update order_items i set card_number = d.card_number, configuration = i.configuration || jsonb_build_object(${configurationKey}::text, d.card_number::text)
    from jsonb_to_recordset(${JSON.stringify(drawn.map((d) => ({ position: d.position, card_number: d.cardNumber })))}::jsonb) as d(position int, card_number int)
    where i.order_id = ${orderId} and i.position = d.position
    returning i.*`.execute(db);
  return r.rows;
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
