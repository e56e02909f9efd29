/**
 * The order flow against the payment simulator speaking Payrexx's real shapes (docs/payrexx.md), over
 * real HTTP: order → paylink (description, e-mail prefill) → form-encoded webhook carrying the full
 * transaction (contact, invoice, products: well over 100 form parameters) → `paid` → `transferred`; a
 * partial refund (its own transaction) is recorded without a state change, the rest makes the order
 * `refunded`; a full refund at once too; a second charge for a paid order and its refund are both recorded; a status the service does not know is stored and shown, and the
 * dev transaction list still answers; a payout (with its webhook) is listed and its accounting CSV built
 * from the payout details; payout and subscription events are acknowledged.
 */
import request from 'supertest';
import type { PaymentSimulator, Payout, Transaction } from '@sports-timing/payment-simulator';
import type { OrderingTestContext } from './support/app';
import { orderBody } from './support/orders';
import { startOrderFlowStack, until, WEBHOOK_PATH, type OrderFlowStack } from './support/order-flow-stack';

let stack: OrderFlowStack;
let pay: PaymentSimulator;
let ctx: OrderingTestContext;
let url: string;
let admin: string;

beforeAll(async () => {
  stack = await startOrderFlowStack('payrexx-flow-test');
  ({ pay, ctx, url } = stack);
  pay.subscribe(`${url}${WEBHOOK_PATH}`, 'form');
  admin = await ctx.bearer({ roles: ['admin'], userGroup: 'internal', id: 1 });
});

afterAll(() => stack.close());

function control<T = { transaction: Transaction }>(action: string, body: unknown): Promise<T> {
  return stack.control<T>(action, body);
}

let cardNumber = 8400000;
async function placeOrder(): Promise<{ id: number; orderNumber: string; email: string }> {
  const body = orderBody({ orderItems: [{ articleNumber: 'SIAC1', quantity: 1, configuration: { cardNumber: String(cardNumber++) } }] });
  const res = await request(url).post('/api/grpc-json/v1/shop/orders').send(body);
  expect(res.status).toBe(200);
  return { id: res.body.oid as number, orderNumber: res.body.orderNumber as string, email: (body as { contact: { email: string } }).contact.email };
}
const orderRow = (id: number) => ctx.database.db.selectFrom('orders').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
async function historyOf(id: number): Promise<{ change: string; reason: string | null }[]> {
  const rows = await ctx.database.db
    .selectFrom('order_state_changes')
    .select(['from_state', 'to_state', 'reason'])
    .where('order_id', '=', id)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ change: `${r.from_state ?? ''}->${r.to_state}`, reason: r.reason }));
}
async function settled(): Promise<boolean> {
  await pay.idle();
  const r = await ctx.database.db.selectFrom('payment_deliveries').select('id').where('outcome', 'in', ['queued', 'fetching']).execute();
  return r.length === 0;
}
const products = Array.from({ length: 12 }, (_, i) => ({
  name: `Item ${i + 1}`,
  description: `Line ${i + 1}`,
  quantity: 1,
  amount: 100,
  sku: `SKU-${i + 1}`,
  vatRate: 8.1,
}));

/** A paid, transferred order and its charge. */
async function paidOrder(): Promise<{ id: number; orderNumber: string; charge: Transaction; grossCents: number }> {
  const placed = await placeOrder();
  const row = await orderRow(placed.id);
  const { transaction } = await control('pay', { invoiceId: row.paylink_id, products });
  await until('transferred', async () => (await orderRow(placed.id)).state === 'transferred');
  return { ...placed, charge: transaction, grossCents: Number(row.gross_total_cents) };
}

test('order → paylink with description and e-mail prefill → form-encoded full webhook (> 100 parameters) → paid → transferred', async () => {
  const placed = await placeOrder();
  const row = await orderRow(placed.id);
  const invoice = pay.invoice(row.paylink_id!)!;
  expect(invoice.description).toBe(`Payment of order ${placed.orderNumber}: ${(Number(row.gross_total_cents) / 100).toFixed(2)} ${row.currency}`);
  expect(invoice.fields).toEqual({ email: { defaultValue: placed.email, mandatory: '1' } });

  const { transaction } = await control('pay', { invoiceId: row.paylink_id, products });
  await until('transferred', async () => (await orderRow(placed.id)).state === 'transferred');
  const delivered = pay.deliveries.filter((d) => d.transactionId === transaction.id);
  expect(delivered.map((d) => [d.format, d.transactionStatus, d.status])).toEqual([
    ['form', 'waiting', 200],
    ['form', 'confirmed', 200],
  ]);
  expect(delivered[1].parameterCount).toBeGreaterThan(100);
  expect(new URLSearchParams(delivered[1].body).get('transaction[invoice][products][11][sku]')).toBe('SKU-12');
  expect(new URLSearchParams(delivered[1].body).get('transaction[contact][delivery_place]')).toBe('Zürich');
  expect((await orderRow(placed.id)).payment_transaction_id).toBe(transaction.id);
});

