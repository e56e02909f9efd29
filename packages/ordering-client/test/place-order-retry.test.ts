/**
 * `placeOrder`'s retries (src/index.ts `PlaceOrderOptions`, on the shared kit's `withRetry`) against a real HTTP
 * server answering scripted statuses: 503 and 429 are retried with the same `Idempotency-Key`, after
 * `Retry-After` when sent, else after `retryDelayMs`; a 400 is never retried; after the last attempt the last
 * error is thrown.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OrderingApiError, createOrderingClient, type NewShopOrder } from '../src';

interface Answer {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

const unavailable: Answer = { status: 503, body: { code: 14, message: 'unavailable', details: [] } };
let script: Answer[] = [];
const seen: { key: string | undefined; at: number }[] = [];
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push({ key: req.headers['idempotency-key'] as string | undefined, at: Date.now() });
      const next = script.shift() ?? unavailable;
      res.writeHead(next.status, { 'Content-Type': 'application/json', ...next.headers });
      res.end(JSON.stringify(next.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  script = [];
  seen.length = 0;
});

const order = { orderItems: [] } as unknown as NewShopOrder;

test('503 and 429 are retried with the same key, waiting Retry-After when sent, else retryDelayMs', async () => {
  script = [
    { ...unavailable, headers: { 'Retry-After': '1' } },
    { status: 429, body: { code: 8, message: 'slow down', details: [] } },
    { status: 200, body: { oid: 'o-1', orderNumber: 'W-1' } },
  ];
  const { order: placed, idempotencyKey } = await createOrderingClient({ baseUrl }).placeOrder(order, { retryDelayMs: 100 });
  expect(placed).toMatchObject({ oid: 'o-1' });
  expect(seen.map((s) => s.key)).toEqual([idempotencyKey, idempotencyKey, idempotencyKey]);
  expect(seen[1].at - seen[0].at).toBeGreaterThanOrEqual(950);
  expect(seen[2].at - seen[1].at).toBeGreaterThanOrEqual(90);
});

test('a 400 is the order’s own fault: thrown after one attempt', async () => {
  script = [
    { status: 400, body: { code: 3, message: 'bad order', details: [] } },
    { status: 200, body: { oid: 'never' } },
  ];
  const err = await createOrderingClient({ baseUrl })
    .placeOrder(order, { retryDelayMs: 10 })
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(OrderingApiError);
  expect((err as OrderingApiError).status).toBe(400);
  expect(seen).toHaveLength(1);
});

test('after 1 + retries failed attempts the last error is thrown', async () => {
  script = [unavailable, unavailable, { status: 500, body: { code: 13, message: 'internal', details: [] } }, { status: 200, body: { oid: 'late' } }];
  const err = await createOrderingClient({ baseUrl })
    .placeOrder(order, { retries: 2, retryDelayMs: 10 })
    .catch((e: unknown) => e);
  expect((err as OrderingApiError).status).toBe(500);
  expect(seen).toHaveLength(3);
});
