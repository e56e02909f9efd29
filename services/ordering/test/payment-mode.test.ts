/**
 * TEST and LIVE (docs/payrexx.md "TEST and LIVE"): a shop running `PAYMENT_MODE=LIVE` is never paid by a Payrexx
 * transaction in `TEST` mode: the order stays unpaid (and expires as usual), the transaction is flagged for an
 * operator (history, log, attention list, metric). Negative control: a `LIVE` transaction pays the same kind of
 * order. (A shop running `TEST`, the default outside production, is paid by the simulator's TEST transactions in
 * every other payment test.)
 */
import request from 'supertest';
import { orderBody } from './support/orders';
import { startOrderFlowStack, until, WEBHOOK_PATH, type OrderFlowStack } from './support/order-flow-stack';

let stack: OrderFlowStack;
beforeAll(async () => {
  stack = await startOrderFlowStack('payment-mode-test', { env: { PAYMENT_MODE: 'LIVE' } });
  await stack.control('subscribe', { url: `${stack.url}${WEBHOOK_PATH}`, format: 'json' });
});
afterAll(() => stack.close());

async function placeOrder(): Promise<{ id: number; orderNumber: string; paylinkId: number }> {
  const res = await request(stack.url)
    .post('/api/grpc-json/v1/shop/orders')
    .send(orderBody({ orderItems: [{ articleNumber: 'BSF8', quantity: 1 }] }));
  expect(res.status).toBe(200);
  const id = (res.body as { oid: number }).oid;
  const row = await stack.ctx.database.db.selectFrom('orders').select(['paylink_id', 'order_number']).where('id', '=', id).executeTakeFirstOrThrow();
  return { id, orderNumber: row.order_number, paylinkId: row.paylink_id! };
}
const row = (id: number) => stack.ctx.database.db.selectFrom('orders').select(['state', 'payment_on_hold_at']).where('id', '=', id).executeTakeFirstOrThrow();
const outcomes = async (id: number) =>
  (await stack.ctx.database.db.selectFrom('payment_deliveries').select('outcome').where('order_id', '=', id).execute()).map((r) => r.outcome);

test('a TEST transaction never pays an order of a live shop; it is flagged. A LIVE one pays', async () => {
  const test = await placeOrder();
  const { transaction } = await stack.control<{ transaction: { id: number; mode: string } }>('pay', { invoiceId: test.paylinkId });
  expect(transaction.mode).toBe('TEST');
  await until('flagged', async () => (await outcomes(test.id)).includes('testPayment:flagged'));
  expect(await row(test.id)).toEqual({ state: 'pending_payment', payment_on_hold_at: null });
  const receipts = await stack.ctx.database.db.selectFrom('payment_receipts').select('transaction_id').where('order_id', '=', test.id).execute();
  expect(receipts).toEqual([]);
  const history = await stack.ctx.database.db.selectFrom('order_state_changes').select('reason').where('order_id', '=', test.id).execute();
  expect(history.some((h) => /TEST transaction and the shop runs LIVE; it pays nothing/.test(h.reason ?? ''))).toBe(true);
  const attention = await request(stack.url)
    .get('/api/rest/v1/dev/get-operator-attention')
    .set('Authorization', await stack.ctx.bearer({ roles: ['admin'] }));
  expect(attention.body).toEqual([expect.objectContaining({ kind: 'testPayment', orderNumber: test.orderNumber, transactionId: transaction.id })]);
  expect((await request(stack.url).get('/metrics')).text).toMatch(/operator_attention_items\{[^}]*kind="testPayment"[^}]*\} 1/);

  const live = await placeOrder();
  await stack.control('pay', { invoiceId: live.paylinkId, mode: 'LIVE' });
  await until('paid', async () => ['paid', 'transferred'].includes((await row(live.id)).state));
  expect(await outcomes(live.id)).toContain('applied:pending_payment->paid');
});