test('a partial refund (its own transaction) is recorded and changes no state; the rest makes the order refunded', async () => {
  const order = await paidOrder();
  const partial = (await control('refund', { transactionId: order.charge.id, amountCents: 500 })).transaction;
  expect(partial).toMatchObject({ status: 'partially-refunded', originalTransactionId: order.charge.id, amount: 500 });
  await until('partial refund processed', settled);
  expect((await orderRow(order.id)).state).toBe('transferred');
  const refunds = await ctx.database.db.selectFrom('payment_refunds').selectAll().where('order_id', '=', order.id).execute();
  expect(refunds.map((r) => [r.transaction_id, r.original_transaction_id, Number(r.amount_cents), r.status])).toEqual([
    [partial.id, order.charge.id, 500, 'partially-refunded'],
  ]);
  const history = await historyOf(order.id);
  expect(history.at(-1)).toEqual({
    change: 'transferred->transferred',
    reason: expect.stringContaining(`partial refund 5.00 EUR (transaction ${partial.id} of ${order.charge.id})`),
  });

  // The same refund delivered again is recorded once.
  expect((await request(url).post(WEBHOOK_PATH).type('form').send(`transaction[id]=${partial.id}&transaction[status]=partially-refunded`)).status).toBe(200);
  await until('replay processed', settled);
  expect(await ctx.database.db.selectFrom('payment_refunds').select('transaction_id').where('order_id', '=', order.id).execute()).toHaveLength(1);

  const rest = (await control('refund', { transactionId: order.charge.id })).transaction;
  expect(rest).toMatchObject({ status: 'refunded', amount: order.grossCents - 500 });
  await until('refunded', async () => (await orderRow(order.id)).state === 'refunded');
  expect((await historyOf(order.id)).at(-1)!.change).toBe('transferred->refunded');
  // The charge itself stays confirmed at the provider (Payrexx does not change it).
  expect(pay.transaction(order.charge.id)!.status).toBe('confirmed');
});

test('two partial refunds processed at the same moment add up: the order becomes refunded exactly once', async () => {
  const order = await paidOrder();
  await pay.idle();
  pay.server.requests.length = 0;
  // Refunds made while nobody listens, then both deliveries processed concurrently.
  const hook = `${url}${WEBHOOK_PATH}`;
  await control('unsubscribe', { url: hook });
  let first: Transaction;
  let second: Transaction;
  try {
    first = (await control('refund', { transactionId: order.charge.id, amountCents: 300 })).transaction;
    second = (await control('refund', { transactionId: order.charge.id })).transaction;
  } finally {
    pay.subscribe(hook, 'form');
  }
  const ids = await Promise.all(
    [first, second].map(
      async (t) =>
        (
          await ctx.database.db
            .insertInto('payment_deliveries')
            .values({ content_type: 'test', transaction_id: t.id, claimed_status: t.status, outcome: 'queued' })
            .returning('id')
            .executeTakeFirstOrThrow()
        ).id,
    ),
  );
  await Promise.all([ctx.services.paymentStatus.process(ids[0], first.id), ctx.services.paymentStatus.process(ids[1], second.id)]);
  expect((await orderRow(order.id)).state).toBe('refunded');
  expect((await historyOf(order.id)).filter((h) => h.change.endsWith('->refunded'))).toHaveLength(1);
  const total = await ctx.database.db.selectFrom('payment_refunds').select('amount_cents').where('order_id', '=', order.id).execute();
  expect(total.reduce((n, r) => n + Number(r.amount_cents), 0)).toBe(order.grossCents);
});

test('a full refund at once → refunded; a second charge for a paid order is an excess, its refund settles it', async () => {
  const order = await paidOrder();
  await control('refund', { transactionId: order.charge.id });
  await until('refunded', async () => (await orderRow(order.id)).state === 'refunded');

  const other = await paidOrder();
  // A second charge with this order's reference (another paylink), then refunded: possibly processed before
  // the charge's own webhook, which must not lose either.
  const link = await request(url)
    .post('/api/rest/v1/dev/create-payment-paylink')
    .set('Authorization', admin)
    .send({ amountCents: 700, referenceId: other.orderNumber });
  const extra = (await control('pay', { invoiceId: link.body.id })).transaction;
  await control('refund', { transactionId: extra.id });
  await until('second charge and refund processed', settled);
  expect((await orderRow(other.id)).state).toBe('transferred');
  const outcomes = await ctx.database.db
    .selectFrom('payment_deliveries')
    .select(['transaction_id', 'outcome'])
    .where('transaction_id', 'in', [extra.id, extra.id + 1])
    .execute();
  expect(outcomes.map((o) => o.outcome)).toContain('refundRecorded:700');
  expect(outcomes.map((o) => o.outcome)).not.toContain('noChange:foreignRefund');
  const receipts = await ctx.database.db.selectFrom('payment_receipts').select('transaction_id').where('order_id', '=', other.id).execute();
  expect(receipts.map((r) => r.transaction_id).sort()).toEqual([other.charge.id, extra.id].sort());
  // Refunded, the excess needs nobody any more.
  const attention = await request(url).get('/api/rest/v1/dev/get-operator-attention').set('Authorization', admin);
  expect((attention.body as { kind: string; orderNumber: string }[]).filter((i) => i.orderNumber === other.orderNumber)).toEqual([]);
});

