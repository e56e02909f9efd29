/**
 * End to end through the typed ordering client against real processes: the ordering service (as `pnpm start`
 * runs it) with the ERP and payment simulators, on a fresh database of the real PostgreSQL. A customer reads
 * the articles, draws random free SIAC numbers and places an order for one of them with an Idempotency-Key;
 * a retry with the same key answers the same order; the number now shows as taken and the confirmation
 * e-mail (outbox → `.eml` drop of the process) names the order. An administrator logs in through the token
 * endpoint, renews the token (rotating refresh token) and reads the order back through `dev/get-orders`.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createOrderingClient, newIdempotencyKey, OrderingApiError, TokenSession, type NewShopOrder } from '@sports-timing/ordering-client';
import { createTestDatabase, type TestDatabase } from '@sports-timing/shared/src/testing';
import { startServiceProcess, type ServiceProcess } from '../support/service-process';
import { testTime } from '@sports-timing/shared/src/test-time';

jest.setTimeout(testTime(180_000));

const ADMIN_PASSWORD = 'e2e-Admin-password-7f3k9q';
let db: TestDatabase;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'shop-e2e-'));
let erp: ServiceProcess;
let payment: ServiceProcess;
let ordering: ServiceProcess;

beforeAll(async () => {
  db = await createTestDatabase('shop_e2e');
  [erp, payment] = await Promise.all([
    startServiceProcess({ entry: 'packages/erp-simulator/src/main.ts', env: { ERP_SIMULATOR_PORT: '0' } }),
    startServiceProcess({ entry: 'packages/payment-simulator/src/main.ts', env: { PAYMENT_SIMULATOR_PORT: '0' } }),
  ]);
  ordering = await startServiceProcess({
    entry: 'services/ordering/src/server.ts',
    env: {
      ORDERING_PORT: '0',
      DATABASE_URL: db.url,
      DATA_DIR: dataDir,
      APP_ENV: 'test',
      BOOTSTRAP_ADMIN_PASSWORD: ADMIN_PASSWORD,
      ERP_BASE_URL_WECLAPP: `${erp.baseUrl}/webapp/api/v1`,
      ERP_BASE_URL_WECLAPP_SANDBOX: `${erp.baseUrl}/sandbox/webapp/api/v1`,
      PAYMENT_BASE_URL: `${payment.baseUrl}/api/v1`,
    },
  });
});

afterAll(async () => {
  // The service first (it may be calling the simulators), then the simulators.
  await ordering?.stop();
  await Promise.all([erp?.stop(), payment?.stop()]);
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

function order(cardNumber: number): NewShopOrder {
  return {
    contact: { firstName: 'Erika', lastName: 'E2E', email: 'erika.e2e@example.com', culture: 'en' },
    shippingAddress: { firstName: 'Erika', lastName: 'E2E', address1: 'Teststraße 5', zip: '10115', city: 'Berlin', countryCode: 'DE' },
    billingAddressIsSameAsShippingAddress: true,
    orderItems: [{ articleNumber: 'SIAC1', quantity: 1, configuration: { cardNumber: String(cardNumber), personalDataFirstName: 'Erika' } }],
  } as unknown as NewShopOrder;
}

/** Mails in the drop naming `orderNumber`: the order confirmation and the payment-link mail, counted apart. */
function mailsOf(orderNumber: string): { confirmations: number; paylinks: number } {
  const texts = readdirSync(path.join(dataDir, 'mail'))
    .map((f) => readFileSync(path.join(dataDir, 'mail', f), 'utf8'))
    .filter((t) => t.includes(orderNumber));
  const paylinks = texts.filter((t) => /^Subject: Payment link/m.test(t)).length;
  return { confirmations: texts.length - paylinks, paylinks };
}

