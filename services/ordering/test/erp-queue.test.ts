/**
 * One sales order per shop order under weclapp's queue, and shipped without webhooks (docs/weclapp.md "Load
 * management and exactly one sales order", "Shipped and completed"):
 * - a POST held in the simulator's queue longer than the client waits, then carried out, while two ordering
 *   instances hand off the same order: one sales order, one POST; without the create claim (the client as it was:
 *   look up, POST again) two (negative control);
 * - the periodic check of changed sales orders moves an order to shipped and completed when no webhook arrives.
 */
import { sql } from 'kysely';
import request from 'supertest';
import { createDatabase, createLogger } from '@sports-timing/shared';
import type { DB } from '../src/db/schema';
import { ErpClients } from '../src/erp/erp-clients';
import { ErpHandOff } from '../src/orders/flow/erp-hand-off';
import { orderBody } from './support/orders';
import { startOrderFlowStack, until, WEBHOOK_PATH, type OrderFlowStack } from './support/order-flow-stack';
import { testTime, testConnectTimeoutMs } from '@sports-timing/shared/src/test-time';

describe("exactly one sales order under weclapp's queue", () => {
  let stack: OrderFlowStack;
  let second: { erpHandOff: ErpHandOff; close: () => Promise<void> };
  beforeAll(async () => {
    stack = await startOrderFlowStack('erp-queue-test', {
      env: { ERP_TIMEOUT_MS: '700', ERP_CREATE_SETTLE_MS: '4000' },
    });
    // A second ordering instance on the same database and ERP: its own pool, ERP client, caches and ERP hand-off.
    const logger = createLogger('erp-queue-2');
    const database = createDatabase<DB>({ connectTimeoutMs: testConnectTimeoutMs(), url: stack.ctx.testDb.url, schema: 'ordering', max: 4, logger });
    const config = stack.ctx.deps.config;
    const erpClients = new ErpClients({
      db: database.db,
      config,
      encryption: stack.ctx.services.encryption,
    });
    second = { erpHandOff: new ErpHandOff({ database, config, erpClients }), close: () => database.close() };
  });
  afterAll(async () => {
    await second.close();
    await stack.close();
  });

  async function paidOrder(): Promise<number> {
    const res = await request(stack.url)
      .post('/api/grpc-json/v1/shop/orders')
      .send(orderBody({ orderItems: [{ articleNumber: 'BSF8', quantity: 1 }] }));
    expect(res.status).toBe(200);
    const id = (res.body as { oid: number }).oid;
    // Paid without the job: this test drives the hand-off itself, from both instances at once.
    await sql`update orders set state = 'paid' where id = ${id}`.execute(stack.ctx.database.db);
    return id;
  }
  const salesOrdersOf = async (id: number) => {
    const { order_number } = await stack.ctx.database.db.selectFrom('orders').select('order_number').where('id', '=', id).executeTakeFirstOrThrow();
    return [...stack.erp!.data().salesOrder.values()].filter((s) => s.commission === order_number);
  };

  test(
    'a POST held in the queue past the client deadline, then carried out: both instances keep handing off, one sales order',
    async () => {
      await stack.dispatcher.stop();
      const id = await paidOrder();
      // weclapp holds the POST 2 s (client deadline 0.7 s) and carries it out then.
      await fetch(`${stack.erp!.server.origin}/__control/queue`, {
        method: 'POST',
        body: JSON.stringify({ ms: 2000, method: 'POST', path: '/salesOrder' }),
      });
      const attempt = (handOff: ErpHandOff) =>
        handOff.handOffToErp(id).then(
          () => 'done',
          (e: Error) => e.message,
        );
      const deadline = Date.now() + testTime(15_000);
      let outcome: string[] = [];
      while (Date.now() < deadline) {
        outcome = await Promise.all([attempt(stack.ctx.services.erpHandOff), attempt(second.erpHandOff)]);
        if (outcome.includes('done')) break;
        await new Promise((r) => setTimeout(r, 300));
      }
      expect(outcome).toContain('done');
      await new Promise((r) => setTimeout(r, 2500));
      expect(await salesOrdersOf(id)).toHaveLength(1);
      expect(stack.erp!.server.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/salesOrder'))).toHaveLength(1);
    },
    testTime(30_000),
  );

  test(
    'negative control: without the create claim the same queue makes two sales orders',
    async () => {
      const id = await paidOrder();
      await fetch(`${stack.erp!.server.origin}/__control/queue`, {
        method: 'POST',
        body: JSON.stringify({ ms: 2000, method: 'POST', path: '/salesOrder' }),
      });
      const erp = stack.ctx.services.erpClients.client;
      const { order_number } = await stack.ctx.database.db.selectFrom('orders').select('order_number').where('id', '=', id).executeTakeFirstOrThrow();
      const customerId = await erp.customerIdByNumber('weclapp', 'C-9000');
      const articleId = (await erp.findArticleByNumber('weclapp', 'BSF8'))!.id;
      const draft = { order: { customerId, orderItems: [{ articleId, quantity: '1' }] }, subItems: [] };
      // The client before: after an unanswered POST, look up (not there yet: still queued) and POST again.
      await erp.createSalesOrder('weclapp', draft, order_number).catch(() => undefined);
      await erp.createSalesOrder('weclapp', draft, order_number);
      await new Promise((r) => setTimeout(r, 2500));
      const made = [...stack.erp!.data().salesOrder.values()].filter((s) => s.customAttributes?.some((a) => a.stringValue === order_number));
      expect(made).toHaveLength(2);
    },
    testTime(30_000),
  );
});

describe('shipped without webhooks', () => {
  let stack: OrderFlowStack;
  beforeAll(async () => {
    stack = await startOrderFlowStack('erp-poll-test');
    await stack.control('subscribe', { url: `${stack.url}${WEBHOOK_PATH}`, format: 'json' });
  });
  afterAll(() => stack.close());

  test('the periodic check of changed sales orders moves a transferred order to shipped and completed; without it the order stays', async () => {
    const res = await request(stack.url)
      .post('/api/grpc-json/v1/shop/orders')
      .send(orderBody({ orderItems: [{ articleNumber: 'BSF8', quantity: 1 }] }));
    const id = (res.body as { oid: number }).oid;
    const db = stack.ctx.database.db;
    const { paylink_id } = await db.selectFrom('orders').select('paylink_id').where('id', '=', id).executeTakeFirstOrThrow();
    await stack.control('pay', { invoiceId: paylink_id });
    await until(
      'transferred',
      async () => (await db.selectFrom('orders').select('state').where('id', '=', id).executeTakeFirstOrThrow()).state === 'transferred',
    );
    const { erp_sales_order_id } = await db.selectFrom('orders').select('erp_sales_order_id').where('id', '=', id).executeTakeFirstOrThrow();
    const before = Date.now() - 1;
    // The ERP ships it; no webhook subscription reaches the shop (silent or deactivated).
    await stack.erp!.patchEntity('salesOrder', erp_sales_order_id!, { shipped: true });
    expect((await db.selectFrom('orders').select('state').where('id', '=', id).executeTakeFirstOrThrow()).state).toBe('transferred');
    expect(await stack.ctx.services.salesOrders.pollErpSalesOrders('weclapp', before)).toBeGreaterThanOrEqual(1);
    expect((await db.selectFrom('orders').select('state').where('id', '=', id).executeTakeFirstOrThrow()).state).toBe('shipped');
    await stack.erp!.patchEntity('salesOrder', erp_sales_order_id!, { status: 'CLOSED' });
    await stack.ctx.services.salesOrders.pollErpSalesOrders('weclapp', before);
    expect((await db.selectFrom('orders').select('state').where('id', '=', id).executeTakeFirstOrThrow()).state).toBe('completed');
  });
});