test('statuses the service does not know are stored and shown; the dev transaction list still answers', async () => {
  const order = await paidOrder();
  for (const status of ['refund_pending', 'insecure', 'disputed', 'a-status-from-the-future']) {
    await control('transaction-status', { transactionId: order.charge.id, status });
    await until(`${status} processed`, settled);
    const d = await ctx.database.db
      .selectFrom('payment_deliveries')
      .select(['provider_status', 'outcome'])
      .where('transaction_id', '=', order.charge.id)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(d).toEqual({ provider_status: status, outcome: 'noChange:transferred' });
    const one = await request(url).get(`/api/rest/v1/dev/get-payment-transaction?id=${order.charge.id}`).set('Authorization', admin);
    expect(one.status).toBe(200);
    expect(one.body.status).toBe(status);
    const list = await request(url).get('/api/rest/v1/dev/get-payment-transactions').set('Authorization', admin);
    expect(list.status).toBe(200);
    expect(list.body.find((t: { id: number }) => t.id === order.charge.id).status).toBe(status);
  }
  expect((await orderRow(order.id)).state).toBe('transferred');
});

test('payout: its webhook is acknowledged, it is listed with its transfers, and its accounting CSV is built from the details', async () => {
  const order = await paidOrder();
  const refund = (await control('refund', { transactionId: order.charge.id, amountCents: 250 })).transaction;
  await until('refund processed', settled);
  const { payout } = await control<{ payout: Payout }>('payout', {});
  await pay.idle();
  const payoutDelivery = pay.deliveries.filter((d) => d.event === 'payout');
  expect(payoutDelivery.at(-1)).toMatchObject({ format: 'form', status: 200, transactionId: null });

  const list = await request(url).get('/api/rest/v1/dev/get-payment-payouts').set('Authorization', admin);
  expect(list.status).toBe(200);
  const listed = list.body.find((p: { uuid: string }) => p.uuid === payout.uuid);
  expect(listed).toMatchObject({
    amountCents: payout.amount,
    feesCents: payout.total_fees,
    status: 'sent',
    isManualPayout: false,
    transactionCount: payout.transfers.length,
  });

  const details = await request(url).get(`/api/rest/v1/dev/get-payment-payout-with-details?uuid=${payout.uuid}`).set('Authorization', admin);
  expect(details.status).toBe(200);
  const charge = details.body.transactions.find((t: { transactionId: number }) => t.transactionId === order.charge.id);
  expect(charge).toMatchObject({
    transferType: 'transaction',
    amountCents: order.grossCents,
    feeCents: order.charge.payrexxFee,
    netAmountCents: order.grossCents - order.charge.payrexxFee,
    referenceId: order.orderNumber,
  });
  expect(details.body.transactions.find((t: { transactionId: number }) => t.transactionId === refund.id)).toMatchObject({
    transferType: 'transaction-reversal',
    amountCents: -250,
    feeCents: 0,
    netAmountCents: -250,
  });

  const csv = await request(url).get(`/api/rest/v1/dev/get-payment-accounting-csv-export?uuid=${payout.uuid}`).set('Authorization', admin);
  expect(csv.status).toBe(200);
  expect(csv.headers['content-type']).toMatch(/^text\/csv/);
  const lines = csv.text.trim().split('\r\n');
  expect(lines[0]).toBe('payoutUuid,payoutDate,transferType,transactionId,transactionUuid,referenceId,time,amount,fee,net,currency');
  expect(lines).toContain(
    `${payout.uuid},${payout.date},transaction-reversal,${refund.id},${refund.uuid},${order.orderNumber},${new Date(refund.time).toISOString().slice(0, 19)}Z,-2.50,0.00,-2.50,EUR`,
  );
  expect(lines.at(-1)).toBe(
    `${payout.uuid},${payout.date},total,,,,,${((payout.amount + payout.total_fees) / 100).toFixed(2)},${(payout.total_fees / 100).toFixed(2)},${(payout.amount / 100).toFixed(2)},EUR`,
  );
  const net = lines.slice(1, -1).reduce((s, l) => s + Math.round(Number(l.split(',')[9]) * 100), 0);
  expect(net).toBe(payout.amount);
  expect(pay.server.requests.some((r) => r.path.includes('accounting-export'))).toBe(false);
});

test('payout and subscription events (no transaction) get 200; a body with none of them is a 400', async () => {
  expect(
    (
      await request(url)
        .post(WEBHOOK_PATH)
        .send({ payout: { uuid: 'abc', status: 'sent', amount: 100 } })
    ).status,
  ).toBe(200);
  expect((await request(url).post(WEBHOOK_PATH).type('form').send('subscription[id]=7&subscription[status]=cancelled')).status).toBe(200);
  const none = await request(url).post(WEBHOOK_PATH).send({ something: 1 });
  expect(none.status).toBe(400);
  expect(none.body.errors).toHaveProperty('transaction');
});
