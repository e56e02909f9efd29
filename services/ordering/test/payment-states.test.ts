/**
 * Payment states a shop meets (docs/payrexx.md "Statuses"), against the payment simulator over real HTTP:
 * - `waiting` (bank transfer): the order stays, on hold, does not expire, and becomes paid when the money arrives;
 *   negative control: an order without it does expire;
 * - a partial payment: flagged for an operator (history, on hold, attention list), not paid, not expired;
 * - an answer that does not parse on re-fetch is retried, not dropped: the payment applies once the provider
 *   answers properly.
 */
import request from 'supertest';
import { expireUnpaidOrders } from '../src/orders/flow/order-expiry.service';
import { orderBody } from './support/orders';
import { startOrderFlowStack, until, WEBHOOK_PATH, type OrderFlowStack } from './support/order-flow-stack';

let stack: OrderFlowStack;
beforeAll(async () => {
  stack = await startOrderFlowStack('payment-states-test');
  await stack.control('subscribe', { url: `${stack.url}${WEBHOOK_PATH}`, format: 'json' });
});
afterAll(() => stack.close());

async function placeOrder(): Promise<{ id: number; paylinkId: number; gross: number }> {
  const res = await request(stack.url)
    .post('/api/grpc-json/v1/shop/orders')
    .send(orderBody({ orderItems: [{ articleNumber: 'BSF8', quantity: 1 }] }));
  expect(res.status).toBe(200);
  const id = (res.body as { oid: number }).oid;
  const row = await stack.ctx.database.db.selectFrom('orders').select(['paylink_id', 'gross_total_cents']).where('id', '=', id).executeTakeFirstOrThrow();
  return { id, paylinkId: row.paylink_id!, gross: Number(row.gross_total_cents) };
}
const row = (id: number) => stack.ctx.database.db.selectFrom('orders').select(['state', 'payment_on_hold_at']).where('id', '=', id).executeTakeFirstOrThrow();
const reasons = async (id: number) =>
  (await stack.ctx.database.db.selectFrom('order_state_changes').select('reason').where('order_id', '=', id).orderBy('id').execute()).map(
    (r) => r.reason ?? '',
  );
const outcomes = async (id: number) =>
  (await stack.ctx.database.db.selectFrom('payment_deliveries').select('outcome').where('order_id', '=', id).execute()).map((r) => r.outcome);
/** The expiry sweep as if a day had passed. */
const expireNow = () => expireUnpaidOrders(stack.ctx.database.db, { now: new Date(Date.now() + 2 * 86_400_000), expiryMinutes: 24 * 60 });

test('a bank transfer on its way (waiting) keeps the order on hold past its expiry; the money arriving pays it', async () => {
  const control = await placeOrder();
  const o = await placeOrder();
  const { transaction } = await stack.control<{ transaction: { id: number } }>('pay', {
    invoiceId: o.paylinkId,
    pending: true,
  });
  await until('on hold', async () => (await row(o.id)).payment_on_hold_at !== null);
  expect(await outcomes(o.id)).toContain('onHold:waiting');
  expect((await reasons(o.id)).some((r) => /on its way/.test(r))).toBe(true);
  const expired = await expireNow();
  expect(expired).toContain(control.id); // negative control: an order without a payment on its way expires
  expect(expired).not.toContain(o.id);
  expect((await row(o.id)).state).toBe('pending_payment');
  await stack.control('transaction-status', { transactionId: transaction.id, status: 'confirmed' });
  await until('paid and handed off', async () => ['paid', 'transferred'].includes((await row(o.id)).state));
});

test('a partial payment is flagged for an operator and keeps the order, never paid silently', async () => {
  const o = await placeOrder();
  await stack.control('pay', { invoiceId: o.paylinkId, amountCents: o.gross - 1000 });
  await until('flagged', async () => (await outcomes(o.id)).includes('partialPayment:held'));
  expect((await row(o.id)).state).toBe('pending_payment');
  expect((await reasons(o.id)).some((r) => /part payment .* 10\.00 EUR missing/.test(r))).toBe(true);
  expect(await expireNow()).not.toContain(o.id);
});

test('a re-fetched transaction that does not parse is retried, not dropped', async () => {
  const o = await placeOrder();
  // The provider answers the re-fetch with a body the client cannot read, twice; then properly.
  stack.pay.server.fail({ status: 200, count: 2, method: 'GET', path: '/Transaction/', mode: 'status' });
  await stack.control('pay', { invoiceId: o.paylinkId });
  await until('paid after retries', async () => ['paid', 'transferred'].includes((await row(o.id)).state), 30_000);
  expect(await outcomes(o.id)).not.toContain('unknownTransaction');
});

test('what needs a person is listed for an admin: the flagged partial payment and a refused ERP hand-off, with the ERP answer', async () => {
  // A hand-off the ERP refuses for good (400: an order reference longer than weclapp's 64 characters, as
  // stored before the spec limited it): the job dies at once, with the ERP's answer.
  const o = await placeOrder();
  await stack.ctx.database.db
    .updateTable('orders')
    .set({ state: 'paid', retailer_customer_order_reference: 'R'.repeat(65) })
    .where('id', '=', o.id)
    .execute();
  await stack.ctx.database.db
    .insertInto('outbox_messages')
    .values({ kind: 'erp-sales-order', dedupe_key: `order:${o.id}`, payload: JSON.stringify({ orderId: o.id }) })
    .execute();
  const { order_number } = await stack.ctx.database.db.selectFrom('orders').select('order_number').where('id', '=', o.id).executeTakeFirstOrThrow();
  await until(
    'hand-off dead',
    async () =>
      (
        await stack.ctx.database.db
          .selectFrom('outbox_messages')
          .select('dead_at')
          .where('dedupe_key', '=', `order:${o.id}`)
          .where('kind', '=', 'erp-sales-order')
          .executeTakeFirstOrThrow()
      ).dead_at !== null,
  );
  const res = await request(stack.url)
    .get('/api/rest/v1/dev/get-operator-attention')
    .set('Authorization', await stack.ctx.bearer({ roles: ['admin'] }));
  expect(res.status).toBe(200);
  const items = res.body as { kind: string; orderNumber: string | null; detail: string | null }[];
  expect(items).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ kind: 'paymentPartial', detail: expect.stringMatching(/^received \d+ of \d+ cents$/) }),
      expect.objectContaining({
        kind: 'erpHandOffRefused',
        orderNumber: order_number,
        detail: expect.stringMatching(/400.*orderNumberAtCustomer/),
      }),
    ]),
  );
  const metrics = await request(stack.url).get('/metrics');
  expect(metrics.text).toMatch(/operator_attention_items\{[^}]*kind="erpHandOffRefused"[^}]*\} 1/);
});
