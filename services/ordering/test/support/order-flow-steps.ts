/**
 * The steps the order-flow tests share on a started {@link OrderFlowStack}: place an order, read its row and
 * state history, look up its ERP sales orders, post a payment webhook, and wait until deliveries are processed.
 */
import request from 'supertest';
import type { Transaction } from '@sports-timing/payment-simulator';
import { orderBody } from './orders';
import { WEBHOOK_PATH, type OrderFlowStack } from './order-flow-stack';

/** An order as `POST /shop/orders` answered it. */
interface PlacedOrder {
  id: number;
  orderNumber: string;
  paylinkUrl: string | null;
  state: string;
}

/**
 * The steps on the stack `stack()` returns (read at each call, so they can be made before `beforeAll` starts
 * it). Orders take card numbers counting up from `firstCard`.
 */
export function orderFlowSteps(stack: () => OrderFlowStack, firstCard: number) {
  let cardNumber = firstCard;
  const db = () => stack().ctx.database.db;
  return {
    /** The next card number of the orders these steps place (for an order a test places itself). */
    nextCardNumber: (): number => cardNumber++,
    /** A `/__control` call; pay, cancel and refund answer the transaction they made (subscribe/unsubscribe: unused). */
    control: (action: string, body: unknown): Promise<{ transaction: Transaction }> => stack().control(action, body),
    /** Places a one-item order (an SIAC1 with the next card number); expects 200. */
    placeOrder: async (): Promise<PlacedOrder> => {
      const res = await request(stack().url)
        .post('/api/grpc-json/v1/shop/orders')
        .send(orderBody({ orderItems: [{ articleNumber: 'SIAC1', quantity: 1, configuration: { cardNumber: String(cardNumber++) } }] }));
      expect(res.status).toBe(200);
      const b = res.body as { oid: number; orderNumber: string; paylinkUrl: string | null; state: string };
      return { id: b.oid, orderNumber: b.orderNumber, paylinkUrl: b.paylinkUrl, state: b.state };
    },
    /** The `orders` row of order `id`. */
    orderRow: (id: number) => db().selectFrom('orders').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),
    /** The state changes of order `id` as `from->to`, oldest first. */
    historyOf: async (id: number): Promise<string[]> => {
      const rows = await db().selectFrom('order_state_changes').select(['from_state', 'to_state']).where('order_id', '=', id).orderBy('id').execute();
      return rows.map((r) => `${r.from_state ?? ''}->${r.to_state}`);
    },
    /** The ERP simulator's sales orders of `orderNumber`. */
    salesOrdersOf: (orderNumber: string) => [...stack().erp!.data('main').salesOrder.values()].filter((s) => s.commission === orderNumber),
    /** Whether no payment delivery waits to be processed. */
    deliveriesSettled: async (): Promise<boolean> => {
      const r = await db().selectFrom('payment_deliveries').select('id').where('outcome', 'in', ['queued', 'fetching']).execute();
      return r.length === 0;
    },
    /** Posts a payment webhook: `body` as JSON, or with `form` as a form-encoded string. */
    postWebhook: (body: unknown, form = false) => {
      const req = request(stack().url).post(WEBHOOK_PATH);
      return form ? req.type('form').send(body as string) : req.send(body as object);
    },
  };
}
