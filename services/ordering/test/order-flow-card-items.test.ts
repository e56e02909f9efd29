/**
 * `utils/bulk-update-card-order-items`: atomic (all or nothing), validated (400 duplicates / wrong range,
 * 404 unknown item, 409 taken number or frozen order), numbers swappable within one request, and card
 * number uniqueness decided by the constraint under concurrency (20 racers for one number → one wins).
 */
import request from 'supertest';
import { transitionOrder } from '../src/orders/order-states';
import { orderBody, postOrder, startShop, type TestShop } from './support/orders';

let shop: TestShop;
let admin: string;
beforeAll(async () => {
  shop = await startShop();
  admin = await shop.ctx.bearer({ roles: ['admin'], userGroup: 'internal', id: 1 });
});
afterAll(async () => {
  await shop.close();
});

const PATH = '/api/rest/v1/utils/bulk-update-card-order-items';
const bulk = (body: unknown) =>
  request(shop.url)
    .post(PATH)
    .set('Authorization', admin)
    .send(body as object);

async function order(numbers: number[]): Promise<{ id: number; orderNumber: string; items: number[] }> {
  const res = await postOrder(
    shop,
    orderBody({ orderItems: numbers.map((n) => ({ articleNumber: 'SIAC1', quantity: 1, configuration: { cardNumber: String(n) } })) }),
  );
  expect(res.status).toBe(200);
  const items = await shop.database.db
    .selectFrom('order_items')
    .select(['id'])
    .where('order_id', '=', res.body.oid)
    .where('card_number', 'is not', null)
    .orderBy('position')
    .execute();
  return { id: res.body.oid, orderNumber: res.body.orderNumber, items: items.map((i) => i.id) };
}
async function numbersOf(orderId: number): Promise<number[]> {
  const rows = await shop.database.db
    .selectFrom('order_items')
    .select(['card_number', 'configuration'])
    .where('order_id', '=', orderId)
    .where('card_number', 'is not', null)
    .orderBy('position')
    .execute();
  for (const r of rows) expect(r.configuration.cardNumber).toBe(String(r.card_number));
  return rows.map((r) => r.card_number!);
}
async function claimsOf(orderNumber: string): Promise<number[]> {
  const rows = await shop.database.db.selectFrom('card_numbers').select('service_id').where('order_ref', '=', orderNumber).orderBy('service_id').execute();
  return rows.map((r) => r.service_id);
}

test('swaps within an order and moves to free numbers; claims follow', async () => {
  const a = await order([8500001, 8500002]);
  const r = await bulk({
    items: [
      { orderItemOid: a.items[0], cardNumber: 8500002 },
      { orderItemOid: a.items[1], cardNumber: 8500001 },
    ],
    reason: 'customer swapped cards',
  });
  expect(r.status).toBe(200);
  expect(await numbersOf(a.id)).toEqual([8500002, 8500001]);
  expect(await bulk({ items: [{ orderItemOid: a.items[0], cardNumber: 8500010 }] }).then((x) => x.status)).toBe(200);
  expect(await numbersOf(a.id)).toEqual([8500010, 8500001]);
  expect(await claimsOf(a.orderNumber)).toEqual([8500001, 8500010]);
  const history = await shop.database.db.selectFrom('order_state_changes').select(['reason']).where('order_id', '=', a.id).orderBy('id').execute();
  expect(history.at(-2)?.reason).toContain('customer swapped cards');
});

test('all or nothing: one taken number rejects the whole request; validation answers', async () => {
  const a = await order([8500101, 8500102]);
  const b = await order([8500103]);
  const before = { a: await numbersOf(a.id), b: await numbersOf(b.id), claimsA: await claimsOf(a.orderNumber) };
  const taken = await bulk({
    items: [
      { orderItemOid: a.items[0], cardNumber: 8500199 },
      { orderItemOid: a.items[1], cardNumber: 8500103 },
    ],
  });
  expect(taken.status).toBe(409);
  expect(await numbersOf(a.id)).toEqual(before.a);
  expect(await claimsOf(a.orderNumber)).toEqual(before.claimsA);
  expect(await numbersOf(b.id)).toEqual(before.b);

  expect((await bulk({ items: [{ orderItemOid: a.items[0], cardNumber: 1000001 }] })).status).toBe(400);
  expect(
    (
      await bulk({
        items: [
          { orderItemOid: a.items[0], cardNumber: 8500150 },
          { orderItemOid: a.items[1], cardNumber: 8500150 },
        ],
      })
    ).status,
  ).toBe(400);
  expect((await bulk({ items: [{ orderItemOid: 99999999, cardNumber: 8500150 }] })).status).toBe(404);
  expect((await bulk({ items: [] })).status).toBe(400);
  const customer = await shop.ctx.bearer({ roles: ['customer'], id: 7 });
  expect(
    (
      await request(shop.url)
        .post(PATH)
        .set('Authorization', customer)
        .send({ items: [{ orderItemOid: a.items[0], cardNumber: 8500150 }] })
    ).status,
  ).toBe(403);

  await shop.database.db.transaction().execute((trx) => transitionOrder(trx, b.id, 'cancelled', { actor: 'system:test' }));
  expect((await bulk({ items: [{ orderItemOid: b.items[0], cardNumber: 8500160 }] })).status).toBe(409);
});

test('20 concurrent requests for one free number: exactly one wins', async () => {
  const orders = await Promise.all(Array.from({ length: 20 }, (_, i) => order([8500200 + i])));
  const results = await Promise.all(orders.map((o) => bulk({ items: [{ orderItemOid: o.items[0], cardNumber: 8500299 }] })));
  const statuses = results.map((r) => r.status).sort();
  expect(statuses.filter((s) => s === 200)).toHaveLength(1);
  expect(statuses.filter((s) => s === 409)).toHaveLength(19);
  const holders = await shop.database.db.selectFrom('order_items').select('id').where('card_number', '=', 8500299).execute();
  expect(holders).toHaveLength(1);
});
