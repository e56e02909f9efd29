/**
 * The order flow while a third party is down, against both simulators over real HTTP: with the ERP down the
 * order is still paid and reaches the ERP once it is back; with the payment provider down the order is
 * accepted and gets its paylink later, and later orders skip the inline paylink attempt meanwhile.
 */
import type { ErpSimulator } from '@sports-timing/erp-simulator';
import type { PaymentSimulator } from '@sports-timing/payment-simulator';
import type { OrderingTestContext } from './support/app';
import { startOrderFlowStack, until, WEBHOOK_PATH, type OrderFlowStack } from './support/order-flow-stack';
import { orderFlowSteps } from './support/order-flow-steps';

let stack: OrderFlowStack;
let erp: ErpSimulator;
let pay: PaymentSimulator;
let ctx: OrderingTestContext;

beforeAll(async () => {
  stack = await startOrderFlowStack('order-flow-outages-test');
  ({ pay, ctx } = stack);
  erp = stack.erp!;
  await stack.control('subscribe', { url: `${stack.url}${WEBHOOK_PATH}`, format: 'json' });
});

afterAll(() => stack.close());

const { control, placeOrder, orderRow, salesOrdersOf } = orderFlowSteps(() => stack, 8320000);

test('with the ERP down the order is accepted and paid, and reaches the ERP once it is back', async () => {
  await erp.server.down('close');
  let placed: Awaited<ReturnType<typeof placeOrder>>;
  try {
    placed = await placeOrder();
    const row = await orderRow(placed.id);
    await control('pay', { invoiceId: row.paylink_id });
    await until('paid', async () => (await orderRow(placed.id)).state === 'paid');
    await until('a failed hand-off attempt', async () => {
      const j = await ctx.database.db
        .selectFrom('outbox_messages')
        .select(['attempts', 'last_error'])
        .where('kind', '=', 'erp-sales-order')
        .where('dedupe_key', '=', `order:${placed.id}`)
        .executeTakeFirst();
      return !!j && j.attempts >= 1 && j.last_error !== null;
    });
    expect((await orderRow(placed.id)).state).toBe('paid');
  } finally {
    await erp.server.up();
  }
  await until('transferred', async () => (await orderRow(placed.id)).state === 'transferred', 30_000);
  expect(salesOrdersOf(placed.orderNumber)).toHaveLength(1);
});

test('with the payment provider down the order is accepted without paylink and gets it when the provider is back', async () => {
  await pay.server.down('close');
  let placed: Awaited<ReturnType<typeof placeOrder>>;
  try {
    placed = await placeOrder();
    expect(placed.state).toBe('pending_payment');
    expect(placed.paylinkUrl).toBeNull();
  } finally {
    await pay.server.up();
  }
  await until('paylink', async () => (await orderRow(placed.id)).paylink_url !== null, 30_000);
  const mail = await ctx.database.db
    .selectFrom('outbox_messages')
    .select(['payload'])
    .where('kind', '=', 'mail')
    .where('dedupe_key', '=', `order-paylink:${placed.id}`)
    .executeTakeFirstOrThrow();
  expect((mail.payload as { text: string }).text).toContain((await orderRow(placed.id)).paylink_url!);
});

test('while the provider fails, later orders skip the inline paylink attempt until a paylink is created again', async () => {
  const attempts = async (orderId: number) =>
    (
      await ctx.database.db
        .selectFrom('outbox_messages')
        .select('attempts')
        .where('kind', '=', 'payment-paylink')
        .where('dedupe_key', '=', `order:${orderId}`)
        .executeTakeFirstOrThrow()
    ).attempts;
  await pay.server.down('close');
  let first: Awaited<ReturnType<typeof placeOrder>>;
  let second: Awaited<ReturnType<typeof placeOrder>>;
  try {
    first = await placeOrder();
    second = await placeOrder();
  } finally {
    await pay.server.up();
  }
  expect([first.paylinkUrl, second.paylinkUrl]).toEqual([null, null]);
  // The first order's request tried (and failed); the second one did not try: its job waits for the dispatchers.
  expect(await attempts(first.id)).toBeGreaterThanOrEqual(1);
  expect(await attempts(second.id)).toBe(0);
  // A dispatcher creates the first order's paylink once the provider is back, which ends the pause.
  await until('paylink', async () => (await orderRow(first.id)).paylink_url !== null, 30_000);
  expect((await placeOrder()).paylinkUrl).not.toBeNull();
});
