/**
 * Browser clients in a real browser (Debian's Chromium driven by playwright-core), each from a page served on
 * another origin than the API, so that every request is a real cross-origin request with the browser's own
 * CORS checks:
 *
 * - `sportident-web`'s `battery.js` request (`fetchSiacBattery`): `GET …/products/si-cards/{cardNumber}` with
 *   `X-Sportident-Client-Id`, which forces a preflight, and its parsing of the answer;
 * - a live-result page polling the SPORTident Center read with jQuery's cache buster `_=<time>`;
 * - a shop front end placing an order (a non-public operation): allowed from the configured origin
 *   (`CORS_ORIGINS`), refused by the browser from any other.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import request from 'supertest';
import { loadDemoCatalog } from '../services/ordering/src/demo/catalog';
import { startOrdering, type OrderingTestContext } from '../services/ordering/test/support/app';
import { startTiming, upload, type TimingTestContext } from '../services/timing/test/helpers';
import { testTime } from '@sports-timing/shared/src/test-time';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let ordering: OrderingTestContext;
let timing: TimingTestContext;
let browser: Browser;
const servers: http.Server[] = [];
let orderingBase: string;
let timingBase: string;
/** The configured shop origin (`CORS_ORIGINS`) and another origin that is not configured. */
let shopOrigin: string;
let otherOrigin: string;
let eventId: number;

async function listen(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A server of empty pages: the origin the scripts run in. */
const pageServer: http.RequestListener = (_req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
  res.end('<!doctype html><title>client</title><body></body>');
};

beforeAll(async () => {
  // Two page origins first: the shop origin must be known when the ordering service is configured.
  shopOrigin = await listen(pageServer);
  otherOrigin = await listen(pageServer);
  [ordering, timing] = await Promise.all([startOrdering({ CORS_ORIGINS: shopOrigin }), startTiming()]);
  await loadDemoCatalog(ordering.database.db);
  orderingBase = await listen(ordering.app);
  timingBase = await listen(timing.app);
  const org = await timing.createUser('organiser');
  await upload(
    timing,
    org.key,
    Array.from({ length: 5 }, (_, i) => ({
      card: String(8_621_484 + i),
      time: Date.UTC(2026, 10, 24, 10, 0, i),
      code: 31 + i,
      type: 'Control',
      modem: '4000001',
    })),
  );
  const ev = await request(timing.app)
    .post('/api/rest/v1/events')
    .set('apikey', org.key)
    .send({ name: 'Live', public: true, modems: ['4000001'] })
    .expect(201);
  eventId = ev.body.id;
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
  await Promise.all([ordering?.close(), timing?.close()]);
});

async function pageAt(origin: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${origin}/`);
  return page;
}

describe('battery.js (sportident-web fetchSiacBattery) from a page on another origin', () => {
  it('sends X-Sportident-Client-Id (a preflighted request) and gets the record, parsed as battery.js parses it', async () => {
    const page = await pageAt(otherOrigin);
    try {
      const result = await page.evaluate(async (baseUrl) => {
        const cardNumber = 8621484;
        // The request of fetchSiacBattery: GET `${baseUrl}${cardNumber}` with the client id header and a signal.
        const controller = new AbortController();
        const response = await fetch(`${baseUrl}${cardNumber}`, {
          method: 'GET',
          headers: { 'X-Sportident-Client-Id': 'browser-test' },
          signal: controller.signal,
        });
        if (response.status === 404) return null;
        const body = (await response.json()) as { cardNumber?: string; batteryDate?: unknown; replaceBefore?: unknown };
        const parseDay = (text: unknown) => {
          if (typeof text !== 'string') return null;
          const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
          return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
        };
        return {
          status: response.status,
          cardNumber: Number(body.cardNumber ?? cardNumber),
          batteryDate: parseDay(body.batteryDate),
          replaceBefore: parseDay(body.replaceBefore),
        };
      }, `${orderingBase}/api/rest/v1/products/si-cards/`);
      expect(result).toEqual({ status: 200, cardNumber: 8621484, batteryDate: [2020, 1, 15], replaceBefore: [2023, 1, 15] });
    } finally {
      await page.close();
    }
  });

  it('an unknown card is a readable 404 (battery.js returns null), not an opaque CORS failure', async () => {
    const page = await pageAt(otherOrigin);
    try {
      const status = await page.evaluate(
        async (url) => (await fetch(url, { headers: { 'X-Sportident-Client-Id': 'browser-test' } })).status,
        `${orderingBase}/api/rest/v1/products/si-cards/8000001`,
      );
      expect(status).toBe(404);
    } finally {
      await page.close();
    }
  });
});

describe('a live-result page polling the SPORTident Center read', () => {
  it('polls /public/events/{id}/punches with a jQuery cache buster and reads X-Total-Count', async () => {
    const page = await pageAt(otherOrigin);
    try {
      const result = await page.evaluate(
        async ({ base, id }) => {
          const res = await fetch(`${base}/api/rest/v1/public/events/${id}/punches?afterId=0&projection=simple&limit=1000&_=${Date.now()}`, {
            headers: { Accept: 'application/json' },
          });
          const punches = (await res.json()) as { card: number; mode: string }[];
          return {
            status: res.status,
            total: res.headers.get('X-Total-Count'),
            cards: punches.map((p) => p.card),
            modes: [...new Set(punches.map((p) => p.mode))],
          };
        },
        { base: timingBase, id: eventId },
      );
      expect(result).toEqual({ status: 200, total: '5', cards: [8621484, 8621485, 8621486, 8621487, 8621488], modes: ['BcControl'] });
    } finally {
      await page.close();
    }
  });
});

describe('a shop front end (non-public operations answer only CORS_ORIGINS)', () => {
  /** Validates a discount code from the page; returns the status, or the browser's error for a refused request. */
  const validateFrom = async (origin: string): Promise<number | string> => {
    const page = await pageAt(origin);
    try {
      return await page.evaluate(async (base) => {
        try {
          const res = await fetch(`${base}/api/grpc-json/v1/shop/discount-codes/validate`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ codes: ['NOPE'], orderValue: { currencyCode: 'EUR', units: '10', nanos: 0 } }),
          });
          return res.status;
        } catch (err) {
          return String(err);
        }
      }, orderingBase);
    } finally {
      await page.close();
    }
  };

  it('the configured origin gets an answer', async () => {
    expect(typeof (await validateFrom(shopOrigin))).toBe('number');
  });

  it('another origin is refused by the browser (preflight without Access-Control-Allow-Origin)', async () => {
    expect(await validateFrom(otherOrigin)).toMatch(/TypeError: Failed to fetch/);
  });
});
