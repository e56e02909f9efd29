/**
 * What `APP_ENV=production` changes (README "What production changes"): demo data off unless asked for,
 * `/metrics` behind `METRICS_TOKEN` (and not served without one), the reference page's assets limited to the
 * two files it loads, security headers on every HTML page, and simulators whose control API needs a token.
 */
import request from 'supertest';
import { createLogger } from '@sports-timing/shared';
import { createErpSimulator, type ErpSimulator } from '../../packages/erp-simulator/src';
import { controlTokenFromEnv } from '../../packages/shared/src/sim-main';
import { createApp } from '../../services/timing/src/app';
import { loadTimingConfig } from '../../services/timing/src/config';
import { loadOrderingConfig } from '../../services/ordering/src/config';
import { startTiming, type TimingTestContext } from '../../services/timing/test/helpers';
import { testTime } from '@sports-timing/shared/src/test-time';

jest.setTimeout(testTime(120_000));

let t: TimingTestContext;
beforeAll(async () => {
  t = await startTiming({ withAdmin: false });
});
afterAll(() => t.close());

test('demo data: on in development, off in production unless DEMO_DATA=true', () => {
  expect(loadTimingConfig({}).demoData).toBe(true);
  expect(loadTimingConfig({ APP_ENV: 'production' }).demoData).toBe(false);
  expect(loadTimingConfig({ APP_ENV: 'production', DEMO_DATA: 'true' }).demoData).toBe(true);
  expect(loadOrderingConfig({}).demoData).toBe(true);
  const prod = {
    APP_ENV: 'production',
    ERP_WEBHOOK_SECRET: 'a-webhook-secret-of-16+',
    ERP_API_TOKEN_WECLAPP: 'x',
    ERP_API_TOKEN_WECLAPP_SANDBOX: 'x',
  };
  expect(loadOrderingConfig(prod).demoData).toBe(false);
  expect(loadOrderingConfig({ ...prod, DEMO_DATA: 'true' }).demoData).toBe(true);
});

test('/metrics: open in development, 404 in production without METRICS_TOKEN, 401 without the token when one is set', async () => {
  const logger = createLogger('posture-test');
  await request(t.app).get('/metrics').expect(200);
  const prod = createApp({ database: t.database, logger, metricsAccess: { production: true } });
  await request(prod).get('/metrics').expect(404);
  const guarded = createApp({
    database: t.database,
    logger,
    metricsAccess: { production: true, token: 'scrape-token-0123456789' },
  });
  const refused = await request(guarded).get('/metrics').expect(401);
  expect(refused.text).not.toContain('http_requests_total');
  await request(guarded).get('/metrics').set('Authorization', 'Bearer wrong-token').expect(401);
  const ok = await request(guarded).get('/metrics').set('Authorization', 'Bearer scrape-token-0123456789').expect(200);
  expect(ok.text).toContain('http_requests_total');
});

test('HTML pages carry CSP, nosniff and frame protection; /docs/assets serves only what the page loads', async () => {
  for (const path of ['/docs', '/events/1/live']) {
    const res = await request(t.app).get(path).expect(200);
    const csp = String(res.headers['content-security-policy']);
    expect([path, csp]).toEqual([path, expect.stringContaining("script-src 'self'")]);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-eval');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
  }
  await request(t.app).get('/docs/assets/swagger-ui-bundle.js').expect(200);
  await request(t.app).get('/docs/assets/swagger-ui.css').expect(200);
  for (const stock of ['index.html', 'package.json', 'README.md', 'swagger-initializer.js', '..%2Fpackage.json']) {
    const res = await request(t.app).get(`/docs/assets/${stock}`);
    expect([stock, res.status]).toEqual([stock, 404]);
  }
});

describe('simulators', () => {
  let sim: ErpSimulator;
  afterEach(async () => sim?.stop());

  test('outside development a simulator does not start without SIM_CONTROL_TOKEN', () => {
    expect(() => controlTokenFromEnv({ APP_ENV: 'production' })).toThrow(/SIM_CONTROL_TOKEN/);
    expect(() => controlTokenFromEnv({ APP_ENV: 'staging' })).toThrow(/SIM_CONTROL_TOKEN/);
    expect(controlTokenFromEnv({})).toBeUndefined();
    expect(controlTokenFromEnv({ APP_ENV: 'production', SIM_CONTROL_TOKEN: 'control-token-0123456789' })).toBe('control-token-0123456789');
  });

  test('with a token the control API answers only requests carrying it', async () => {
    sim = await createErpSimulator({ controlToken: 'control-token-0123456789' }).start();
    const base = sim.baseUrl('main').replace(/\/webapp\/api\/v1$/, '');
    expect((await fetch(`${base}/__control/state`)).status).toBe(401);
    expect((await fetch(`${base}/__control/state`, { headers: { 'X-Control-Token': 'wrong' } })).status).toBe(401);
    expect((await fetch(`${base}/__control/state`, { headers: { 'X-Control-Token': 'control-token-0123456789' } })).status).toBe(200);
  });
});
