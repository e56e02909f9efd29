/**
 * Abuse limits of the order pipeline (`src/orders/placement/order-limits.ts`, spec `createShopOrder` "Limits"),
 * each reproducing an attack on the running product: an anonymous card order of 1,000 cards hoarding
 * card numbers, many orders hoarding them 100 at a time, confirmation mails and ERP quotations sent to an
 * address of the caller's choice, and orders used as a discount-code oracle at ten times the rate of
 * `discount-codes/validate`. Every app here gets its own counters (in-memory, one per deps object);
 * callers are told apart by their real source address (127.0.0.x on the loopback interface).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createErpSimulator, ARTICLE_NUMBERS, type ErpSimulator } from '@sports-timing/erp-simulator';
import { createApp } from '../src/app';
import { composeOrdering } from '../src/composition';
import { importArticles } from '../src/catalog/catalog.import';
import type { OrderingConfig } from '../src/config';
import type { components } from '../src/generated/openapi';
import { loadDemoCatalog } from '../src/demo/catalog';
import { startOrdering, type OrderingTestContext } from './support/app';
import { orderBody, snapshot } from './support/orders';

let ctx: OrderingTestContext;
let sim: ErpSimulator;
const servers: http.Server[] = [];

beforeAll(async () => {
  sim = await createErpSimulator().start();
  ctx = await startOrdering({ ERP_BASE_URL_WECLAPP: sim.baseUrl('main') });
  await loadDemoCatalog(ctx.database.db);
  await importArticles({ db: ctx.database.db, erp: ctx.services.erpClients.client, logger: ctx.deps.logger, caches: ctx.services.caches }, 'weclapp');
});

afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
  await ctx.close();
  await sim.stop();
});

/** The production defaults of the limits (the test harness turns them off for other suites). */
const DEFAULT_LIMITS: Partial<OrderingConfig> = {
  orderMaxCardsPublic: 100,
  orderPublicOrdersPerCallerPerHour: 60,
  orderPublicCardsPerCallerPerHour: 300,
  orderClientOrdersPerHour: 600,
  orderClientCardsPerHour: 3000,
  orderMailsPerRecipientPerHour: 10,
  rateLimitDiscountValidationsPerMinute: 120,
};

/** An answer body of these operations: an order, or an error in either documented shape (problem+json, google.rpc.Status). */
type Answer = Partial<components['schemas']['Problem']> & Partial<components['schemas']['Status']> & Record<string, unknown>;

/** A listening app with its own counters and `limits` over the defaults; returns a POST function. */
async function app(limits: Partial<OrderingConfig> = {}) {
  const server = http.createServer(createApp(composeOrdering({ ...ctx.deps, config: { ...ctx.deps.config, ...DEFAULT_LIMITS, ...limits } })));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return (path: string, body: unknown, opts: { from?: string; headers?: Record<string, string> } = {}) =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Answer | null }>((resolve, reject) => {
      // A string is sent as it is (a form body with its own content type), anything else as JSON.
      const data = typeof body === 'string' ? body : JSON.stringify(body);
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          path,
          method: 'POST',
          localAddress: opts.from ?? '127.0.0.1',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...opts.headers },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : null });
          });
        },
      );
      req.on('error', reject);
      req.end(data);
    });
}

const CARD_ORDER = '/api/rest/v1/order';
const SHOP_ORDERS = '/api/grpc-json/v1/shop/orders';
const VALIDATE = '/api/grpc-json/v1/shop/discount-codes/validate';
const QUOTATION = '/api/rest/v1/center/create-quotation-for-subscription';

function cardOrder(quantity: number, email = 'club@example.com') {
  return {
    contact: { firstName: 'Eva', lastName: 'Berg', email, culture: 'sv' },
    shippingAddress: { firstName: 'Eva', lastName: 'Berg', address1: 'Storgatan 1', city: 'Umeå', country: 'SE' },
    billingAddressIsSameAsShippingAddress: true,
    items: [{ productId: 'SIAC1', quantity }],
  };
}

