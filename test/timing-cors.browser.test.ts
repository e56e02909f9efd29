/**
 * A live-result web page on another origin reads punches with the request headers pages and their libraries
 * add on their own (`Content-Type`, `Cache-Control`, `Pragma`, `X-Requested-With`, …), in a real browser
 * (Debian's Chromium driven by playwright-core), with the browser's own preflight and CORS checks: the
 * headers of the timing spec's `x-cors-request-headers` are allowed on every operation. Negative control: a
 * header not in that list makes the browser refuse the request.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import request from 'supertest';
import { startTiming, upload, type TimingTestContext } from '../services/timing/test/helpers';
import { testTime } from '@sports-timing/shared/src/test-time';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let timing: TimingTestContext;
let browser: Browser;
const servers: http.Server[] = [];
let timingBase: string;
let pageOrigin: string;
let eventId: number;
let privateEventId: number;
let ownerKey: string;

async function listen(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  pageOrigin = await listen((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>live results</title><body></body>');
  });
  timing = await startTiming();
  timingBase = await listen(timing.app);
  const org = await timing.createUser('organiser');
  ownerKey = org.key;
  const punches = (modem: string) =>
    Array.from({ length: 3 }, (_, i) => ({
      card: String(8_700_000 + i),
      time: Date.UTC(2026, 10, 24, 10, 0, i),
      code: 31 + i,
      type: 'Control',
      modem,
    }));
  await upload(timing, org.key, [...punches('5000001'), ...punches('5000002')]);
  eventId = (
    await request(timing.app)
      .post('/api/rest/v1/events')
      .set('apikey', org.key)
      .send({ name: 'Live', public: true, modems: ['5000001'] })
      .expect(201)
  ).body.id;
  privateEventId = (
    await request(timing.app)
      .post('/api/rest/v1/events')
      .set('apikey', org.key)
      .send({ name: 'Closed', public: false, modems: ['5000002'] })
      .expect(201)
  ).body.id;
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
}, testTime(120_000));
afterAll(async () => {
  await browser?.close();
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  await timing?.close();
});

async function pageAt(origin: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${origin}/`);
  return page;
}

/** What the page's `fetch` got: status and punch count, or the browser's error (a CORS refusal). */
type PageRead = { status: number; punches: number; total: string | null } | { error: string };

async function readFromPage(page: Page, url: string, headers: Record<string, string>): Promise<PageRead> {
  return page.evaluate(
    async ({ url, headers }) => {
      try {
        const res = await fetch(url, { headers });
        const body = (await res.json()) as unknown[];
        return { status: res.status, punches: body.length, total: res.headers.get('X-Total-Count') };
      } catch (err) {
        return { error: String(err) };
      }
    },
    { url, headers },
  );
}

/** The headers a page or its library adds to a GET (jQuery, axios, no-cache set-ups). */
const PAGE_HEADERS = {
  'Content-Type': 'application/json',
  'Cache-Control': 'no-cache',
  Pragma: 'no-cache',
  'X-Requested-With': 'XMLHttpRequest',
};

describe('a live-result page on another origin', () => {
  test('reads punches of a public event with Content-Type, Cache-Control, Pragma and X-Requested-With', async () => {
    const page = await pageAt(pageOrigin);
    const read = await readFromPage(page, `${timingBase}/api/rest/v1/punches?eventId=${eventId}&afterId=0`, PAGE_HEADERS);
    expect(read).toEqual({ status: 200, punches: 3, total: '3' });
    await page.close();
  });

  test('reads a private event with its key and every listed header (Authorization, Last-Event-ID, Idempotency-Key, X-Sportident-Client-Id)', async () => {
    const page = await pageAt(pageOrigin);
    const read = await readFromPage(page, `${timingBase}/api/rest/v1/punches?eventId=${privateEventId}`, {
      ...PAGE_HEADERS,
      apikey: ownerKey,
      Authorization: 'Bearer page-token',
      'Last-Event-ID': '0',
      'Idempotency-Key': 'k-1',
      'X-Sportident-Client-Id': 'live-page',
    });
    expect(read).toEqual({ status: 200, punches: 3, total: '3' });
    await page.close();
  });

  test('negative control: a header outside the list is refused by the browser', async () => {
    const page = await pageAt(pageOrigin);
    const read = await readFromPage(page, `${timingBase}/api/rest/v1/punches?eventId=${eventId}`, {
      ...PAGE_HEADERS,
      'X-Not-Allowed': '1',
    });
    expect(read).toMatchObject({ error: expect.stringMatching(/Failed to fetch/) });
    await page.close();
  });

  test('the preflight names the headers', async () => {
    const res = await request(timing.app)
      .options('/api/rest/v1/punches')
      .set('Origin', pageOrigin)
      .set('Access-Control-Request-Method', 'GET')
      .set('Access-Control-Request-Headers', 'content-type,cache-control,pragma,x-requested-with')
      .expect(204);
    const allowed = String(res.headers['access-control-allow-headers']).toLowerCase().split(',');
    for (const h of [
      'content-type',
      'cache-control',
      'pragma',
      'x-requested-with',
      'authorization',
      'apikey',
      'x-sportident-client-id',
      'last-event-id',
      'idempotency-key',
    ])
      expect(allowed).toContain(h);
  });
});
