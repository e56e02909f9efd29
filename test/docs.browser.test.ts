/**
 * Both reference pages in a real browser (Debian's Chromium driven by playwright-core): every operation of
 * each spec is listed by its operationId, and the raw documents are served as YAML and JSON.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import request from 'supertest';
import { startOrdering, type OrderingTestContext } from '../services/ordering/test/support/app';
import { startTiming, type TimingTestContext } from '../services/timing/test/helpers';
import { testTime } from '@sports-timing/shared/src/test-time';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

let ordering: OrderingTestContext;
let timing: TimingTestContext;
let browser: Browser;
const servers: http.Server[] = [];

beforeAll(async () => {
  [ordering, timing] = await Promise.all([startOrdering(), startTiming()]);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});
afterAll(async () => {
  await browser?.close();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  await Promise.all([ordering?.close(), timing?.close()]);
});

async function listen(app: http.RequestListener): Promise<string> {
  const server = http.createServer(app);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function operationIds(spec: { paths: Record<string, Record<string, { operationId?: string }>> }): string[] {
  return Object.values(spec.paths).flatMap((item) => METHODS.filter((m) => item[m]).map((m) => item[m].operationId!));
}

describe.each([
  ['ordering', () => ordering.app],
  ['timing', () => timing.app],
])('%s service', (_name, appOf) => {
  it('serves its OpenAPI document as YAML and JSON', async () => {
    const app = appOf();
    const yaml = await request(app).get('/openapi.yaml').expect(200);
    expect(yaml.headers['content-type']).toMatch(/^application\/yaml/);
    expect(yaml.text).toMatch(/^openapi: 3\.0\.3/m);
    const json = await request(app).get('/openapi.json').expect(200);
    expect(json.body.openapi).toBe('3.0.3');
  });

  it('lists every operation on /docs in a browser', async () => {
    const app = appOf();
    const spec = (await request(app).get('/openapi.json').expect(200)).body;
    const expected = operationIds(spec);
    expect(expected.length).toBeGreaterThan(5);
    const base = await listen(app);
    const page = await browser.newPage();
    try {
      await page.goto(`${base}/docs`);
      await page.waitForSelector('.opblock', { timeout: testTime(30_000) });
      const shown = await page.$$eval('.opblock-summary-operation-id', (els) => els.map((e) => (e.textContent ?? '').trim()));
      expect([...shown].sort()).toEqual([...expected].sort());
      // "Try it out" targets the origin the page came from, not the spec's default port.
      const servers = await page.$$eval('.servers select option', (opts) => opts.map((o) => (o as unknown as { value: string }).value));
      expect(servers[0]).toBe(base);
    } finally {
      await page.close();
    }
  });
});

describe('try it out', () => {
  it('getPunches executed with the examples as the page fills them in answers 200 (the user parameter starts empty)', async () => {
    const { loadDemoData } = await import('../services/timing/src/demo/load');
    const { createLogger } = await import('@sports-timing/shared');
    await loadDemoData(timing.timing, createLogger('docs-test'));
    const base = await listen(timing.app);
    const page = await browser.newPage();
    try {
      await page.goto(`${base}/docs#/punches/getPunches`);
      const op = page.locator('#operations-punches-getPunches');
      await op.locator('.try-out__btn').click({ timeout: testTime(30_000) });
      const request = page.waitForRequest((r) => r.url().includes('/api/rest/v1/punches?'));
      await op.locator('.execute').click();
      const sent = new URL((await request).url());
      expect(sent.searchParams.has('user')).toBe(false);
      expect(sent.searchParams.get('eventId')).toBe('1');
      await op
        .locator('.live-responses-table tr.response .response-col_status')
        .first()
        .waitFor({ timeout: testTime(10_000) });
      expect((await op.locator('.live-responses-table tr.response .response-col_status').first().textContent())?.trim()).toBe('200');
    } finally {
      await page.close();
    }
  });
});

describe('metrics', () => {
  it('exposes Prometheus metrics per operation on both services', async () => {
    await request(timing.app).get('/api/rest/v1/public/versions').expect(200);
    const t = await request(timing.app).get('/metrics').expect(200);
    expect(t.headers['content-type']).toMatch(/^text\/plain/);
    expect(t.text).toMatch(/http_requests_total\{operation="getVersions",method="GET",status="200",service="timing"\} 1/);
    expect(t.text).toMatch(/db_pool_connections_total\{service="timing"\}/);
    const o = await request(ordering.app).get('/metrics').expect(200);
    expect(o.text).toMatch(/outbox_messages_pending\{service="ordering"\} 0/);
  });
});
