/**
 * Payment webhook deliveries against both simulators over real HTTP: the same delivery 100 times has one
 * effect; forged deliveries and a cancelled attempt on an open paylink change nothing; deliveries in any
 * order, repeated and with stale claims, end in the provider's current state.
 */
import type { OrderingTestContext } from './support/app';
import { startOrderFlowStack, until, WEBHOOK_PATH, type OrderFlowStack } from './support/order-flow-stack';
import { orderFlowSteps } from './support/order-flow-steps';

let stack: OrderFlowStack;
let ctx: OrderingTestContext;
let url: string;

beforeAll(async () => {
  stack = await startOrderFlowStack('order-flow-deliveries-test');
  ({ ctx, url } = stack);
  await stack.control('subscribe', { url: `${stack.url}${WEBHOOK_PATH}`, format: 'json' });
});

afterAll(() => stack.close());

const { control, placeOrder, orderRow, historyOf, salesOrdersOf, deliveriesSettled, postWebhook } = orderFlowSteps(() => stack, 8310000);

test('the same delivery 100 times concurrently → one effect', async () => {
  await control('unsubscribe', { url: `${url}${WEBHOOK_PATH}` });
  try {
    const placed = await placeOrder();
    const row = await orderRow(placed.id);
    const { transaction } = await control('pay', { invoiceId: row.paylink_id });
    const results = await Promise.all(Array.from({ length: 100 }, () => postWebhook({ transaction: { id: transaction.id, status: 'confirmed' } })));
    expect(results.every((r) => r.status === 200)).toBe(true);
    await until('transferred', async () => (await orderRow(placed.id)).state === 'transferred');
    await until('deliveries processed', deliveriesSettled);
    expect(await historyOf(placed.id)).toEqual(['->pending_payment', 'pending_payment->paid', 'paid->transferred']);
    expect(salesOrdersOf(placed.orderNumber)).toHaveLength(1);
    const jobs = await ctx.database.db
      .selectFrom('outbox_messages')
      .select('id')
      .where('kind', '=', 'erp-sales-order')
      .where('dedupe_key', '=', `order:${placed.id}`)
      .execute();
    expect(jobs).toHaveLength(1);
  } finally {
    await control('subscribe', { url: `${url}${WEBHOOK_PATH}`, format: 'json' });
  }
});

test('forged deliveries change nothing: unknown transaction, and a "confirmed" the provider does not confirm', async () => {
  const placed = await placeOrder();
  const row = await orderRow(placed.id);
  const before = await historyOf(placed.id);
  const forged = await postWebhook({ transaction: { id: 987654, status: 'confirmed', referenceId: placed.orderNumber, amount: 1 } });
  expect(forged.status).toBe(200);
  // A real transaction of this paylink, cancelled by the payer, claimed to be confirmed.
  await control('unsubscribe', { url: `${url}${WEBHOOK_PATH}` });
  let txId: number;
  try {
    txId = (await control('cancel', { invoiceId: row.paylink_id })).transaction.id;
  } finally {
    await control('subscribe', { url: `${url}${WEBHOOK_PATH}`, format: 'json' });
  }
  // Before any genuine delivery arrives: the forged "confirmed" for the cancelled transaction.
  expect((await postWebhook(`transaction[id]=${txId}&transaction[status]=confirmed`, true)).status).toBe(200);
  await until('deliveries processed', deliveriesSettled);
  const outcomes = await ctx.database.db
    .selectFrom('payment_deliveries')
    .select(['transaction_id', 'outcome', 'provider_status'])
    .where('transaction_id', 'in', [987654, txId])
    .orderBy('id')
    .execute();
  expect(outcomes[0]).toEqual({ transaction_id: 987654, outcome: 'unknownTransaction', provider_status: null });
  // The provider says cancelled: the order is cancelled (that is what the provider confirms), never paid.
  expect(outcomes[1].provider_status).toBe('cancelled');
  const after = await orderRow(placed.id);
  expect(after.state).toBe('cancelled');
  expect(await historyOf(placed.id)).toEqual([...before, 'pending_payment->cancelled']);
  // Cancelling released the card number claim.
  const claims = await ctx.database.db.selectFrom('card_numbers').selectAll().where('order_ref', '=', placed.orderNumber).execute();
  expect(claims).toHaveLength(0);
  // Malformed ids are a documented 400.
  expect((await postWebhook({ transaction: { id: 'abc' } })).status).toBe(400);
  expect((await postWebhook('transaction[id]=0', true)).status).toBe(400);
});

