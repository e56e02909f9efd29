/**
 * SQL of orders, order items and state history (idempotency records: idempotency.repository.ts). Free
 * functions taking the executor first; the order pipeline passes its transaction.
 */
import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import { PREPARED } from '@sports-timing/shared';
import type { DB } from '../db/schema';
import type { OrderItemsTable, OrdersTable } from '../db/tables/orders.tables';

/** A stored `orders` row. */
export type OrderRow = Selectable<OrdersTable>;
/** A stored `order_items` row. */
export type OrderItemRow = Selectable<OrderItemsTable>;

/** The columns of `orders`, as an insert returns them (named: see `PREPARED`). */
const ORDER_COLUMNS: readonly (keyof OrdersTable)[] = [
  'id',
  'order_number',
  'source',
  'state',
  'payment_method',
  'user_group',
  'created_by_kind',
  'created_by_id',
  'erp_retailer_entity_id',
  'contact',
  'shipping_address',
  'shipping_country_id',
  'billing_address',
  'billing_country_id',
  'billing_same_as_shipping',
  'discount_codes',
  'retailer_customer_order_reference',
  'notes',
  'currency',
  'items_net_cents',
  'discount_cents',
  'shipping_net_cents',
  'net_total_cents',
  'vat_cents',
  'gross_total_cents',
  'vat_breakdown',
  'courier',
  'paylink_url',
  'paylink_id',
  'payment_transaction_id',
  'erp_sales_order_id',
  'cancellation_reason',
  'late_payment_transaction_id',
  'erp_create_started_at',
  'payment_on_hold_at',
  'created_at',
  'updated_at',
];

/** What a new order is inserted with (the rest comes from defaults, the id and the order number from the insert). */
export type NewOrderRow = Required<
  Omit<
    Insertable<OrdersTable>,
    | 'id'
    | 'order_number'
    | 'paylink_url'
    | 'paylink_id'
    | 'payment_transaction_id'
    | 'erp_sales_order_id'
    | 'cancellation_reason'
    | 'late_payment_transaction_id'
    | 'erp_create_started_at'
    | 'payment_on_hold_at'
  >
>;

/** Columns of a new order that come from the insert itself or from their defaults. */
const NOT_GIVEN = new Set<keyof OrdersTable>([
  'id',
  'order_number',
  'paylink_url',
  'paylink_id',
  'payment_transaction_id',
  'erp_sales_order_id',
  'cancellation_reason',
  'late_payment_transaction_id',
  'erp_create_started_at',
  'payment_on_hold_at',
]);

/** The columns {@link insertNewOrder} writes from a {@link NewOrderRow}, in insert order. */
const NEW_ORDER_COLUMNS = ORDER_COLUMNS.filter((c): c is keyof NewOrderRow => !NOT_GIVEN.has(c));

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

const list = (columns: readonly string[], prefix = '') => sql.raw(columns.map((c) => `${prefix}${c}`).join(', '));

/**
 * Inserts a new order with its items in one prepared statement: its id is drawn from the identity
 * sequence, its order number is `orderNumberPrefix` followed by the id padded to at least 6 digits (see
 * `orderNumberFor`), the first entry of its state history (`from_state` null, `to_state` its state) is
 * written with it, and each sub item points at the main item at its `parent_position`. Returns the order
 * row and the item rows (by position) as stored.
 */
