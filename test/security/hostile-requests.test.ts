/**
 * The adversarial suite (RELIABILITY.md "Attacks"): every operation of both specs gets the hostile variants of
 * `hostile.ts` (prototype keys, mass assignment, deep nesting, oversized, wrong role), generated from the spec so
 * a new operation is covered without a change here; plus the exact requests of two attack findings.
 */
import request from 'supertest';
import { loadSpec } from '@sports-timing/shared';
import { SPEC_FILE as ORDERING_SPEC } from '../../services/ordering/src/version';
import { SPEC_FILE as TIMING_SPEC } from '../../services/timing/src/version';
import { ADMIN_PASSWORD, bearerOf, createUser, startIdentity, type IdentityTestContext } from '../../services/ordering/test/support/identity';
import { startTiming, type TimingTestContext } from '../../services/timing/test/helpers';
import { createErpSimulator, type ErpSimulator } from '../../packages/erp-simulator/src';
import { createPaymentSimulator, type PaymentSimulator } from '../../packages/payment-simulator/src';
import { createApp } from '../../services/ordering/src/app';
import { composeOrdering } from '../../services/ordering/src/composition';
import { attackSpec, DEEP, summarizeFindings, type HostileReport } from './hostile';
import { testNote } from '@sports-timing/shared/src/testing';
import { testTime } from '@sports-timing/shared/src/test-time';

jest.setTimeout(testTime(300_000));
const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const PW = 'mallory-password-1';

function report(name: string, r: HostileReport): void {
  testNote(
    `${name}: ${r.requests} hostile requests; ${JSON.stringify(r.statuses)}; ${r.findings.length} findings\n${summarizeFindings(r.findings).join('\n')}`,
  );
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

  test('the findings: NUL is a 400 (not a 500) and costs no rate-limit point; JSON bodies are typed; integers strict', async () => {
    // An app of its own with a budget of 3 discount-code checks a minute (its own in-memory counters).
    const small = createApp(composeOrdering({ ...ctx.deps, config: { ...ctx.deps.config, rateLimitDiscountValidationsPerMinute: 3 } }));
    const validate = () => request(small).post('/api/grpc-json/v1/shop/discount-codes/validate').set('Content-Type', 'application/json');
    // Five NUL requests against a budget of 3: each a 400 from validation, none charged …
    for (let i = 0; i < 5; i++) {
      const res = await validate().send({ codes: ['A\u0000B'], orderItems: [{ articleNumber: 'SIAC1', quantity: 1 }] });
      expect(res.status).toBe(400);
      expect(res.text).not.toMatch(/invalid byte sequence|at .*\(/);
    }
    // … so the budget is whole: 3 checks pass validation, the 4th is 429 (negative control: the limit works).
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await validate().send({ codes: [`NOPE-${i}`], orderItems: [{ articleNumber: 'SIAC1', quantity: 1 }] })).status);
    expect(statuses.slice(0, 3).every((s) => s !== 429 && s < 500)).toBe(true);
    expect(statuses[3]).toBe(429);
    for (const [path, body] of [
      ['/api/rest/v1/auth/token', 'grant_type=password&username=adm%00in&password=x'],
      ['/api/rest/v1/users/get-by-name?userName=a%00b', undefined],
    ] as const) {
      const res = body ? await request(ctx.app).post(path).type('form').send(body) : await request(ctx.app).get(path).set('Authorization', admin);
      expect([path, res.status]).toEqual([path, 400]);
    }
    const article = await request(ctx.app).get('/api/grpc-json/v1/shop/articles/SIAC1%00');
    expect(article.status).toBe(400);
    const create = (extra: Record<string, unknown>) =>
      request(ctx.app)
        .post('/api/grpc-json/v1/shop/discount-codes/create')
        .set('Authorization', admin)
        .send({ campaignName: 'typed', kind: 'percent', percent: 5, numberOfCodes: 1, ...extra });
    for (const extra of [
      { percent: '5' },
      { campaignName: 12345 },
      { maxRedemptionsPerCode: true },
      { campaignName: 'Line\r\nBreak' },
      { campaignName: 'Evil\u202Ename' },
    ]) {
      const res = await create(extra);
      expect([extra, res.status]).toEqual([extra, 400]);
    }
    for (const v of ['0x10', '0b11', '1e3', '%205', '1e309', '-1']) {
      const res = await request(ctx.app).get(`/api/grpc-json/v1/shop/siids/siac1/random-free-siids?numberOfServiceIds=${v}`);
      expect([v, res.status]).toEqual([v, 400]);
    }
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
    const form = await request(ctx.app)
      .post('/api/rest/v1/auth/token')
      .type('form')
      .send('grant_type=password&username=a&password=b&constructor=1&__proto__=1&toString=1&hasOwnProperty=1');
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

  test('the findings: NUL, lenient numbers and untyped JSON are 400s, also in the fast lanes', async () => {
    for (const v of ['0x10', '0b11', '1e3', '%205', '1e309', '-0', '9223372036854775808']) {
      const res = await request(t.app).get(`/api/rest/v1/punches?eventId=1&afterId=${v}`);
      expect([v, res.status]).toEqual([v, 400]);
    }
    expect((await request(t.app).get('/api/rest/v1/punches?modem=a%00b')).status).toBe(400);
    const event = (body: Record<string, unknown>) =>
      request(t.app)
        .post('/api/rest/v1/events')
        .set('apikey', userKey)
        .send({ name: 'Typed', public: true, modems: [], ...body });
    for (const body of [{ public: null }, { public: 'false' }, { name: 12345 }, { name: 'a\u0000b' }, { name: 'a\nb' }, { name: 'a\u202Eb' }]) {
      const res = await event(body);
      expect([body, res.status]).toEqual([body, 400]);
    }
    const punch = { card: '9790916', time: 1580584563000, code: 54, type: 'Control', modem: 'MDM-X' };
    const upload = (p: Record<string, unknown>) =>
      request(t.app)
        .post('/api/rest/v1/punches')
        .set('apikey', t.adminKey)
        .send([{ ...punch, ...p }]);
    // A mistyped punch is rejected alone (uploads keep the good punches): 200, nothing stored, listed in `rejected`.
    for (const p of [{ card: true }, { card: null }, { card: 1.5 }, { code: '54' }, { time: '1580584563000' }]) {
      const res = await upload(p);
      expect([p, res.status, res.body.stored, res.body.rejected?.[0]?.index]).toEqual([p, 200, 0, 0]);
    }
    // NUL anywhere in a request is a 400 for the whole request.
    expect((await upload({ modem: 'a\u0000' })).status).toBe(400);
    // The card's second form in the spec (oneOf): a JSON integer.
    expect((await upload({ card: 9790916 })).status).toBe(200);
  });

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
