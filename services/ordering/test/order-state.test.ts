/**
 * The order state machine (docs/decisions.md §6): allowed transitions only, a history row per change, stale and
 * repeated transitions change nothing, and racing transitions of one order have exactly one winner.
 */
import { sql } from 'kysely';
import { componentSchemaOf, loadSpec } from '@sports-timing/shared';
import { ORDER_STATES, type OrderState } from '../src/orders/order.types';
import { IllegalTransitionError, ORDER_TRANSITIONS, requireTransition, transitionOrder } from '../src/orders/order-states';
import { SPEC_FILE } from '../src/version';
import { orderBody, postOrder, startShop, type TestShop } from './support/orders';

/** Whether `from → to` is an allowed transition by the table the service moves orders with. */
const canTransition = (from: OrderState, to: OrderState): boolean => ORDER_TRANSITIONS[from].includes(to);

let shop: TestShop;
beforeAll(async () => {
  shop = await startShop();
});
afterAll(async () => {
  await shop.close();
});

let cardNumber = 8200000;
async function newOrder(): Promise<number> {
  const res = await postOrder(shop, orderBody({ orderItems: [{ articleNumber: 'SIAC1', quantity: 1, configuration: { cardNumber: String(cardNumber++) } }] }));
  expect(res.status).toBe(200);
  return (res.body as { oid: number }).oid;
}

async function stateOf(id: number): Promise<{ state: string; history: { from_state: string | null; to_state: string; actor: string }[] }> {
  const o = await shop.database.db.selectFrom('orders').select('state').where('id', '=', id).executeTakeFirstOrThrow();
  const history = await shop.database.db
    .selectFrom('order_state_changes')
    .select(['from_state', 'to_state', 'actor'])
    .where('order_id', '=', id)
    .orderBy('id')
    .execute();
  return { state: o.state, history };
}

test('the transition table is closed over the spec states and final states have no exits', () => {
  for (const s of ORDER_STATES) for (const t of ORDER_TRANSITIONS[s]) expect(ORDER_STATES).toContain(t);
  expect(ORDER_TRANSITIONS.cancelled).toEqual([]);
  expect(ORDER_TRANSITIONS.refunded).toEqual([]);
  expect(canTransition('pending_payment', 'paid')).toBe(true);
  expect(canTransition('paid', 'cancelled')).toBe(false);
  expect(canTransition('received', 'paid')).toBe(false);
  expect(canTransition('received', 'refunded')).toBe(false);
});

test('a prepaid order walks the happy path with a history row per step', async () => {
  const id = await newOrder();
  const db = shop.database.db;
  for (const to of ['paid', 'transferred', 'shipped', 'completed'] as OrderState[]) {
    const r = await db.transaction().execute((trx) => transitionOrder(trx, id, to, { actor: 'system:test', reason: `to ${to}` }));
    expect(r.changed).toBe(true);
  }
  const s = await stateOf(id);
  expect(s.state).toBe('completed');
  expect(s.history.map((h) => `${h.from_state}->${h.to_state}`)).toEqual([
    'null->pending_payment',
    'pending_payment->paid',
    'paid->transferred',
    'transferred->shipped',
    'shipped->completed',
  ]);
});

test('illegal, repeated and stale transitions change nothing', async () => {
  const id = await newOrder();
  const db = shop.database.db;
  expect(await transitionOrder(db, id, 'transferred', { actor: 'system:test' })).toEqual({ changed: false, current: 'pending_payment', to: 'transferred' });
  expect((await transitionOrder(db, id, 'paid', { actor: 'system:test' })).changed).toBe(true);
  expect(await transitionOrder(db, id, 'paid', { actor: 'system:test' })).toEqual({ changed: false, current: 'paid', to: 'paid' });
  // A late cancellation never undoes a payment.
  expect(await transitionOrder(db, id, 'cancelled', { actor: 'system:test' })).toEqual({ changed: false, current: 'paid', to: 'cancelled' });
  // `from` narrows the sources: refunded is allowed from paid, but not when the caller insists on `shipped`.
  expect((await transitionOrder(db, id, 'refunded', { actor: 'system:test', from: ['shipped'] })).changed).toBe(false);
  await expect(requireTransition(db, id, 'completed', { actor: 'system:test' })).rejects.toBeInstanceOf(IllegalTransitionError);
  expect(await transitionOrder(db, 999_999, 'paid', { actor: 'system:test' })).toEqual({ changed: false, current: null, to: 'paid' });
  const s = await stateOf(id);
  expect(s.state).toBe('paid');
  expect(s.history).toHaveLength(2);
});

test('the database refuses a state outside the spec list', async () => {
  const id = await newOrder();
  await expect(sql`update orders set state = 'lost' where id = ${id}`.execute(shop.database.db)).rejects.toThrow(/check constraint/);
});

test('racing transitions of one order: exactly one wins, one history row', async () => {
  const ids = await Promise.all(Array.from({ length: 5 }, () => newOrder()));
  for (const id of ids) {
    // 20 concurrent transactions, half paying and half cancelling the same pending order.
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        shop.database.db.transaction().execute(async (trx) => {
          const r = await transitionOrder(trx, id, i % 2 === 0 ? 'paid' : 'cancelled', { actor: `system:racer-${i}` });
          await new Promise((res) => setTimeout(res, 5)); // keep the lock a moment so the others queue on it
          return r;
        }),
      ),
    );
    const winners = results.filter((r) => r.changed);
    expect(winners).toHaveLength(1);
    const s = await stateOf(id);
    expect(s.state).toBe(winners[0].to);
    expect(s.history).toHaveLength(2);
    for (const r of results) if (!r.changed) expect(r.current).toBe(winners[0].to);
  }
});

test('the transition table is the one the spec OrderState describes', () => {
  const description = componentSchemaOf(loadSpec(SPEC_FILE), 'OrderState').description as string;
  const described = Object.fromEntries([...description.matchAll(/^- `(\w+)` → (.+)$/gm)].map((m) => [m[1], [...m[2].matchAll(/`(\w+)`/g)].map((t) => t[1])]));
  const exits = Object.fromEntries(Object.entries(ORDER_TRANSITIONS).filter(([, to]) => to.length > 0));
  expect(described).toEqual(exits);
});
