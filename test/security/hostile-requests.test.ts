/**
 * The adversarial suite (RELIABILITY.md "Attacks"): every operation of both specs gets the hostile variants of
 * `hostile.ts` (prototype keys, mass assignment, deep nesting, oversized, wrong role), generated from the spec so
 * a new operation is covered without a change here; plus the exact requests of two attack findings.
 */
import request from 'supertest';
import { loadSpec } from '@sports-timing/shared';
import { SPEC_FILE as ORDERING_SPEC } from '../../services/ordering/src/version';
import { SPEC_FILE as TIMING_SPEC } from '../../services/timing/src/version';
import { ADMIN_PASSWORD, bearerOf, createUser, startIdentity, type IdentityTestContext } from '../../services/ordering/test/auth-support';
import { startTiming, type TimingTestContext } from '../../services/timing/test/helpers';
import { createErpSimulator, type ErpSimulator } from '../../packages/erp-simulator/src';
import { createPaymentSimulator, type PaymentSimulator } from '../../packages/payment-simulator/src';
import { attackSpec, DEEP, summarizeFindings, type HostileReport } from './hostile';

jest.setTimeout(300_000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const PW = 'mallory-password-1';

function report(name: string, r: HostileReport): void {
  console.log(`${name}: ${r.requests} hostile requests; ${JSON.stringify(r.statuses)}; ${r.findings.length} findings\n${summarizeFindings(r.findings).join('\n')}`);
}

describe('ordering', () => {
  let ctx: IdentityTestContext;
  let erp: ErpSimulator;
  let pay: PaymentSimulator;
  let admin: string;
  let mallory: string;
  beforeAll(async () => {
    erp = await createErpSimulator().start();
    pay = await createPaymentSimulator().start();
    ctx = await startIdentity({
      RATE_LIMIT_KEY_PREFIX: `hostile-${SEED}-${process.pid}`,
      PAYMENT_BASE_URL: pay.baseUrl,
      ERP_BASE_URL_WECLAPP: erp.baseUrl('main'),
      ERP_BASE_URL_WECLAPP_SANDBOX: erp.baseUrl('sandbox'),
    });
    admin = await bearerOf(ctx.app, 'admin', ADMIN_PASSWORD);
    await createUser(ctx.app, admin, { userName: 'mallory', email: 'mallory@example.com', password: PW });
    mallory = await bearerOf(ctx.app, 'mallory', PW);
  });
  afterAll(async () => {
    await ctx.close();
    await pay.stop();
    await erp.stop();
  });

  test('every operation: hostile variants answered < 500, documented, in the error shape, without stack traces', async () => {
    const r = await attackSpec({
      app: ctx.app,
      spec: loadSpec(ORDERING_SPEC),
      privilegedHeaders: { Authorization: admin },
      lowRole: { name: 'customer', headers: { Authorization: mallory } },
      seed: SEED,
      forcedParams: { pixels: '4' },
      runLast: ['devSetErpApiToken'],
    });
    report('ordering', r);
    expect(summarizeFindings(r.findings)).toEqual([]);
    expect(r.requests).toBeGreaterThan(200);
  });

  test('JSON members and form fields named like Object.prototype members are validation errors, not 500s', async () => {
    const body = '{"constructor":1,"__proto__":{"x":1},"toString":2,"validateOnly":true}';
    const res = await request(ctx.app).post('/api/grpc-json/v1/shop/discount-codes/validate').set('Content-Type', 'application/json').send(body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(3);
    expect(res.text).not.toMatch(/TypeError|at .*\(/);
    const form = await request(ctx.app).post('/api/rest/v1/auth/token').type('form').send('grant_type=password&username=a&password=b&constructor=1&__proto__=1&toString=1&hasOwnProperty=1');
    expect(form.status).toBeLessThan(500);
    expect(form.status).toBe(400);
    expect(form.text).not.toMatch(/TypeError|at .*\(/);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  test(`order items nested ${DEEP} levels deep through subitems are refused at the second level`, async () => {
    let item = '{"articleNumber":"A","quantity":1}';
    for (let i = 0; i < DEEP; i++) item = `{"articleNumber":"A","quantity":1,"subitems":[${item}]}`;
    const body = `{"contact":{"email":"a@example.com"},"shippingAddress":{},"billingAddressIsSameAsShippingAddress":true,"orderItems":[${item}]}`;
    const res = await request(ctx.app).post('/api/grpc-json/v1/shop/orders').set('Content-Type', 'application/json').send(body);
    expect([400, 413]).toContain(res.status);
    expect(res.text).not.toMatch(/RangeError|Maximum call stack/);
    // Two levels (item → sub item) are what the shop sends; a sub item with sub items is named in the error.
    const two = `{"contact":{"email":"a@example.com"},"shippingAddress":{},"billingAddressIsSameAsShippingAddress":true,"orderItems":[{"articleNumber":"A","quantity":1,"subitems":[{"articleNumber":"B","quantity":1,"subitems":[]}]}]}`;
    const res2 = await request(ctx.app).post('/api/grpc-json/v1/shop/orders').set('Content-Type', 'application/json').send(two);
    expect(res2.status).toBe(400);
    expect(JSON.stringify(res2.body)).toContain('subitems');
  });
});

describe('timing', () => {
  let t: TimingTestContext;
  let userKey: string;
  beforeAll(async () => {
    t = await startTiming();
    userKey = (await t.createUser('mallory')).key;
  });
  afterAll(() => t.close());

  test('every operation: hostile variants answered < 500, documented, in the error shape, without stack traces', async () => {
    const r = await attackSpec({
      app: t.app,
      spec: loadSpec(TIMING_SPEC),
      privilegedHeaders: { apikey: t.adminKey },
      lowRole: { name: 'user', headers: { apikey: userKey } },
      seed: SEED,
      skip: ['getPunchStream'],
      forcedParams: { wait: '0' },
    });
    report('timing', r);
    expect(summarizeFindings(r.findings)).toEqual([]);
    expect(r.requests).toBeGreaterThan(40);
  });
});