export async function insertNewOrder(
  db: Kysely<DB>,
  row: NewOrderRow,
  orderNumberPrefix: string,
  history: { actor: string; reason: string | null },
  items: readonly NewOrderItem[],
): Promise<{ order: OrderRow; items: OrderItemRow[] }> {
  // `new_id` is referenced more than once and calls a volatile function: PostgreSQL evaluates it once.
  // The items travel as one JSON parameter; sub items are joined to their main item's new row.
  const r = await sql<OrderRow & { items: OrderItemRow[] }>`${PREPARED}
    with new_id as (select nextval(pg_get_serial_sequence('orders', 'id'))::int as id),
    new_order as (
      insert into orders (id, order_number, ${list(NEW_ORDER_COLUMNS)})
      select new_id.id, ${orderNumberPrefix}::text || lpad(new_id.id::text, greatest(6, length(new_id.id::text)), '0'),
        ${sql.join(NEW_ORDER_COLUMNS.map((c) => sql`${row[c]}`))}
      from new_id
      returning ${list(ORDER_COLUMNS)}),
    history as (
      insert into order_state_changes (order_id, from_state, to_state, actor, reason)
      select id, null, state, ${history.actor}::text, ${history.reason}::text from new_order),
    input as (
      select * from jsonb_to_recordset(${JSON.stringify(items)}::jsonb) as input(
        parent_position int, line_no int, position int, article_number text, article_name text, quantity int, configuration jsonb,
        article_bom_item_oid int, unit_net_price_cents bigint, net_amount_cents bigint, discount_net_cents bigint,
        vat_rate_percent numeric, vat_cents bigint, card_type text, card_number int)),
    mains as (
      insert into order_items (order_id, parent_item_id, ${list(ITEM_COLUMNS)})
      select (select id from new_id), null, ${list(ITEM_COLUMNS, 'input.')} from input where input.parent_position is null
      returning *),
    subs as (
      insert into order_items (order_id, parent_item_id, ${list(ITEM_COLUMNS)})
      select (select id from new_id), mains.id, ${list(ITEM_COLUMNS, 'input.')} from input join mains on mains.position = input.parent_position
      returning *)
    select ${list(ORDER_COLUMNS)},
      -- The item rows as JSON, numeric as text: what pg gives for the row itself (int8 and jsonb arrive alike).
      (select coalesce(jsonb_agg(to_jsonb(i) || jsonb_build_object('vat_rate_percent', i.vat_rate_percent::text) order by i.position), '[]')
        from (select * from mains union all select * from subs) i) as items
    from new_order`.execute(db);
  const { items: itemRows, ...order } = r.rows[0];
  return { order, items: itemRows };
}

/**
 * Sets the card numbers drawn for items of order `orderId` after its insert, by position; each item's
 * configuration gets the number (as text) under `configurationKey`. Returns the changed rows.
 */
export async function setDrawnCardNumbers(
  db: Kysely<DB>,
  orderId: number,
  drawn: readonly { position: number; cardNumber: number }[],
  configurationKey: string,
): Promise<OrderItemRow[]> {
  if (drawn.length === 0) return [];
  const r = await sql<OrderItemRow>`
    update order_items i set card_number = d.card_number, configuration = i.configuration || jsonb_build_object(${configurationKey}::text, d.card_number::text)
    from jsonb_to_recordset(${JSON.stringify(drawn.map((d) => ({ position: d.position, card_number: d.cardNumber })))}::jsonb) as d(position int, card_number int)
    where i.order_id = ${orderId} and i.position = d.position
    returning i.*`.execute(db);
  return r.rows;
}

/** Appends a state change to an order's history. */
export async function insertStateChange(
  db: Kysely<DB>,
  change: { orderId: number; from: string | null; to: string; actor: string; reason: string | null },
): Promise<void> {
  await db
    .insertInto('order_state_changes')
    .values({ order_id: change.orderId, from_state: change.from, to_state: change.to, actor: change.actor, reason: change.reason })
    .execute();
}

/**
 * Moves order `orderId` to state `to` if its current state is one of `allowed`, in one statement: the row is
 * locked (`for update`, waiting for a concurrent writer) and the UPDATE applies only to that committed state.
 * Returns the state before and whether it changed; undefined when the order does not exist.
 */
export async function updateOrderStateIf(
  trx: Kysely<DB>,
  orderId: number,
  to: string,
  allowed: readonly string[],
): Promise<{ from_state: string; changed: boolean } | undefined> {
  const r = await sql<{ from_state: string; changed: boolean }>`
    with old as (select id, state from orders where id = ${orderId} for update),
    upd as (
      update orders o set state = ${to}, updated_at = now()
      from old where o.id = old.id and old.state = any(${allowed}::text[])
      returning o.id)
    select old.state as from_state, exists (select 1 from upd) as changed from old`.execute(trx);
  return r.rows[0];
}

/** The current state of order `orderId` (no lock); throws (Kysely `NoResultError`) when the order does not exist. */
export async function selectOrderState(db: Kysely<DB>, orderId: number): Promise<string> {
  const row = await db.selectFrom('orders').select('state').where('id', '=', orderId).executeTakeFirstOrThrow();
  return row.state;
}

/** Paylink id (null when none) and order number of order `orderId`; undefined when the order does not exist. */
export async function selectPaylinkOf(db: Kysely<DB>, orderId: number): Promise<{ paylink_id: number | null; order_number: string } | undefined> {
  return db.selectFrom('orders').select(['paylink_id', 'order_number']).where('id', '=', orderId).executeTakeFirst();
}

/** Stores paylink `paylinkId` (`url`) on order `orderId` unconditionally, replacing any previous one. */
export async function setOrderPaylink(db: Kysely<DB>, orderId: number, paylinkId: number, url: string): Promise<void> {
  await db.updateTable('orders').set({ paylink_id: paylinkId, paylink_url: url, updated_at: new Date() }).where('id', '=', orderId).execute();
}

