/**
 * The order flow end to end against both simulators over real HTTP, up to the hand-off to the ERP: an
 * order gets a paylink, paying it in the payment simulator makes it `paid` and then `transferred` (exactly one
 * sales order in the ERP simulator, nested as weclapp nests sets); the inline paylink answer and e-mail; the
 * paylink guard; ERP shipped/closed; a refund. Webhook deliveries: `order-flow-deliveries.test.ts`; outages:
 * `order-flow-outages.test.ts`.
 */
import request from 'supertest';
import type { ErpSimulator } from '@sports-timing/erp-simulator';
import type { PaymentSimulator } from '@sports-timing/payment-simulator';
import { storePaylink } from '../src/orders/flow/order-flow.repository';
import { findOrder, toShopOrderDTO } from '../src/orders/orders.mapper';
import { orderBody } from './support/orders';
import type { OrderingTestContext } from './support/app';
import { startOrderFlowStack, until, WEBHOOK_PATH, type OrderFlowStack } from './support/order-flow-stack';
import { orderFlowSteps } from './support/order-flow-steps';

let stack: OrderFlowStack;
let erp: ErpSimulator;
let pay: PaymentSimulator;
let ctx: OrderingTestContext;
let url: string;

beforeAll(async () => {
  stack = await startOrderFlowStack('order-flow-test');
  ({ pay, ctx, url } = stack);
  erp = stack.erp!;
  await stack.control('subscribe', { url: `${stack.url}${WEBHOOK_PATH}`, format: 'json' });
});

afterAll(() => stack.close());

const { nextCardNumber, control, placeOrder, orderRow, historyOf, salesOrdersOf, deliveriesSettled, postWebhook } = orderFlowSteps(() => stack, 8300000);

test('a form-encoded webhook is read as Payrexx means its names (numeric keys as object keys) and bounded at 1000 parameters', async () => {
  const placed = await placeOrder();
  const row = await orderRow(placed.id);
  const { transaction } = await control('pay', { invoiceId: row.paylink_id });
  const fields = Array.from({ length: 50 }, (_, i) => `transaction[invoice][customFields][${i + 1}][value]=v${i}`).join('&');
  expect((await postWebhook(`transaction[id]=${transaction.id}&transaction[status]=confirmed&${fields}`, true)).status).toBe(200);
  await until('transferred', async () => (await orderRow(placed.id)).state === 'transferred');
  const tooMany = Array.from({ length: 1001 }, (_, i) => `transaction[invoice][products][${i}][sku]=x`).join('&');
  const res = await postWebhook(`transaction[id]=${transaction.id}&${tooMany}`, true);
  expect(res.status).toBe(413);
  expect(res.text).not.toMatch(/RangeError|at .*\.ts/);
});

test('a set reaches weclapp as weclapp nests it: main items by article id at the shop’s prices, sub items under their main item, nothing off the contract', async () => {
  const res = await request(url)
    .post('/api/grpc-json/v1/shop/orders')
    .send(
      orderBody({
        orderItems: [
          {
            articleNumber: 'TRAINING-SET',
            quantity: 1,
            subitems: [{ articleNumber: 'SI-CARD10', quantity: 1, articleBomItemOid: 2, configuration: { cardNumber: '7000123' } }],
          },
        ],
      }),
    );
  expect(res.status).toBe(200);
  const placed = res.body as { oid: number; orderNumber: string; orderItems: { netAmountCents: number; subitems: unknown[] }[] };
  const row = await orderRow(placed.oid);
  await control('pay', { invoiceId: row.paylink_id });
  await until('transferred', async () => (await orderRow(placed.oid)).state === 'transferred');
  const [so] = salesOrdersOf(placed.orderNumber);
  const items = so.orderItems!;
  const articleIdOf = (n: string) => [...erp.data('main').article.values()].find((a) => a.articleNumber === n)!.id;
  const main = items.filter((it) => it.parentItemId === undefined);
  expect(main).toEqual([expect.objectContaining({ articleId: articleIdOf('TRAINING-SET'), unitPrice: '899.16', manualUnitPrice: true, quantity: '1' })]);
  const subs = items.filter((it) => it.parentItemId === main[0].id);
  expect(subs.map((it) => it.articleId)).toEqual(['BSF8', 'SI-CARD10', 'CARD-HOLDER', 'BAT-BSF8'].map(articleIdOf));
  expect(subs.every((it) => it.unitPrice === '0.00' && it.manualUnitPrice === true)).toBe(true);
  expect(subs[1].description).toContain('cardNumber: 7000123');
  expect(so.customerId).toBe([...erp.data('main').customer.values()].find((c) => c.customerNumber === 'C-9000')!.id);
  expect(erp.contractViolations).toEqual([]);
});

