/**
 * Never twice: concurrent orders redeeming one code through the real HTTP stack,
 * each in its own transaction on a real PostgreSQL. A single-use code is redeemed exactly once by 500
 * racing orders; a code with N uses exactly N times. Losers get 409 ABORTED and leave no trace.
 */
import { createCodes, orderBody, postOrder, snapshot, startShop, type TestShop } from './support/orders';

let shop: TestShop;
beforeAll(async () => {
  shop = await startShop({ poolSize: 20 });
});
afterAll(async () => {
  await shop.close();
});

async function race(code: string, orders: number) {
  const before = await snapshot(shop.database);
  const body = orderBody({ orderItems: [{ articleNumber: 'BSF8', quantity: 1 }], discountCodes: [code] });
  const results = await Promise.all(Array.from({ length: orders }, () => postOrder(shop, body)));
  const after = await snapshot(shop.database);
  const ok = results.filter((r) => r.status === 200);
  const conflicts = results.filter((r) => r.status === 409);
  expect(ok.length + conflicts.length).toBe(orders);
  for (const r of conflicts) expect(r.body).toMatchObject({ code: 10 });
  const stored = await shop.database.db
    .selectFrom('discount_codes')
    .select(['redemptions', 'max_redemptions'])
    .where('code', '=', code)
    .executeTakeFirstOrThrow();
  const redemptions = await shop.database.db
    .selectFrom('discount_redemptions as r')
    .innerJoin('discount_codes as c', 'c.id', 'r.code_id')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('c.code', '=', code)
    .executeTakeFirstOrThrow();
  return {
    ok: ok.length,
    counter: stored.redemptions,
    rows: Number(redemptions.n),
    newOrders: after.orders - before.orders,
    newMails: after.outbox - before.outbox,
  };
}

test('500 concurrent orders with a single-use code: exactly one redeems it', async () => {
  const [code] = await createCodes(shop, { kind: 'fixedAmount', amountCents: 1000, maxRedemptionsPerCode: 1 });
  expect(await race(code, 500)).toEqual({ ok: 1, counter: 1, rows: 1, newOrders: 1, newMails: 1 });
});

test('a code with 25 uses raced by 120 orders: exactly 25 redeem it', async () => {
  const [code] = await createCodes(shop, { kind: 'percent', percent: 5, maxRedemptionsPerCode: 25 });
  expect(await race(code, 120)).toEqual({ ok: 25, counter: 25, rows: 25, newOrders: 25, newMails: 25 });
});
