/**
 * Rate limits shared by all instances: two app instances on one Redis (the machine's, a unique key
 * prefix per test) share one budget; without Redis each instance counts in memory; with Redis unreachable
 * the limits fail open to per-instance in-memory counters (requests are served, limits still hold).
 */
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { startOrdering, type OrderingTestContext } from '../../services/ordering/test/support/app';
import { createApp } from '../../services/ordering/src/app';

type Express = ReturnType<typeof createApp>;
import { composeOrdering, type OrderingServices } from '../../services/ordering/src/composition';
import { loadOrderingConfig } from '../../services/ordering/src/config';
import type { OrderingDeps } from '../../services/ordering/src/context';
import { createApp as createTimingApp } from '../../services/timing/src/app';
import { startTiming, type TimingTestContext } from '../../services/timing/test/helpers';
import { createLogger, createRedis } from '@sports-timing/shared';

const logger = createLogger('rate-limit-test');

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const DEAD_REDIS_URL = 'redis://127.0.0.1:6399';
const BATTERY = '/api/rest/v1/products/si-cards/8000001';
const VALIDATE = '/api/grpc-json/v1/shop/discount-codes/validate';

let ctx: OrderingTestContext;
const extra: OrderingServices[] = [];

beforeAll(async () => {
  ctx = await startOrdering();
});
afterAll(async () => {
  for (const s of [ctx.services, ...extra]) s.identity.redis?.disconnect();
  await ctx.close();
});

/**
 * A further app instance on the same database with its own configuration (own limiter, own Redis client),
 * returned once its Redis connection is ready (until then the in-memory insurance limiter would count).
 */
async function instance(env: Record<string, string>): Promise<Express> {
  const deps: OrderingDeps = { ...ctx.deps, config: loadOrderingConfig({ DEMO_DATA: 'false', ...env }) };
  const ordering = composeOrdering(deps);
  extra.push(ordering.services);
  const app = createApp(ordering);
  const redis = ordering.services.identity.redis;
  if (redis && env.REDIS_URL !== DEAD_REDIS_URL && redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
  return app;
}

const prefix = () => `test-rl-${randomBytes(6).toString('hex')}`;

test('battery lookup: two instances on one Redis share the budget; 429 with Retry-After in the problem shape', async () => {
  const env = { REDIS_URL, RATE_LIMIT_KEY_PREFIX: prefix(), RATE_LIMIT_BATTERY_LOOKUPS_PER_MINUTE: '6' };
  const [a, b] = [await instance(env), await instance(env)];
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) {
    statuses.push((await request(a).get(BATTERY)).status);
    statuses.push((await request(b).get(BATTERY)).status);
  }
  expect(statuses.every((s) => s !== 429 && s < 500)).toBe(true);
  for (const app of [a, b]) {
    const res = await request(app).get(BATTERY);
    expect(res.status).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 429, title: 'Too Many Requests' });
  }
});

test('discount validation: shared budget across instances, 429 as google.rpc.Status RESOURCE_EXHAUSTED', async () => {
  const env = { REDIS_URL, RATE_LIMIT_KEY_PREFIX: prefix(), RATE_LIMIT_DISCOUNT_VALIDATIONS_PER_MINUTE: '4' };
  const [a, b] = [await instance(env), await instance(env)];
  // A request the spec refuses gets its point back (docs/decisions.md); one the spec accepts is charged whatever
  // the handler answers (an unknown article here), so guessing codes costs budget.
  const guess = { codes: ['NO-SUCH-CODE'], orderItems: [{ articleNumber: 'NO-SUCH-ARTICLE', quantity: 1 }] };
  for (const app of [a, b]) expect((await request(app).post(VALIDATE).send({})).status).toBe(400);
  for (const app of [a, b, a, b]) expect((await request(app).post(VALIDATE).send(guess)).status).not.toBe(429);
  const res = await request(b).post(VALIDATE).send(guess);
  expect(res.status).toBe(429);
  expect(res.headers['retry-after']).toBeDefined();
  expect(res.body).toMatchObject({ code: 8 });
});