/** Removes paylink `paylinkId` from order `orderId`; no change when the order has another paylink by now. */
export async function clearOrderPaylink(db: Kysely<DB>, orderId: number, paylinkId: number): Promise<void> {
  await db
    .updateTable('orders')
    .set({ paylink_id: null, paylink_url: null, updated_at: new Date() })
    .where('id', '=', orderId)
    .where('paylink_id', '=', paylinkId)
    .execute();
}

/** A card order item with its order, as locked by {@link lockCardItems}. */
export interface LockedCardItem {
  id: number;
  card_type: string | null;
  card_number: number | null;
  order_id: number;
  order_number: string;
  state: string;
}

/**
 * Order items `ids` with their orders' number and state, locking both rows (`for update of i, o`) in item id
 * order so concurrent callers cannot deadlock. Unknown ids are missing from the answer.
 */
export async function lockCardItems(trx: Kysely<DB>, ids: readonly number[]): Promise<LockedCardItem[]> {
  const sorted = [...ids].sort((a, b) => a - b);
  const r = await sql<LockedCardItem>`
    select i.id, i.card_type, i.card_number, i.order_id, o.order_number, o.state
    from order_items i join orders o on o.id = i.order_id
    where i.id = any(${sorted}::int[])
    order by i.id
    for update of i, o`.execute(trx);
  return r.rows;
}

/** Sets order item `itemId`'s card number, also as the text value of `configuration[configurationKey]`. */
export async function setItemCardNumber(trx: Kysely<DB>, itemId: number, cardNumber: number, configurationKey: string): Promise<void> {
  await sql`
    update order_items set card_number = ${cardNumber},
      configuration = jsonb_set(configuration, ${sql.lit(`{${configurationKey}}`)}::text[], to_jsonb(${String(cardNumber)}::text))
    where id = ${itemId}`.execute(trx);
}

/** Filters, sort and page of {@link selectOrderPage}. */
export interface OrderPageFilter {
  /** Empty → all states. */
  states: readonly string[];
  erpRetailerEntityId?: string;
  /** Shipping country id; null matches nothing (an unknown country code). */
  shippingCountryId?: number | null;
  /** Case-insensitive substring of order number, contact name or e-mail, organisation or customer reference. */
  searchText?: string;
  column: 'id' | 'order_number' | 'created_at' | 'gross_total_cents';
  direction: 'asc' | 'desc';
  limit: number;
  offset: number;
}

/** `%`, `_` and `\` taken literally in an ILIKE pattern. */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** One page of `orders` rows (sorted by `column`, ties by id in the same direction) and the number of all matching rows. */
export async function selectOrderPage(db: Kysely<DB>, f: OrderPageFilter): Promise<{ total: number; rows: OrderRow[] }> {
  let base = db.selectFrom('orders');
  if (f.states.length > 0) base = base.where('state', 'in', [...f.states]);
  if (f.erpRetailerEntityId) base = base.where('erp_retailer_entity_id', '=', f.erpRetailerEntityId);
  if (f.shippingCountryId !== undefined) base = base.where('shipping_country_id', '=', f.shippingCountryId ?? -1);
  if (f.searchText) {
    const pattern = `%${likeLiteral(f.searchText)}%`;
    base = base.where(
      sql<boolean>`(order_number ilike ${pattern} or (contact->>'firstName') || ' ' || (contact->>'lastName') ilike ${pattern}
        or contact->>'email' ilike ${pattern} or coalesce(shipping_address->>'organisation', '') ilike ${pattern}
        or coalesce(retailer_customer_order_reference, '') ilike ${pattern})`,
    );
  }
  const [{ n }, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    base.selectAll().orderBy(f.column, f.direction).orderBy('id', f.direction).limit(f.limit).offset(f.offset).execute(),
  ]);
  return { total: Number(n), rows };
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
 * Adds a history row to order `orderId` that changes no state (from and to its current state), e.g. an
 * e-mail the relay refused; returns false when no such order exists.
 */
export async function insertOrderNote(db: Kysely<DB>, orderId: number, actor: string, reason: string): Promise<boolean> {
  const r = await db
    .insertInto('order_state_changes')
    .columns(['order_id', 'from_state', 'to_state', 'actor', 'reason'])
    .expression((eb) =>
      eb
        .selectFrom('orders')
        .select((s) => [
          s.ref('id').as('order_id'),
          s.ref('state').as('from_state'),
          s.ref('state').as('to_state'),
          s.val(actor).as('actor'),
          s.val(reason).as('reason'),
        ])
        .where('id', '=', orderId),
    )
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
}
