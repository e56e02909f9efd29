/**
 * An order's payments and refunds as books (docs/payrexx.md "Payments of an order", "Refunds"), against the
 * payment simulator over real HTTP:
 * - two part payments (e.g. bank transfers) add up: below the total (even by one cent) the order stays on hold
 *   and is listed for an operator; reaching it to the cent pays the order; the list entry goes;
 * - more than the total pays the order and is listed as an excess;
 * - concurrent re-fetches of the same transactions count each once (one receipt per transaction, one payment);
 * - a refund the provider counts differently (a refund webhook that never came) is listed, and the entry goes once
 *   the missing refund arrives.
 */
import request from 'supertest';
import type { Transaction } from '@sports-timing/payment-simulator';
import { insertDelivery, markDeliveryFetching } from '../src/orders/flow/order-flow.repository';
import { orderBody } from './support/orders';
import { startOrderFlowStack, until, WEBHOOK_PATH, type OrderFlowStack } from './support/order-flow-stack';

let stack: OrderFlowStack;
let admin: string;
beforeAll(async () => {
  stack = await startOrderFlowStack('payment-books-test');
  await stack.control('subscribe', { url: `${stack.url}${WEBHOOK_PATH}`, format: 'json' });
  admin = await stack.ctx.bearer({ roles: ['admin'] });
});
afterAll(() => stack.close());

const db = () => stack.ctx.database.db;
async function placeOrder(): Promise<{ id: number; orderNumber: string; paylinkId: number; gross: number }> {
  const res = await request(stack.url)
    .post('/api/grpc-json/v1/shop/orders')
    .send(orderBody({ orderItems: [{ articleNumber: 'BSF8', quantity: 2 }] }));
  expect(res.status).toBe(200);
  const id = (res.body as { oid: number }).oid;
  const row = await db().selectFrom('orders').select(['paylink_id', 'gross_total_cents', 'order_number']).where('id', '=', id).executeTakeFirstOrThrow();
  return { id, orderNumber: row.order_number, paylinkId: row.paylink_id!, gross: Number(row.gross_total_cents) };
}
const state = async (id: number) => (await db().selectFrom('orders').select('state').where('id', '=', id).executeTakeFirstOrThrow()).state;
const outcomes = async (id: number) =>
  (await db().selectFrom('payment_deliveries').select('outcome').where('order_id', '=', id).execute()).map((r) => r.outcome);
const reasons = async (id: number) =>
  (await db().selectFrom('order_state_changes').select('reason').where('order_id', '=', id).orderBy('id').execute()).map((r) => r.reason ?? '');
async function settled(): Promise<boolean> {
  await stack.pay.idle();
  return (await db().selectFrom('payment_deliveries').select('id').where('outcome', 'in', ['queued', 'fetching']).execute()).length === 0;
}
async function attentionOf(orderNumber: string): Promise<{ kind: string; transactionId: number | null; detail: string | null }[]> {
  const res = await request(stack.url).get('/api/rest/v1/dev/get-operator-attention').set('Authorization', admin);
  expect(res.status).toBe(200);
  return (res.body as { kind: string; orderNumber: string | null; transactionId: number | null; detail: string | null }[]).filter(
    (i) => i.orderNumber === orderNumber,
  );
}
/** A further paylink for the order (as an operator sends for the rest), paid with `amountCents`. */
async function payMore(orderNumber: string, amountCents: number): Promise<Transaction> {
  const link = await stack.ctx.services.payment.createPaylink({ amountCents, currency: 'EUR', referenceId: orderNumber, title: `Rest of ${orderNumber}` });
  return (await stack.control<{ transaction: Transaction }>('pay', { invoiceId: link.id })).transaction;
}

test('part payments add up to the cent: below the total the order is held and listed, at the total it is paid', async () => {
  const o = await placeOrder();
  await stack.control('pay', { invoiceId: o.paylinkId, amountCents: o.gross - 1000 });
  await until('first part', async () => (await outcomes(o.id)).includes('partialPayment:held'));
  expect(await state(o.id)).toBe('pending_payment');
  expect(await attentionOf(o.orderNumber)).toEqual([
    expect.objectContaining({ kind: 'paymentPartial', detail: `received ${o.gross - 1000} of ${o.gross} cents` }),
  ]);
  const metrics = await request(stack.url).get('/metrics');
  expect(metrics.text).toMatch(/operator_attention_items\{[^}]*kind="paymentPartial"[^}]*\} [1-9]/);

  // One cent short: still held (negative control of "to the cent").
  await payMore(o.orderNumber, 999);
  await until('second part', async () => (await outcomes(o.id)).filter((x) => x === 'partialPayment:held').length === 2);
  expect(await state(o.id)).toBe('pending_payment');
  expect((await reasons(o.id)).at(-1)).toMatch(/0\.01 EUR missing/);

  await payMore(o.orderNumber, 1);
  await until('paid and handed off', async () => ['paid', 'transferred'].includes(await state(o.id)));
  expect((await outcomes(o.id)).filter((x) => x.endsWith('->paid'))).toEqual(['applied:pending_payment->paid']);
  expect(await attentionOf(o.orderNumber)).toEqual([]);
});

