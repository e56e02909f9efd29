/**
 * `Idempotency-Key` replies and scopes with a payment provider in play (ordering spec parameter
 * `IdempotencyKey`): a retry is answered the bytes of the first answer (the one with the paylink and the
 * `updatedAt` of the paylink's store); keys of anonymous callers are scoped to the client address, so
 * another address with the same key and body gets an order of its own, never the first caller's.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPaymentSimulator, type PaymentSimulator } from '@sports-timing/payment-simulator';
import { loadDemoCatalog } from '../src/demo/catalog';
import { startOrdering, type OrderingTestContext } from './support/app';
import { orderBody } from './support/orders';

let pay: PaymentSimulator;
let ctx: OrderingTestContext;
let server: http.Server;
let port: number;

beforeAll(async () => {
  pay = await createPaymentSimulator().start();
  // With inline paylinks, as server.ts composes the app.
  ctx = await startOrdering({ PAYMENT_BASE_URL: pay.baseUrl }, { inlinePaylinks: true });
  await loadDemoCatalog(ctx.database.db);
  server = http.createServer(ctx.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await pay.stop();
  await ctx.close();
});

/** POSTs JSON from source address `from` (any 127.x.y.z reaches the loopback server); answers status and raw body. */
function post(path: string, body: unknown, headers: Record<string, string>, from = '127.0.0.1'): Promise<{ status: number; text: string }> {
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        localAddress: from,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

const SHOP_ORDERS = '/api/grpc-json/v1/shop/orders';

test('a retry is answered the bytes of the first answer, paylink and updatedAt included', async () => {
  const body = orderBody({ orderItems: [{ articleNumber: 'SIAC1', quantity: 1, configuration: { cardNumber: '8400001' } }] });
  const first = await post(SHOP_ORDERS, body, { 'Idempotency-Key': 'replay-bytes-1' });
  expect(first.status).toBe(200);
  const parsed = JSON.parse(first.text) as { paylinkUrl: string | null; createdAt: string; updatedAt: string };
  // The first answer carries the paylink stored after the order (a later updatedAt than the order's insert).
  expect(parsed.paylinkUrl).toMatch(/^http/);
  expect(parsed.updatedAt > parsed.createdAt).toBe(true);
  for (let i = 0; i < 3; i++) {
    const again = await post(SHOP_ORDERS, body, { 'Idempotency-Key': 'replay-bytes-1' });
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
  }
  // Card orders alike.
  const card = {
    contact: { firstName: 'Eva', lastName: 'Berg', email: 'eva@example.com', culture: 'sv' },
    shippingAddress: { firstName: 'Eva', lastName: 'Berg', address1: 'Storgatan 1', city: 'Umeå', country: 'SE' },
    billingAddressIsSameAsShippingAddress: true,
    items: [{ productId: 'SIAC1', quantity: 2 }],
  };
  const firstCard = await post('/api/rest/v1/order', card, { 'Idempotency-Key': 'replay-bytes-2' });
  expect(firstCard.status).toBe(200);
  expect(JSON.parse(firstCard.text).paylinkUrl).toMatch(/^http/);
  expect((await post('/api/rest/v1/order', card, { 'Idempotency-Key': 'replay-bytes-2' })).text).toBe(firstCard.text);
});

test("anonymous keys are scoped to the client address: another address never gets the first caller's order", async () => {
  const body = orderBody({ orderItems: [{ articleNumber: 'BSF8', quantity: 1 }] });
  const victim = await post(SHOP_ORDERS, body, { 'Idempotency-Key': 'guessable-key' }, '127.0.0.1');
  expect(victim.status).toBe(200);
  const attacker = await post(SHOP_ORDERS, body, { 'Idempotency-Key': 'guessable-key' }, '127.0.0.2');
  expect(attacker.status).toBe(200);
  const v = JSON.parse(victim.text) as { oid: number; paylinkUrl: string };
  const a = JSON.parse(attacker.text) as { oid: number; paylinkUrl: string };
  expect(a.oid).not.toBe(v.oid);
  expect(a.paylinkUrl).not.toBe(v.paylinkUrl);
  // The victim's own retry still gets the victim's order.
  expect((await post(SHOP_ORDERS, body, { 'Idempotency-Key': 'guessable-key' }, '127.0.0.1')).text).toBe(victim.text);
  const scopes = await ctx.database.db.selectFrom('idempotency_keys').select('scope').where('key', '=', 'guessable-key').orderBy('scope').execute();
  expect(scopes.map((s) => s.scope)).toEqual(['createShopOrder:ip:127.0.0.1', 'createShopOrder:ip:127.0.0.2']);
});