test("a cancelled attempt while the order's paylink is still open changes nothing", async () => {
  const placed = await placeOrder();
  // Another paylink with the order's reference, aborted by the payer: its transaction is `cancelled`.
  const other = await ctx.services.payment.createPaylink({ amountCents: 100, currency: 'EUR', referenceId: placed.orderNumber });
  await control('unsubscribe', { url: `${url}${WEBHOOK_PATH}` });
  let txId: number;
  try {
    txId = (await control('cancel', { invoiceId: other.id })).transaction.id;
  } finally {
    await control('subscribe', { url: `${url}${WEBHOOK_PATH}`, format: 'json' });
  }
  expect((await postWebhook({ transaction: { id: txId, status: 'cancelled' } })).status).toBe(200);
  await until('deliveries processed', deliveriesSettled);
  const d = await ctx.database.db.selectFrom('payment_deliveries').select(['outcome']).where('transaction_id', '=', txId).executeTakeFirstOrThrow();
  expect(d.outcome).toBe('noChange:paylinkOpen');
  expect((await orderRow(placed.id)).state).toBe('pending_payment');
});

test("deliveries in any order, repeated and with stale claims, end in the provider's current state (seeded random sequences)", async () => {
  // Every order of a delivery sequence ends in the provider's current state (docs/payrexx.md). Only our deliveries count here.
  await control('unsubscribe', { url: `${url}${WEBHOOK_PATH}` });
  try {
    let seed = 20261121;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const shuffle = <T>(xs: T[]): T[] => {
      for (let i = xs.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [xs[i], xs[j]] = [xs[j], xs[i]];
      }
      return xs;
    };
    const cases: Array<{ id: number; orderNumber: string; txId: number; paid: boolean }> = [];
    for (let i = 0; i < 6; i++) {
      const placed = await placeOrder();
      const paid = i % 2 === 0;
      const { transaction } = await control(paid ? 'pay' : 'cancel', { invoiceId: (await orderRow(placed.id)).paylink_id });
      cases.push({ id: placed.id, orderNumber: placed.orderNumber, txId: transaction.id, paid });
    }
    // What the bodies claim is irrelevant (the service re-fetches): each transaction gets every claim, some twice,
    // JSON or form-encoded, all orders' deliveries interleaved and sent concurrently.
    const claims = ['waiting', 'confirmed', 'cancelled', 'declined', 'confirmed', 'waiting', 'refunded'];
    const deliveries = shuffle(cases.flatMap((c) => claims.map((status) => ({ c, status, form: random() < 0.5 }))));
    const answers = await Promise.all(
      deliveries.map((d) =>
        d.form
          ? postWebhook(`transaction[id]=${d.c.txId}&transaction[status]=${d.status}`, true)
          : postWebhook({ transaction: { id: d.c.txId, status: d.status } }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(deliveries.map(() => 200));
    await until('deliveries processed', deliveriesSettled);
    for (const c of cases) {
      if (c.paid) {
        await until(`order ${c.orderNumber} transferred`, async () => (await orderRow(c.id)).state === 'transferred');
        expect(await historyOf(c.id)).toEqual(['->pending_payment', 'pending_payment->paid', 'paid->transferred']);
        expect(salesOrdersOf(c.orderNumber)).toHaveLength(1);
      } else {
        expect((await orderRow(c.id)).state).toBe('cancelled');
        expect(await historyOf(c.id)).toEqual(['->pending_payment', 'pending_payment->cancelled']);
        expect(salesOrdersOf(c.orderNumber)).toHaveLength(0);
      }
    }
  } finally {
    await control('subscribe', { url: `${url}${WEBHOOK_PATH}`, format: 'json' });
  }
});