test('more than the total pays the order and is listed as an excess to refund', async () => {
  const o = await placeOrder();
  await stack.control('pay', { invoiceId: o.paylinkId, amountCents: o.gross + 500 });
  await until('paid', async () => ['paid', 'transferred'].includes(await state(o.id)));
  await until('settled', settled);
  expect(await outcomes(o.id)).toContain('excessPayment:flagged');
  expect((await reasons(o.id)).some((r) => /5\.00 EUR more than the order total; refund the excess/.test(r))).toBe(true);
  expect(await attentionOf(o.orderNumber)).toEqual([
    expect.objectContaining({ kind: 'paymentExcess', detail: `received ${o.gross + 500} of ${o.gross} cents` }),
  ]);
});

test('concurrent re-fetches of the same two part payments count each once: one payment, one hand-off', async () => {
  const o = await placeOrder();
  const hook = `${stack.url}${WEBHOOK_PATH}`;
  await stack.control('unsubscribe', { url: hook });
  let first: Transaction;
  let second: Transaction;
  try {
    first = (await stack.control<{ transaction: Transaction }>('pay', { invoiceId: o.paylinkId, amountCents: o.gross - 700 })).transaction;
    second = await payMore(o.orderNumber, 700);
  } finally {
    await stack.control('subscribe', { url: hook, format: 'json' });
  }
  // Eight deliveries of each, all re-fetched at once. A queued delivery of the same transaction takes in the next
  // one, so each is marked as being re-fetched before the next is recorded (as deliveries arriving while the
  // re-fetches run are).
  const runs: { id: number; t: Transaction }[] = [];
  for (let i = 0; i < 16; i++) {
    const t = i % 2 === 0 ? first : second;
    const { id } = await insertDelivery(db(), { contentType: 'test', transactionId: t.id, claimedStatus: 'confirmed' }, 0);
    await markDeliveryFetching(db(), id);
    runs.push({ id, t });
  }
  await Promise.all(runs.map((r) => stack.ctx.services.paymentStatus.process(r.id, r.t.id)));
  const receipts = await db().selectFrom('payment_receipts').select(['transaction_id', 'amount_cents']).where('order_id', '=', o.id).execute();
  expect(receipts.map((r) => r.transaction_id).sort()).toEqual([first.id, second.id].sort());
  expect(receipts.reduce((n, r) => n + Number(r.amount_cents), 0)).toBe(o.gross);
  const all = await outcomes(o.id);
  expect(all.filter((x) => x === 'applied:pending_payment->paid')).toHaveLength(1);
  expect(all.filter((x) => x === 'partialPayment:held').length).toBeLessThanOrEqual(1);
  expect(all).not.toContain('excessPayment:flagged');
  expect(all.filter((x) => x === 'noChange:receiptKnown')).toHaveLength(14);
  const jobs = await db().selectFrom('outbox_messages').select('id').where('kind', '=', 'erp-sales-order').where('dedupe_key', '=', `order:${o.id}`).execute();
  expect(jobs).toHaveLength(1);
  expect(await attentionOf(o.orderNumber)).toEqual([]);
});

test('a refund the provider counts differently from ours is listed; once the missing refund arrives the entry goes', async () => {
  const o = await placeOrder();
  const { transaction: charge } = await stack.control<{ transaction: Transaction }>('pay', { invoiceId: o.paylinkId });
  await until('paid', async () => ['paid', 'transferred'].includes(await state(o.id)));
  await until('settled', settled);
  // The first refund's webhook never comes (nobody listens); the second one's does.
  const hook = `${stack.url}${WEBHOOK_PATH}`;
  await stack.control('unsubscribe', { url: hook });
  let missed: Transaction;
  try {
    missed = (await stack.control<{ transaction: Transaction }>('refund', { transactionId: charge.id, amountCents: 300 })).transaction;
  } finally {
    await stack.control('subscribe', { url: hook, format: 'json' });
  }
  await stack.control('refund', { transactionId: charge.id, amountCents: 200 });
  await until('refund processed', async () => (await outcomes(o.id)).includes('refundMismatch:flagged'));
  expect((await reasons(o.id)).at(-1)).toMatch(/provider reports 5\.00 EUR refunded of transaction \d+, the recorded refunds add up to 2\.00 EUR/);
  expect(await attentionOf(o.orderNumber)).toEqual([
    expect.objectContaining({ kind: 'refundMismatch', transactionId: charge.id, detail: 'provider reports 500 cents refunded, recorded 200 cents' }),
  ]);
  // The missing refund is delivered (e.g. by Payrexx's retry): the books agree, nothing to do any more.
  const res = await request(stack.url)
    .post(WEBHOOK_PATH)
    .send({ transaction: { id: missed.id, status: missed.status } });
  expect(res.status).toBe(200);
  await until('missing refund processed', async () => (await outcomes(o.id)).includes('refundRecorded:500'));
  expect(await attentionOf(o.orderNumber)).toEqual([]);
  expect(await state(o.id)).toBe('transferred');
});
