/**
 * Unpaid orders expire (ordering README "Unpaid orders expire", spec `OrderState`): an unpaid order past
 * the expiry is cancelled with reason `expired`, its card number and single-use discount code are free
 * again and its paylink is deleted at the payment provider (simulator); an order not yet due and a paid
 * one are untouched; two sweepers of two instances (own pools) on one database cancel each order exactly
 * once; a payment confirmed after the expiry is flagged on the order for a refund and shown to admins.
 * The clock is the sweep's `now` argument: no sleeping until an expiry.
 */
import request from 'supertest';
import { createDatabase, createLogger } from '@sports-timing/shared';
import type { PaymentSimulator, Transaction } from '@sports-timing/payment-simulator';
import type { DB } from '../src/db/schema';
import { expireUnpaidOrders, OrderExpirySweeper } from '../src/orders/flow/order-expiry.service';
import type { OrderingTestContext } from './support/app';
import { startOrderFlowStack, until, WEBHOOK_PATH, type OrderFlowStack } from './support/order-flow-stack';
import { orderBody } from './support/orders';
import { testConnectTimeoutMs } from '@sports-timing/shared/src/test-time';

const DAY_MS = 24 * 60 * 60 * 1000;
let stack: OrderFlowStack;
let pay: PaymentSimulator;
let ctx: OrderingTestContext;
let url: string;

beforeAll(async () => {
  stack = await startOrderFlowStack('order-expiry-test', { erp: false });
  ({ pay, ctx, url } = stack);
});

afterAll(() => stack.close());

function control(action: string, body: unknown): Promise<{ transaction: Transaction }> {
  return stack.control(action, body);
}

