/**
 * The short discount hold (ordering README "Discount uses of unpaid orders"), through the real HTTP stack with the
 * payment simulator:
 * - an unpaid order holds its code's use for `DISCOUNT_HOLD_MINUTES`, then the use returns to the pool (negative
 *   control: one minute earlier it does not); the order stays and, paid later, keeps its price and takes the use
 *   back if one is left; if another order took it, the late payment does not redeem the code a second time: the
 *   order is cancelled (`discountUsedUp`) and its payment flagged for a refund; an order whose payment is on its
 *   way keeps its use;
 * - orders racing expiring holds on a k-use code never hold or use more than k (each hold released once).
 */
import { sql } from 'kysely';
import request from 'supertest';
import { releaseDiscountHolds } from '../src/orders/flow/order-expiry.service';
import { orderBody } from './support/orders';
import { startOrderFlowStack, until, WEBHOOK_PATH, type OrderFlowStack } from './support/order-flow-stack';

let stack: OrderFlowStack;
beforeAll(async () => {
  stack = await startOrderFlowStack('discount-hold-test', {
    env: { ORDER_PUBLIC_ORDERS_PER_CALLER_PER_HOUR: '0', ORDER_MAILS_PER_RECIPIENT_PER_HOUR: '0', RATE_LIMIT_DISCOUNT_VALIDATIONS_PER_MINUTE: '0' },
  });
  await stack.control('subscribe', { url: `${stack.url}${WEBHOOK_PATH}`, format: 'json' });
});
afterAll(() => stack.close());

const db = () => stack.ctx.database.db;
const HOLD = 60;
const minutesFromNow = (m: number) => new Date(Date.now() + m * 60_000);

async function newCode(maxRedemptionsPerCode: number): Promise<string> {
  const res = await request(stack.url)
    .post('/api/grpc-json/v1/shop/discount-codes/create')
    .set('Authorization', await stack.ctx.bearer({ roles: ['support'], userGroup: 'internal', id: 900 }))
    .send({ campaignName: 'Hold', kind: 'percent', percent: 10, numberOfCodes: 1, maxRedemptionsPerCode });
  expect(res.status).toBe(200);
  return (res.body as { codes: string[] }).codes[0];
}
function order(code: string) {
  return request(stack.url)
    .post('/api/grpc-json/v1/shop/orders')
    .send(orderBody({ orderItems: [{ articleNumber: 'BSF8', quantity: 1 }], discountCodes: [code] }));
}
async function counter(code: string): Promise<{ redemptions: number; held: number; released: number }> {
  const c = await db().selectFrom('discount_codes').select(['id', 'redemptions']).where('code', '=', code).executeTakeFirstOrThrow();
  const rows = await db().selectFrom('discount_redemptions').select('released_at').where('code_id', '=', c.id).execute();
  return { redemptions: c.redemptions, held: rows.filter((r) => r.released_at === null).length, released: rows.filter((r) => r.released_at !== null).length };
}
const orderRow = (id: number) =>
  db().selectFrom('orders').select(['state', 'paylink_id', 'gross_total_cents', 'discount_cents']).where('id', '=', id).executeTakeFirstOrThrow();
const reasons = async (id: number) =>
  (await db().selectFrom('order_state_changes').select('reason').where('order_id', '=', id).execute()).map((r) => r.reason ?? '');