test('order creation (REST and shop) is limited per caller', async () => {
  const env = { REDIS_URL, RATE_LIMIT_KEY_PREFIX: prefix(), RATE_LIMIT_ORDERS_PER_MINUTE: '2' };
  const [a, b] = [await instance(env), await instance(env)];
  const contact = { firstName: 'Eva', lastName: 'Berg', email: 'eva@example.com', culture: 'en' };
  // Orders the spec accepts (an unknown article: the handler refuses them, charged all the same).
  for (const [path, shape, body] of [
    [
      '/api/rest/v1/order',
      { status: 429 },
      {
        contact,
        shippingAddress: { firstName: 'Eva', lastName: 'Berg', address1: 'Storgatan 1', zip: '903 26', city: 'Umeå', country: 'SE' },
        billingAddressIsSameAsShippingAddress: true,
        items: [{ productId: 'NO-SUCH-ARTICLE', quantity: 1 }],
      },
    ],
    [
      '/api/grpc-json/v1/shop/orders',
      { code: 8 },
      {
        contact,
        shippingAddress: { firstName: 'Eva', lastName: 'Berg', address1: 'Storgatan 1', zip: '90326', city: 'Umeå', countryCode: 'SE' },
        billingAddressIsSameAsShippingAddress: true,
        orderItems: [{ articleNumber: 'NO-SUCH-ARTICLE', quantity: 1 }],
      },
    ],
  ] as const) {
    expect((await request(a).post(path).send(body)).status).not.toBe(429);
    expect((await request(b).post(path).send(body)).status).not.toBe(429);
    const res = await request(a).post(path).send(body);
    expect(res.status).toBe(429);
    expect(res.body).toMatchObject(shape);
  }
});

test('login limit (failed attempts per account) is shared across instances', async () => {
  const env = { REDIS_URL, RATE_LIMIT_KEY_PREFIX: prefix(), LOGIN_MAX_FAILURES_PER_ACCOUNT: '3' };
  const [a, b] = [await instance(env), await instance(env)];
  const login = (app: Express) =>
    request(app).post('/api/rest/v1/auth/token').type('form').send({ grant_type: 'password', username: 'nobody', password: 'wrong-password' });
  for (const app of [a, b, a]) expect((await login(app)).status).toBe(400);
  const res = await login(b);
  expect(res.status).toBe(429);
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
});

test('memory store without Redis: each instance counts on its own', async () => {
  const env = { RATE_LIMIT_BATTERY_LOOKUPS_PER_MINUTE: '2' };
  const [a, b] = [await instance(env), await instance(env)];
  for (const app of [a, a, b, b]) expect((await request(app).get(BATTERY)).status).not.toBe(429);
  expect((await request(a).get(BATTERY)).status).toBe(429);
  expect((await request(b).get(BATTERY)).status).toBe(429);
});

test('Redis unreachable: fail open to per-instance limits (served, never 500, still limited)', async () => {
  const env = { REDIS_URL: DEAD_REDIS_URL, RATE_LIMIT_KEY_PREFIX: prefix(), RATE_LIMIT_BATTERY_LOOKUPS_PER_MINUTE: '3' };
  const [a, b] = [await instance(env), await instance(env)];
  // No request waits for the dead Redis (no offline queue): a waiting one would never answer.
  for (const app of [a, a, a, b]) {
    const res = await request(app).get(BATTERY);
    expect(res.status).not.toBe(429);
    expect(res.status).toBeLessThan(500);
  }
  expect((await request(a).get(BATTERY)).status).toBe(429);
});

describe('timing: key-bearing punch reads', () => {
  let t: TimingTestContext;
  const redis = createRedis(REDIS_URL);
  beforeAll(async () => {
    t = await startTiming();
    if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
  });
  afterAll(async () => {
    redis.disconnect();
    await t.close();
  });

  test('limited per key across instances; anonymous public reads are not charged', async () => {
    const rateLimit = { keyReadsPerMinute: 3, redis, prefix: prefix() };
    const [a, b] = [
      createTimingApp({ database: t.database, logger: logger, validateResponses: true, rateLimit }),
      createTimingApp({ database: t.database, logger: logger, validateResponses: true, rateLimit }),
    ];
    const read = (app: Express) => request(app).get('/api/rest/v1/punches?modem=1').set('apikey', t.adminKey);
    for (const app of [a, b, a]) expect((await read(app)).status).toBe(200);
    const res = await read(b);
    expect(res.status).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(res.body).toMatchObject({ status: 429 });
  });
});