test('order → paylink → paid in the simulator → paid → transferred; 5 repeats and a stale cancel leave it there', async () => {
  const placed = await placeOrder();
  expect(placed.state).toBe('pending_payment');
  expect(placed.paylinkUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/pay\//);
  const row = await orderRow(placed.id);
  expect(row.paylink_id).not.toBeNull();

  const { transaction } = await control('pay', { invoiceId: row.paylink_id });
  await until('transferred', async () => (await orderRow(placed.id)).state === 'transferred');
  expect(salesOrdersOf(placed.orderNumber)).toHaveLength(1);
  const after = await orderRow(placed.id);
  expect(after.payment_transaction_id).toBe(transaction.id);
  expect(after.erp_sales_order_id).toBe(salesOrdersOf(placed.orderNumber)[0].id);
  const history = await historyOf(placed.id);
  expect(history).toEqual(['->pending_payment', 'pending_payment->paid', 'paid->transferred']);

  // The same webhook five more times (JSON), and an old `cancelled` one (form-encoded, as Payrexx may send).
  await pay.idle();
  for (let i = 0; i < 5; i++)
    expect((await postWebhook({ transaction: { id: transaction.id, status: 'confirmed', referenceId: placed.orderNumber } })).status).toBe(200);
  expect(
    (await postWebhook(`transaction[id]=${transaction.id}&transaction[status]=cancelled&transaction[invoice][referenceId]=${placed.orderNumber}`, true)).status,
  ).toBe(200);
  await until('deliveries processed', deliveriesSettled);
  expect((await orderRow(placed.id)).state).toBe('transferred');
  expect(await historyOf(placed.id)).toEqual(history);
  expect(salesOrdersOf(placed.orderNumber)).toHaveLength(1);
  const outcomes = await ctx.database.db
    .selectFrom('payment_deliveries')
    .select(['outcome', 'provider_status', 'repeats'])
    .where('order_id', '=', placed.id)
    .orderBy('id')
    .execute();
  // 2 from the simulator + 6 replays; replays arriving while an equal one waits for its re-fetch are merged into it.
  expect(outcomes.reduce((n, o) => n + 1 + o.repeats, 0)).toBeGreaterThanOrEqual(8);
  expect(outcomes.filter((o) => o.outcome.startsWith('applied:'))).toHaveLength(1);
  expect(outcomes.every((o) => o.provider_status === 'confirmed' || o.provider_status === 'waiting')).toBe(true);
});

test('the answer with the inline paylink is the order as stored (it is not read again), with its payment-link e-mail', async () => {
  const res = await request(url)
    .post('/api/grpc-json/v1/shop/orders')
    .send(orderBody({ orderItems: [{ articleNumber: 'SIAC1', quantity: 1, configuration: { cardNumber: String(nextCardNumber()) } }] }));
  expect(res.status).toBe(200);
  expect(res.body.paylinkUrl).toMatch(/\/pay\//);
  const stored = await findOrder(ctx.database.db, res.body.oid);
  expect(res.body).toEqual(toShopOrderDTO(stored!));
  const mail = await ctx.database.db
    .selectFrom('outbox_messages')
    .select(['payload'])
    .where('kind', '=', 'mail')
    .where('dedupe_key', '=', `order-paylink:${res.body.oid}`)
    .executeTakeFirstOrThrow();
  const paylinkMail = mail.payload as { text: string; html: string; subject: string };
  expect(paylinkMail.text).toContain(res.body.paylinkUrl);
  // Greeting with its comma, the request with the gross total, closing and signature; HTML with a button.
  const total = new Intl.NumberFormat('de-CH', { style: 'currency', currency: 'EUR' }).format(res.body.grossTotalCents / 100);
  expect(paylinkMail.text).toContain(
    `Guten Tag Anna Muster,\n\nbitte bezahlen Sie Ihre Bestellung ${res.body.orderNumber} (${total}) über diesen Link:\n${res.body.paylinkUrl}\n`,
  );
  expect(paylinkMail.text).toMatch(/Ihr SPORTident Shop-Team\n$/);
  expect(paylinkMail.html).toContain(`href="${res.body.paylinkUrl}"`);
  expect(paylinkMail.html).toContain('Jetzt bezahlen');
  const job = await ctx.database.db
    .selectFrom('outbox_messages')
    .select(['sent_at', 'attempts'])
    .where('kind', '=', 'payment-paylink')
    .where('dedupe_key', '=', `order:${res.body.oid}`)
    .executeTakeFirstOrThrow();
  expect(job.sent_at).not.toBeNull();
  expect(job.attempts).toBe(1);
});

test('a paylink is stored (with its e-mail) only on a pending_payment order without one', async () => {
  const placed = await placeOrder();
  const mail = (key: string) => ({ kind: 'mail', dedupeKey: key, messageId: `<${key}@test>`, payload: { to: 'a@example.com', subject: 's', text: 't' } });
  const mails = (key: string) => ctx.database.db.selectFrom('outbox_messages').select('id').where('dedupe_key', '=', key).execute();
  // It has one already: nothing changes, no e-mail.
  const before = await orderRow(placed.id);
  expect(await storePaylink(ctx.database.db, placed.id, 999_001, 'http://x/pay/1', mail('guard-test:1'))).toBeNull();
  expect(await orderRow(placed.id)).toEqual(before);
  expect(await mails('guard-test:1')).toHaveLength(0);
  // No paylink, but no longer awaiting payment: nothing either.
  await ctx.database.db.updateTable('orders').set({ paylink_id: null, paylink_url: null, state: 'cancelled' }).where('id', '=', placed.id).execute();
  expect(await storePaylink(ctx.database.db, placed.id, 999_002, 'http://x/pay/2', mail('guard-test:2'))).toBeNull();
  expect((await orderRow(placed.id)).paylink_id).toBeNull();
  expect(await mails('guard-test:2')).toHaveLength(0);
  // Awaiting payment without a paylink: stored with its e-mail, in one statement.
  await ctx.database.db.updateTable('orders').set({ state: 'pending_payment' }).where('id', '=', placed.id).execute();
  const updatedAt = await storePaylink(ctx.database.db, placed.id, 999_003, 'http://x/pay/3', mail('guard-test:3'));
  const after = await orderRow(placed.id);
  expect(after.paylink_id).toBe(999_003);
  expect(after.paylink_url).toBe('http://x/pay/3');
  expect(updatedAt).toEqual(after.updated_at);
  expect(await mails('guard-test:3')).toHaveLength(1);
});

test('ERP sales order shipped (the ERP webhook hook) → shipped, once; CLOSED → completed', async () => {
  const placed = await placeOrder();
  await control('pay', { invoiceId: (await orderRow(placed.id)).paylink_id });
  await until('transferred', async () => (await orderRow(placed.id)).state === 'transferred');
  const soId = (await orderRow(placed.id)).erp_sales_order_id!;
  // A status change alone (order confirmation printed) ships nothing; the booked shipment does.
  await erp.patchEntity('salesOrder', soId, { status: 'ORDER_CONFIRMATION_PRINTED' });
  expect(await ctx.services.salesOrders.applyErpSalesOrder('weclapp', soId)).toBe('transferred');
  await erp.patchEntity('salesOrder', soId, { shipped: true });
  expect(await ctx.services.salesOrders.applyErpSalesOrder('weclapp', soId)).toBe('shipped');
  expect(await ctx.services.salesOrders.applyErpSalesOrder('weclapp', soId)).toBe('shipped');
  await erp.patchEntity('salesOrder', soId, { status: 'CLOSED' });
  expect(await ctx.services.salesOrders.applyErpSalesOrder('weclapp', soId)).toBe('completed');
  expect(await ctx.services.salesOrders.applyErpSalesOrder('weclapp', 'no-such-id')).toBeNull();
  expect(await historyOf(placed.id)).toEqual(['->pending_payment', 'pending_payment->paid', 'paid->transferred', 'transferred->shipped', 'shipped->completed']);
});

test('a refund at the provider → refunded; an Idempotency-Key replay carries the paylink created since', async () => {
  const placed = await placeOrder();
  const { transaction } = await control('pay', { invoiceId: (await orderRow(placed.id)).paylink_id });
  await until('transferred', async () => (await orderRow(placed.id)).state === 'transferred');
  await control('refund', { transactionId: transaction.id });
  await until('refunded', async () => (await orderRow(placed.id)).state === 'refunded');
  expect((await historyOf(placed.id)).at(-1)).toBe('transferred->refunded');

  await pay.server.down('close');
  const body = orderBody({ orderItems: [{ articleNumber: 'SIAC1', quantity: 1, configuration: { cardNumber: String(nextCardNumber()) } }] });
  let first: request.Response;
  try {
    first = await request(url).post('/api/grpc-json/v1/shop/orders').set('Idempotency-Key', 'flow-replay-1').send(body);
    expect(first.status).toBe(200);
    expect(first.body.paylinkUrl).toBeNull();
  } finally {
    await pay.server.up();
  }
  await until('paylink', async () => (await orderRow(first.body.oid)).paylink_url !== null, 30_000);
  const replay = await request(url).post('/api/grpc-json/v1/shop/orders').set('Idempotency-Key', 'flow-replay-1').send(body);
  expect(replay.status).toBe(200);
  expect(replay.body.oid).toBe(first.body.oid);
  expect(replay.body.paylinkUrl).toBe((await orderRow(first.body.oid)).paylink_url);
});