test('an anonymous card order of 1,000 cards is refused (400 naming the limit) and reserves nothing; a retailer may', async () => {
  const post = await app();
  const before = await snapshot(ctx.database);
  const res = await post(CARD_ORDER, cardOrder(1000));
  expect(res.status).toBe(400);
  expect(JSON.stringify(res.body)).toContain('ORDER_MAX_CARDS_PUBLIC');
  expect(await snapshot(ctx.database)).toEqual(before);
  expect((await post(CARD_ORDER, cardOrder(100))).status).toBe(200);
  // Retailers order on invoice and are not limited here.
  const retailer = await ctx.bearer({ roles: ['retailer'], userGroup: 'retailer', id: 301, erpRetailerEntityId: 'R-1' });
  expect((await post(CARD_ORDER, cardOrder(1000), { headers: { Authorization: retailer } })).status).toBe(200);
  // Negative control: without the limit the attack goes through.
  const open = await app({ orderMaxCardsPublic: 1000, orderPublicCardsPerCallerPerHour: 0 });
  expect((await open(CARD_ORDER, cardOrder(1000), { from: '127.0.0.9' })).status).toBe(200);
});

test('one caller hoarding 100 cards at a time is stopped at 300 an hour (429 with Retry-After); another caller is not', async () => {
  const post = await app();
  const claimed = async () =>
    Number(
      (
        await ctx.database.db
          .selectFrom('card_numbers')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const start = await claimed();
  for (let i = 0; i < 3; i++) expect((await post(CARD_ORDER, cardOrder(100, `c${i}@example.com`), { from: '127.0.0.2' })).status).toBe(200);
  const refused = await post(CARD_ORDER, cardOrder(100, 'c4@example.com'), { from: '127.0.0.2' });
  expect(refused.status).toBe(429);
  expect(Number(refused.headers['retry-after'])).toBeGreaterThan(60);
  expect(refused.body?.detail ?? refused.body?.message).toMatch(/card numbers/);
  expect((await claimed()) - start).toBe(300);
  // A small order still fits nowhere this hour for that caller, but another address is unaffected.
  expect((await post(CARD_ORDER, cardOrder(1, 'c5@example.com'), { from: '127.0.0.2' })).status).toBe(429);
  expect((await post(CARD_ORDER, cardOrder(100, 'c6@example.com'), { from: '127.0.0.3' })).status).toBe(200);
});

test('confirmation mails to one address: at most 10 an hour whoever orders; orders per caller: bounded per hour', async () => {
  const post = await app({ orderPublicOrdersPerCallerPerHour: 12 });
  const body = (email: string) => orderBody({ contact: { firstName: 'V', lastName: 'Ictim', email }, orderItems: [{ articleNumber: 'BSF8', quantity: 1 }] });
  // Ten callers, one victim mailbox (letter case and `+tags` changed): ten orders, then 429.
  for (let i = 0; i < 10; i++)
    expect((await post(SHOP_ORDERS, body(i % 2 ? `Victim+${i}@Example.com` : 'victim@example.com'), { from: `127.0.1.${i + 1}` })).status).toBe(200);
  const before = await snapshot(ctx.database);
  const refused = await post(SHOP_ORDERS, body('VICTIM+bcc@example.com'), { from: '127.0.1.50' });
  expect(refused.status).toBe(429);
  expect(refused.body).toMatchObject({ code: 8 });
  expect(refused.headers['retry-after']).toBeDefined();
  expect(await snapshot(ctx.database)).toEqual(before);
  // One caller, fresh addresses: stopped by the per-caller budget (12 here).
  const statuses = [];
  for (let i = 0; i < 13; i++) statuses.push((await post(SHOP_ORDERS, body(`fresh${i}@example.com`), { from: '127.0.2.1' })).status);
  expect(statuses).toEqual([...Array(12).fill(200), 429]);
});

test('ERP quotations mailed to an arbitrary address: at most 10 per address and hour', async () => {
  const post = await app();
  const customer = await ctx.bearer({ roles: ['customer'], id: 42 });
  const body = {
    subscriptionArticleNumber: ARTICLE_NUMBERS.centerSubscription,
    quantity: 1,
    startDate: '2027-01-01',
    address: { firstName: 'Eva', lastName: 'L', address1: 'Weg 1', zip: '20457', city: 'Hamburg', country: 'DE' },
    email: 'someone-else@example.com',
  };
  const jobs = async () => (await ctx.database.db.selectFrom('outbox_messages').select('id').where('kind', '=', 'erp-quotation').execute()).length;
  const start = await jobs();
  const statuses = [];
  for (let i = 0; i < 11; i++) statuses.push((await post(QUOTATION, body, { headers: { Authorization: customer } })).status);
  expect(statuses).toEqual([...Array(10).fill(200), 429]);
  expect((await jobs()) - start).toBe(10);
});

test('orders are no discount-code oracle: orders with codes draw on the validate budget, over it 429 without verdicts', async () => {
  const post = await app({ rateLimitDiscountValidationsPerMinute: 5 });
  const withCode = (code: string) => orderBody({ orderItems: [{ articleNumber: 'BSF8', quantity: 1 }], discountCodes: [code] });
  // Five guesses through orders: each answered with its verdict, like validate would.
  for (let i = 0; i < 5; i++) {
    const r = await post(SHOP_ORDERS, withCode(`GUESS-${i}`), { from: '127.0.3.1' });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toContain('notFound');
  }
  // The sixth: 429, no verdict; validate is spent for this caller too.
  const sixth = await post(SHOP_ORDERS, withCode('GUESS-5'), { from: '127.0.3.1' });
  expect(sixth.status).toBe(429);
  expect(JSON.stringify(sixth.body)).not.toContain('notFound');
  expect((await post(VALIDATE, { codes: ['GUESS-6'], orderItems: [{ articleNumber: 'BSF8', quantity: 1 }] }, { from: '127.0.3.1' })).status).toBe(429);
  // An order without codes is not affected; another caller has its own budget.
  expect((await post(SHOP_ORDERS, orderBody({ orderItems: [{ articleNumber: 'BSF8', quantity: 1 }] }), { from: '127.0.3.1' })).status).toBe(200);
  // The other way round: validate spends the budget, then an order with a code is refused.
  for (let i = 0; i < 5; i++)
    expect((await post(VALIDATE, { codes: [`V-${i}`], orderItems: [{ articleNumber: 'BSF8', quantity: 1 }] }, { from: '127.0.3.2' })).status).toBe(200);
  expect((await post(SHOP_ORDERS, withCode('AFTER'), { from: '127.0.3.2' })).status).toBe(429);
});

test('X-Service-Client-Id pools no callers: a flood from one address under a registered id leaves the id usable elsewhere; a client_credentials client shares one higher budget', async () => {
  const post = await app({ orderPublicOrdersPerCallerPerHour: 5, orderClientOrdersPerHour: 8 });
  const admin = await ctx.bearer({ roles: ['admin'], id: 9001 });
  const registered = await postJson(post, '/api/rest/v1/users/service-clients', { name: 'Club shop', userGroup: 'public' }, admin);
  const { identifier, clientSecret } = registered as { identifier: string; clientSecret: string };
  const clientId = (registered as { client: { clientId: string } }).client.clientId;
  const body = (i: number) =>
    orderBody({ contact: { firstName: 'A', lastName: 'B', email: `pool${i}@example.com` }, orderItems: [{ articleNumber: 'BSF8', quantity: 1 }] });
  const withId = { 'X-Service-Client-Id': identifier };
  // The attacker: one address carrying the client's identifier spends its own budget (5 here), no more.
  const flood = [];
  for (let i = 0; i < 6; i++) flood.push((await post(SHOP_ORDERS, body(i), { from: '127.0.4.1', headers: withId })).status);
  expect(flood).toEqual([...Array(5).fill(200), 429]);
  // The header names a budget beside the address: the address without it has its own (one more per registered
  // client, never one per request: an unknown identifier is ignored).
  expect((await post(SHOP_ORDERS, body(10), { from: '127.0.4.1' })).status).toBe(200);
  // The client's next customer at another address is not refused.
  expect((await post(SHOP_ORDERS, body(20), { from: '127.0.4.2', headers: withId })).status).toBe(200);
  // An authenticated client (client_credentials) shares one budget, higher than a single caller's (8 here),
  // whichever address its requests come from.
  const token = (await postForm(post, { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret })) as { access_token: string };
  const auth = { Authorization: `Bearer ${token.access_token}` };
  const statuses = [];
  for (let i = 0; i < 9; i++) statuses.push((await post(SHOP_ORDERS, body(30 + i), { from: `127.0.4.${10 + (i % 3)}`, headers: auth })).status);
  expect(statuses).toEqual([...Array(8).fill(200), 429]);
});

/** POST a JSON body with a Bearer header through `post`, expecting 200; the answer body. */
async function postJson(post: Awaited<ReturnType<typeof app>>, path: string, body: unknown, bearer: string): Promise<unknown> {
  const res = await post(path, body, { headers: { Authorization: bearer } });
  expect([path, res.status]).toEqual([path, 200]);
  return res.body;
}

/** The token endpoint with a form body (the `app()` helper posts JSON only); the answer body. */
async function postForm(post: Awaited<ReturnType<typeof app>>, form: Record<string, string>): Promise<unknown> {
  const res = await post('/api/rest/v1/auth/token', new URLSearchParams(form).toString(), {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  expect(res.status).toBe(200);
  return res.body;
}