let cardNumber = 8500000;
async function placeOrder(extra: { discountCodes?: string[]; cardNumber?: number } = {}): Promise<{ id: number; orderNumber: string; cardNumber: number }> {
  const n = extra.cardNumber ?? cardNumber++;
  const res = await request(url)
    .post('/api/grpc-json/v1/shop/orders')
    .send(
      orderBody({
        orderItems: [{ articleNumber: 'SIAC1', quantity: 1, configuration: { cardNumber: String(n) } }],
        ...(extra.discountCodes ? { discountCodes: extra.discountCodes } : {}),
      }),
    );
  if (res.status !== 200) throw new Error(`order: ${res.status} ${JSON.stringify(res.body)}`);
  expect(res.body.state).toBe('pending_payment');
  expect(res.body.paylinkUrl).toMatch(/\/pay\//);
  return { id: res.body.oid, orderNumber: res.body.orderNumber, cardNumber: n };
}

const orderRow = (id: number) => ctx.database.db.selectFrom('orders').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const claimsOf = (orderNumber: string) => ctx.database.db.selectFrom('card_numbers').selectAll().where('order_ref', '=', orderNumber).execute();
const cancellations = (id: number) =>
  ctx.database.db
    .selectFrom('order_state_changes')
    .selectAll()
    .where('order_id', '=', id)
    .where('to_state', '=', 'cancelled')
    .where('from_state', '=', 'pending_payment')
    .execute();

test('an unpaid order past the expiry is cancelled as expired: card number and code free again, paylink deleted at the provider', async () => {
  const staff = await ctx.bearer({ roles: ['support'], userGroup: 'internal', id: 900 });
  const created = await request(url)
    .post('/api/grpc-json/v1/shop/discount-codes/create')
    .set('Authorization', staff)
    .send({ campaignName: 'Expiry', kind: 'percent', percent: 10, codes: ['ONCE-ONLY'], maxRedemptionsPerCode: 1 });
  expect(created.status).toBe(200);
  const order = await placeOrder({ discountCodes: ['ONCE-ONLY'] });
  const paylinkId = (await orderRow(order.id)).paylink_id!;
  expect(pay.invoice(paylinkId)).toBeDefined();
  expect(await claimsOf(order.orderNumber)).toHaveLength(1);
  // The code is used up: a second order with it is refused.
  const second = await request(url)
    .post('/api/grpc-json/v1/shop/orders')
    .send(orderBody({ orderItems: [{ articleNumber: 'BSF8', quantity: 1 }], discountCodes: ['ONCE-ONLY'] }));
  expect(second.status).not.toBe(200);

  // Not yet due (23 h 59 min): nothing happens.
  expect(await expireUnpaidOrders(ctx.database.db, { now: new Date(Date.now() + DAY_MS - 60_000), expiryMinutes: 1440 })).toEqual([]);
  expect((await orderRow(order.id)).state).toBe('pending_payment');

  // A day later.
  const expired = await expireUnpaidOrders(ctx.database.db, { now: new Date(Date.now() + DAY_MS + 1000), expiryMinutes: 1440 });
  expect(expired).toContain(order.id);
  const row = await orderRow(order.id);
  expect(row.state).toBe('cancelled');
  expect(row.cancellation_reason).toBe('expired');
  expect((await cancellations(order.id))[0]).toMatchObject({ actor: 'system:order-expiry', reason: expect.stringMatching(/^expired/) });
  expect(await claimsOf(order.orderNumber)).toHaveLength(0);
  await until('paylink deleted at the provider', async () => pay.invoice(paylinkId) === undefined);
  // Card number and code can be ordered again.
  const again = await placeOrder({ discountCodes: ['ONCE-ONLY'], cardNumber: order.cardNumber });
  expect(again.id).not.toBe(order.id);
  // Admins see why.
  const admin = await ctx.bearer({ roles: ['admin'], userGroup: 'internal', id: 901 });
  const listed = await request(url).get(`/api/rest/v1/dev/get-orders?searchText=${order.orderNumber}`).set('Authorization', admin);
  expect(listed.status).toBe(200);
  expect(listed.body.items[0]).toMatchObject({ state: 'cancelled', cancellationReason: 'expired', latePaymentTransactionId: null });
});

test('a paid order is never expired; a sweep repeated changes nothing', async () => {
  const order = await placeOrder();
  await control('subscribe', { url: `${url}${WEBHOOK_PATH}`, format: 'json' });
  try {
    await control('pay', { invoiceId: (await orderRow(order.id)).paylink_id });
    await until('paid', async () => (await orderRow(order.id)).state !== 'pending_payment');
  } finally {
    await control('unsubscribe', { url: `${url}${WEBHOOK_PATH}` });
  }
  const later = new Date(Date.now() + 3 * DAY_MS);
  expect(await expireUnpaidOrders(ctx.database.db, { now: later, expiryMinutes: 1440 })).not.toContain(order.id);
  // Paid (or handed on to the ERP already): never cancelled.
  expect(['paid', 'transferred']).toContain((await orderRow(order.id)).state);
  expect(await expireUnpaidOrders(ctx.database.db, { now: later, expiryMinutes: 1440 })).toEqual([]);
});

test('two instances sweeping at once cancel every due order exactly once', async () => {
  const orders = [];
  for (let i = 0; i < 24; i++) orders.push(await placeOrder());
  const jobsBefore = await ctx.database.db.selectFrom('outbox_messages').select('id').where('kind', '=', 'payment-paylink-delete').execute();
  // Two instances: own pools, own sweepers, small batches so that they interleave.
  const pools = [0, 1].map(() =>
    createDatabase<DB>({
      connectTimeoutMs: testConnectTimeoutMs(),
      url: ctx.testDb.url,
      schema: 'ordering',
      max: 4,
      logger: createLogger('order-expiry-test'),
    }),
  );
  try {
    const later = new Date(Date.now() + 2 * DAY_MS);
    const runs = await Promise.all(
      pools.flatMap((p) =>
        [0, 1].map(async () => {
          const mine: number[] = [];
          for (;;) {
            const ids = await expireUnpaidOrders(p.db, { now: later, expiryMinutes: 1440, limit: 3 });
            mine.push(...ids);
            if (ids.length === 0) return mine;
          }
        }),
      ),
    );
    const all = runs.flat();
    expect(new Set(all).size).toBe(all.length);
    for (const o of orders) expect(all).toContain(o.id);
    // Each run cancelled some: the sweeps really ran side by side.
    expect(runs.filter((r) => r.length > 0).length).toBeGreaterThan(1);
    for (const o of orders) {
      expect(await cancellations(o.id)).toHaveLength(1);
      expect(await claimsOf(o.orderNumber)).toHaveLength(0);
    }
    const jobs = await ctx.database.db.selectFrom('outbox_messages').select('dedupe_key').where('kind', '=', 'payment-paylink-delete').execute();
    expect(jobs.length - jobsBefore.length).toBe(orders.length);
    // The sweeper class the server runs: nothing left to do.
    const sweeper = new OrderExpirySweeper({
      db: pools[0].db,
      logger: createLogger('order-expiry-test'),
      expiryMinutes: 1440,
      intervalMs: 60_000,
      now: () => later,
    });
    expect(await sweeper.sweep()).toBe(0);
  } finally {
    await Promise.all(pools.map((p) => p.close()));
  }
});

test('a payment confirmed after the expiry is flagged on the order for a refund, not lost', async () => {
  const order = await placeOrder();
  const paylinkId = (await orderRow(order.id)).paylink_id!;
  // The payer pays, but the webhook is late (no subscription): the order expires first.
  const { transaction } = await control('pay', { invoiceId: paylinkId });
  expect(await expireUnpaidOrders(ctx.database.db, { now: new Date(Date.now() + 2 * DAY_MS), expiryMinutes: 1440 })).toContain(order.id);
  // The paid paylink cannot be deleted at the provider: the job ends and says so in the history.
  await until('paylink job done', async () => {
    const job = await ctx.database.db
      .selectFrom('outbox_messages')
      .select('sent_at')
      .where('kind', '=', 'payment-paylink-delete')
      .where('dedupe_key', '=', `order:${order.id}`)
      .executeTakeFirst();
    return job?.sent_at != null;
  });
  // Now the webhook arrives.
  expect(
    (
      await request(url)
        .post(WEBHOOK_PATH)
        .send({ transaction: { id: transaction.id, status: 'confirmed' } })
    ).status,
  ).toBe(200);
  await until('late payment flagged', async () => (await orderRow(order.id)).late_payment_transaction_id !== null);
  const row = await orderRow(order.id);
  expect(row.state).toBe('cancelled');
  expect(row.late_payment_transaction_id).toBe(transaction.id);
  const delivery = await ctx.database.db.selectFrom('payment_deliveries').select('outcome').where('order_id', '=', order.id).executeTakeFirstOrThrow();
  expect(delivery.outcome).toBe('latePayment:refundNeeded');
  const history = await ctx.database.db.selectFrom('order_state_changes').select('reason').where('order_id', '=', order.id).orderBy('id').execute();
  expect(history.map((h) => h.reason).join('\n')).toMatch(/confirmed after the order was cancelled; refund it/);
  const admin = await ctx.bearer({ roles: ['admin'], userGroup: 'internal', id: 901 });
  const listed = await request(url).get(`/api/rest/v1/dev/get-orders?searchText=${order.orderNumber}`).set('Authorization', admin);
  expect(listed.body.items[0]).toMatchObject({ state: 'cancelled', cancellationReason: 'expired', latePaymentTransactionId: transaction.id });
});
