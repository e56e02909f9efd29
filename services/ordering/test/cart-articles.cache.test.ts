/**
 * The cart-article cache (catalog-caches.ts `CartArticleCache`): orders and discount validation
 * price from articles kept in process for up to a second. An article import (ERP) and
 * `maintenance/clear-caches` drop it, so the next order has the new price at once; without either, a
 * change applies once the freshness interval has passed.
 */
import request from 'supertest';
import { sql } from 'kysely';
import { ARTICLE_NUMBERS, createErpSimulator, type ErpSimulator } from '@sports-timing/erp-simulator';
import { CART_ARTICLE_FRESH_MS } from '../src/catalog/catalog-caches';
import { startOrdering, type OrderingTestContext } from './support/app';
import { orderBody } from './support/orders';

let sim: ErpSimulator;
let ctx: OrderingTestContext;
let admin: string;

beforeAll(async () => {
  sim = await createErpSimulator().start();
  ctx = await startOrdering({ ERP_BASE_URL_WECLAPP: sim.baseUrl('main'), ERP_BASE_URL_WECLAPP_SANDBOX: sim.baseUrl('sandbox') });
  admin = await ctx.bearer({ roles: ['admin'] });
  await request(ctx.app).post('/api/rest/v1/maintenance/import-articles').query({ erpSystem: 'weclapp' }).set('authorization', admin).expect(200);
});
afterAll(async () => {
  await ctx.close();
  await sim.stop();
});

const BSF8 = ARTICLE_NUMBERS.bsf8;

// The cache's freshness follows Date.now(): only Date is faked (timers, ticks and I/O stay real), so the
// clock moves when a test moves it, never because a loaded machine was slow between two requests.
const REAL_EXCEPT_DATE = [
  'hrtime',
  'nextTick',
  'performance',
  'queueMicrotask',
  'requestAnimationFrame',
  'cancelAnimationFrame',
  'requestIdleCallback',
  'cancelIdleCallback',
  'setImmediate',
  'clearImmediate',
  'setInterval',
  'clearInterval',
  'setTimeout',
  'clearTimeout',
] as const;
beforeEach(() => {
  jest.useFakeTimers({ doNotFake: [...REAL_EXCEPT_DATE], now: Date.now() });
});
afterEach(() => {
  jest.useRealTimers();
});

/** Net items total (cents) of a new order of one BSF8. */
async function orderedPrice(): Promise<number> {
  const res = await request(ctx.app)
    .post('/api/grpc-json/v1/shop/orders')
    .send(orderBody({ orderItems: [{ articleNumber: BSF8, quantity: 1 }] }))
    .expect(200);
  return (res.body as { itemsNetCents: number }).itemsNetCents;
}

/** Net item total (cents) discount validation prices one BSF8 at (with an unknown code). */
async function validatedPrice(): Promise<number> {
  const res = await request(ctx.app)
    .post('/api/grpc-json/v1/shop/discount-codes/validate')
    .send({ codes: ['NO-SUCH-CODE'], orderItems: [{ articleNumber: BSF8, quantity: 1 }] })
    .expect(200);
  return (res.body as { itemsNetCents: number }).itemsNetCents;
}

async function setPrice(cents: number): Promise<void> {
  await sql`update articles set net_price_cents = ${cents} where article_number = ${BSF8}`.execute(ctx.database.db);
}

/**
 * With a fresh cache, places one order at the stored price, then raises the stored price by `delta` (behind
 * the cache's back) and runs `check` with the old price; restores the price and the cache afterwards.
 */
async function withRaisedPrice(delta: number, check: (price: number) => Promise<void>): Promise<void> {
  await ctx.services.caches.clearAll();
  const price = await storedPrice();
  expect(await orderedPrice()).toBe(price);
  await setPrice(price + delta);
  try {
    await check(price);
  } finally {
    await setPrice(price);
    await ctx.services.caches.clearAll();
  }
}

async function storedPrice(): Promise<number> {
  return (await ctx.database.db.selectFrom('articles').select('net_price_cents').where('article_number', '=', BSF8).executeTakeFirstOrThrow()).net_price_cents;
}

it('keeps pricing from the cache until clear-caches, then from the changed article', async () => {
  await withRaisedPrice(100, async (price) => {
    // Within the freshness interval: the cached article.
    expect(await orderedPrice()).toBe(price);
    await request(ctx.app).post('/api/rest/v1/maintenance/clear-caches').set('authorization', admin).expect(200);
    expect(await orderedPrice()).toBe(price + 100);
    expect(await validatedPrice()).toBe(price + 100);
  });
});

it('reads the article again once the freshness interval has passed', async () => {
  await withRaisedPrice(7, async (price) => {
    jest.setSystemTime(Date.now() + CART_ARTICLE_FRESH_MS - 1);
    expect(await orderedPrice()).toBe(price);
    jest.setSystemTime(Date.now() + 1);
    expect(await orderedPrice()).toBe(price + 7);
  });
});

it('prices the next order with what an article import brought, at once', async () => {
  await ctx.services.caches.clearAll();
  const before = await orderedPrice();
  await sim.patchEntity('article', BSF8, {
    articlePrices: [
      { id: 'p-171', price: '171.23', currencyId: '248', currencyName: 'EUR', priceScaleType: 'SCALE_FROM', priceScaleValue: '1', salesChannel: 'NET1' },
    ],
  });
  await request(ctx.app).post('/api/rest/v1/maintenance/import-articles').query({ erpSystem: 'weclapp' }).set('authorization', admin).expect(200);
  expect(await storedPrice()).toBe(17123);
  expect(before).not.toBe(17123);
  expect(await orderedPrice()).toBe(17123);
  expect(await validatedPrice()).toBe(17123);
});

it('does not offer an article taken out of the shop once the cache is dropped', async () => {
  await ctx.services.caches.clearAll();
  await orderedPrice();
  await sql`update articles set is_shop_article = false where article_number = ${BSF8}`.execute(ctx.database.db);
  try {
    await ctx.services.caches.clearAll();
    const res = await request(ctx.app)
      .post('/api/grpc-json/v1/shop/orders')
      .send(orderBody({ orderItems: [{ articleNumber: BSF8, quantity: 1 }] }));
    expect(res.status).toBe(400);
  } finally {
    await sql`update articles set is_shop_article = true where article_number = ${BSF8}`.execute(ctx.database.db);
    await ctx.services.caches.clearAll();
  }
});