test('a single-use code is not redeemed twice through the hold release: the order paid after its use was taken is cancelled and flagged for a refund', async () => {
  const code = await newCode(1);
  const a = await order(code);
  expect(a.status).toBe(200);
  expect((await order(code)).status).toBe(409);
  // One minute before the hold ends nothing is released (negative control).
  expect(await releaseDiscountHolds(db(), { now: minutesFromNow(HOLD - 1), holdMinutes: HOLD })).not.toContain(a.body.oid);
  expect((await order(code)).status).toBe(409);
  expect(await releaseDiscountHolds(db(), { now: minutesFromNow(HOLD + 1), holdMinutes: HOLD })).toContain(a.body.oid);
  expect(await counter(code)).toEqual({ redemptions: 0, held: 0, released: 1 });
  expect((await reasons(a.body.oid as number)).some((r) => r.includes(`discount code ${code}: use returned to the pool`))).toBe(true);
  // The attack: the next order takes the released use, then the first is paid before it expires, so that both
  // would get the single-use discount (one such pair every DISCOUNT_HOLD_MINUTES + 1).
  const c = await order(code);
  expect(c.status).toBe(200);
  expect(await counter(code)).toEqual({ redemptions: 1, held: 1, released: 1 });
  const before = await orderRow(a.body.oid as number);
  expect(Number(before.discount_cents)).toBeGreaterThan(0);
  await stack.control('pay', { invoiceId: before.paylink_id });
  await until('cancelled', async () => (await orderRow(a.body.oid as number)).state === 'cancelled');
  const flagged = await db()
    .selectFrom('orders')
    .select(['cancellation_reason', 'late_payment_transaction_id'])
    .where('id', '=', a.body.oid as number)
    .executeTakeFirstOrThrow();
  expect(flagged.cancellation_reason).toBe('discountUsedUp');
  expect(flagged.late_payment_transaction_id).not.toBeNull();
  expect((await reasons(a.body.oid as number)).some((r) => r.includes(`discount code ${code} had no use left`))).toBe(true);
  // The code is used once, by the order holding it; that order pays normally.
  expect(await counter(code)).toEqual({ redemptions: 1, held: 1, released: 0 });
  await stack.control('pay', { invoiceId: (await orderRow(c.body.oid as number)).paylink_id });
  await until('paid', async () => ['paid', 'transferred'].includes((await orderRow(c.body.oid as number)).state));
  expect(await counter(code)).toEqual({ redemptions: 1, held: 1, released: 0 });
  const paid = await db()
    .selectFrom('orders')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('id', 'in', [a.body.oid as number, c.body.oid as number])
    .where('state', 'in', ['paid', 'transferred'])
    .executeTakeFirstOrThrow();
  expect(Number(paid.n)).toBe(1);
});

test('an order paid after its hold ended takes its use back when one is left', async () => {
  const code = await newCode(1);
  const a = await order(code);
  expect(a.status).toBe(200);
  expect(await releaseDiscountHolds(db(), { now: minutesFromNow(HOLD + 1), holdMinutes: HOLD })).toContain(a.body.oid);
  expect(await counter(code)).toEqual({ redemptions: 0, held: 0, released: 1 });
  await stack.control('pay', { invoiceId: (await orderRow(a.body.oid as number)).paylink_id });
  await until('paid', async () => ['paid', 'transferred'].includes((await orderRow(a.body.oid as number)).state));
  expect(await counter(code)).toEqual({ redemptions: 1, held: 1, released: 0 });
  expect((await order(code)).status).toBe(409);
});

test('an order whose payment is on its way keeps its use past the hold', async () => {
  const code = await newCode(1);
  const a = await order(code);
  expect(a.status).toBe(200);
  const { paylink_id } = await orderRow(a.body.oid as number);
  await stack.control('pay', { invoiceId: paylink_id, pending: true });
  await until(
    'on hold',
    async () =>
      (await db().selectFrom('orders').select('payment_on_hold_at').where('id', '=', a.body.oid).executeTakeFirstOrThrow()).payment_on_hold_at !== null,
  );
  expect(await releaseDiscountHolds(db(), { now: minutesFromNow(HOLD + 1), holdMinutes: HOLD })).not.toContain(a.body.oid);
  expect(await counter(code)).toEqual({ redemptions: 1, held: 1, released: 0 });
});

test('30 orders racing two sweeps that end 5 expired holds of a 5-use code: never more than 5 held or used', async () => {
  const k = 5;
  const code = await newCode(k);
  const first = await Promise.all(Array.from({ length: k }, () => order(code)));
  expect(first.map((r) => r.status)).toEqual(Array(k).fill(200));
  expect((await order(code)).status).toBe(409);
  // Those five were placed two hours ago: their holds are due; the racing orders' are not.
  await sql`update orders set created_at = now() - interval '2 hours' where id in (${sql.join(first.map((r) => r.body.oid as number))})`.execute(db());
  const [results, sweeps] = await Promise.all([
    Promise.all(Array.from({ length: 30 }, () => order(code))),
    Promise.all([1, 2].map(() => releaseDiscountHolds(db(), { now: new Date(), holdMinutes: HOLD }))),
  ]);
  const ok = results.filter((r) => r.status === 200).length;
  expect(results.every((r) => r.status === 200 || r.status === 409)).toBe(true);
  expect(sweeps.flat().sort()).toEqual(first.map((r) => r.body.oid as number).sort());
  const after = await counter(code);
  expect(after).toEqual({ redemptions: ok, held: ok, released: k });
  expect(after.redemptions).toBeLessThanOrEqual(k);
  // Nothing more is due: the racing orders keep their holds.
  expect(await releaseDiscountHolds(db(), { now: new Date(), holdMinutes: HOLD })).toEqual([]);
});