/** Waits until a `.eml` in the process's mail drop contains `text`; returns that message. */
async function mailContaining(text: string, timeoutMs = 30_000): Promise<string> {
  const dir = path.join(dataDir, 'mail');
  const deadline = Date.now() + testTime(timeoutMs);
  while (Date.now() < deadline) {
    for (const f of existsSync(dir) ? readdirSync(dir) : []) {
      const body = readFileSync(path.join(dir, f), 'utf8');
      if (body.includes(text)) return body;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no mail containing ${text} within ${timeoutMs} ms`);
}

test('a customer orders a personalised SIAC with a random free number and reads it back; an admin logs in', async () => {
  const shop = createOrderingClient({ baseUrl: ordering.baseUrl });

  const articles = await shop.articles();
  expect(articles.map((a) => a.articleNumber)).toContain('SIAC1');

  const free = await shop.randomFreeSiids('siac1', 3);
  expect(free).toHaveLength(3);
  expect(new Set(free).size).toBe(3);
  for (const n of free) expect(n).toBeGreaterThanOrEqual(8_000_001);

  const key = newIdempotencyKey();
  const placed = await shop.placeOrder(order(free[0]), { idempotencyKey: key });
  expect(placed.idempotencyKey).toBe(key);
  expect(placed.order.state).toBe('pending_payment');
  expect(placed.order.orderItems[0].configuration).toMatchObject({ cardNumber: String(free[0]) });
  expect(placed.order.grossTotalCents).toBe(placed.order.netTotalCents + placed.order.vatCents);

  // A retry with the same key (as after a lost answer) is the same order, not a second one.
  const replay = await shop.placeOrder(order(free[0]), { idempotencyKey: key });
  expect(replay.order.oid).toBe(placed.order.oid);
  // The same body under another key is a new order, and the number is taken now: 409 ABORTED.
  await expect(shop.placeOrder(order(free[0]))).rejects.toMatchObject({ status: 409 });

  // Read back: the number is claimed by the order; the confirmation mail names the order number once.
  const check = await shop.api.GET('/api/grpc-json/v1/shop/siids/{cardType}/{serviceId}', { params: { path: { cardType: 'siac1', serviceId: free[0] } } });
  expect(check.data).toMatchObject({ serviceId: free[0], isValid: true, canBeOrdered: false });
  const untouched = await shop.api.GET('/api/grpc-json/v1/shop/siids/{cardType}/{serviceId}', { params: { path: { cardType: 'siac1', serviceId: free[1] } } });
  expect(untouched.data).toMatchObject({ canBeOrdered: true });
  const mail = await mailContaining(placed.order.orderNumber);
  expect(mail).toMatch(/erika\.e2e@example\.com/);
  expect(mailsOf(placed.order.orderNumber).confirmations).toBe(1);

  const session = await TokenSession.password('admin', ADMIN_PASSWORD, { baseUrl: ordering.baseUrl });
  const firstRefresh = session.refreshToken;
  await session.renew();
  expect(session.refreshToken).toBeDefined();
  expect(session.refreshToken).not.toBe(firstRefresh);
  // Concurrent renewals share one refresh: presenting the rotated token twice would revoke the whole chain.
  await Promise.all([session.renew(), session.renew(), session.renew()]);
  const staff = createOrderingClient({ baseUrl: ordering.baseUrl, auth: session });
  const me = await staff.api.GET('/api/rest/v1/auth/userinfo');
  expect(me.data).toMatchObject({ preferred_username: 'admin' });
  expect(me.data?.roles).toContain('admin');
  const page = await staff.getOrders({ searchText: placed.order.orderNumber });
  expect(page.totalCount).toBe(1);
  expect(page.items[0]).toMatchObject({ oid: placed.order.oid, orderNumber: placed.order.orderNumber, source: 'shop', contactEmail: 'erika.e2e@example.com' });
});

test('the client surfaces the documented errors: invalid_grant, 401 without a token, 400 with field violations', async () => {
  const err = await TokenSession.password('admin', 'wrong-password', { baseUrl: ordering.baseUrl }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(OrderingApiError);
  expect((err as OrderingApiError).status).toBe(400);
  expect((err as OrderingApiError).body).toMatchObject({ error: 'invalid_grant' });

  const anonymous = createOrderingClient({ baseUrl: ordering.baseUrl });
  await expect(anonymous.getOrders()).rejects.toMatchObject({ status: 401 });
  const forged = createOrderingClient({ baseUrl: ordering.baseUrl, auth: 'not-a-jwt' });
  expect((await forged.api.GET('/api/rest/v1/auth/userinfo')).response.status).toBe(401);

  const bad = { ...order(8_000_001), orderItems: [{ articleNumber: 'NO-SUCH-ARTICLE', quantity: 1 }] } as unknown as NewShopOrder;
  const rejected = (await anonymous.placeOrder(bad).catch((e: unknown) => e)) as OrderingApiError;
  expect(rejected.status).toBe(400);
  expect(rejected.body).toMatchObject({ code: 3 });
});

test('placeOrder retries a lost answer with the same Idempotency-Key: one order, one confirmation', async () => {
  const shop = createOrderingClient({ baseUrl: ordering.baseUrl });
  const [number] = await shop.randomFreeSiids('siac1', 1);
  let dropped = 0;
  // The first order request reaches the server and is committed, but its answer is lost on the way back.
  const lossy = createOrderingClient({
    baseUrl: ordering.baseUrl,
    fetch: async (req: Request) => {
      const res = await fetch(req);
      if (req.url.endsWith('/shop/orders') && dropped++ === 0) throw new TypeError('fetch failed (answer lost)');
      return res;
    },
  });
  const { order: placed, idempotencyKey } = await lossy.placeOrder(order(number), { retryDelayMs: 50 });
  expect(dropped).toBe(2);
  const replay = await shop.placeOrder(order(number), { idempotencyKey });
  expect(replay.order.oid).toBe(placed.oid);
  await mailContaining(placed.orderNumber);
  await new Promise((r) => setTimeout(r, 500));
  expect(mailsOf(placed.orderNumber).confirmations).toBe(1);
  expect(mailsOf(placed.orderNumber).paylinks).toBeLessThanOrEqual(1);
});
