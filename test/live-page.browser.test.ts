/**
 * The organiser's live page (`/events/{id}/live` of the timing service) in a real browser (Debian's Chromium
 * driven by playwright-core), over the real demo event (VeNotte 2020, 7,759 punches): totals and the modem
 * table as the API counts them, a punch uploaded through the API appearing in the feed within a second, a
 * modem's quiet warning once its uploads stop, a reload in the middle of a stream of uploads that neither
 * loses nor repeats a punch, a private event behind its key, and screenshots at desktop and phone width
 * (the README's `docs/images/live-page-*.png` are copies of them).
 */
import { mkdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import request from 'supertest';
import { createLogger } from '@sports-timing/shared';
import { createApp } from '../services/timing/src/app';
import { loadDemoData } from '../services/timing/src/demo/load';
import type { LiveHub } from '../services/timing/src/live/hub';
import { composeTiming } from '../services/timing/src/composition';
import { startPunchListener, type PunchListener } from '../services/timing/src/live/listener';
import { startTiming, waitUntilVisible, type TimingTestContext } from '../services/timing/test/helpers';
import { testNote } from '@sports-timing/shared/src/testing';
import { testTime } from '@sports-timing/shared/src/test-time';

/** The few DOM shapes the page functions below use (the project's type-check has no DOM library). */
interface PageElement {
  dataset: Record<string, string | undefined>;
  textContent: string | null;
  children: ArrayLike<PageElement>;
  getBoundingClientRect(): { width: number };
}
type HTMLElement = PageElement;
declare const document: { querySelector(selector: string): PageElement | null; documentElement: { scrollWidth: number } };

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/**
 * Where the screenshots go: `.data/screenshots` (ignored by git, beside the development data), so a test run
 * leaves neither the tracked files nor the temporary directory changed. The README's images in docs/images
 * are copies of these, refreshed by hand when the page changes.
 */
const IMAGES = path.join(__dirname, '../.data/screenshots');

let timing: TimingTestContext;
let browser: Browser;
let server: http.Server;
let base: string;
let eventId: number;
let hub: LiveHub;
let listener: PunchListener;

beforeAll(async () => {
  timing = await startTiming();
  eventId = (await loadDemoData(timing.timing, createLogger('demo'))).eventId;
  await waitUntilVisible(timing);
  // The page's instance runs as server.ts runs it: a hub woken by its own LISTEN session.
  const logger = createLogger('live-page-test');
  const composed = composeTiming({ database: timing.database, logger, validateResponses: true });
  hub = composed.live;
  listener = startPunchListener(timing.database.url, composed, logger);
  await listener.ready;
  const app = createApp(composed);
  server = http.createServer(app as unknown as http.RequestListener);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
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
  hub?.close();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await listener?.stop();
  await timing?.close();
});

/** An upload as the admin (admins may upload for any modem), at the current wall-clock minute. */
async function uploadPunch(modem: string, card: number, code: number): Promise<void> {
  const now = new Date();
  const time = Date.UTC(2020, 1, 1, 21, now.getUTCMinutes(), now.getUTCSeconds(), now.getUTCMilliseconds());
  await request(timing.app)
    .post('/api/rest/v1/punches')
    .set('apikey', timing.adminKey)
    .send([{ card: String(card), time, code, type: 'Control', modem }])
    .expect(200);
}

async function dbTotal(): Promise<number> {
  const res = await request(timing.app).get(`/api/rest/v1/punches?eventId=${eventId}`).expect(200);
  return Number(res.headers['x-total-count']);
}

async function openPage(query = '', viewport = { width: 1280, height: 900 }): Promise<Page> {
  const page = await browser.newPage({ viewport });
  await page.goto(`${base}/events/${eventId}/live${query}`);
  await page.waitForSelector('#connection.live', { timeout: testTime(15_000) });
  return page;
}

const valueOf = (page: Page, selector: string) => page.$eval(selector, (el) => Number((el as HTMLElement).dataset.value));
const feedIds = (page: Page) => page.$$eval('#feed tbody tr', (rows) => rows.map((r) => Number((r as HTMLElement).dataset.id)));

describe('the live page of the demo event', () => {
  it('shows the exact total (X-Total-Count), one row per modem with its punches, and the chart', async () => {
    const page = await openPage();
    try {
      expect(await valueOf(page, '#total')).toBe(await dbTotal());
      expect(await page.textContent('#event-name')).toBe('VeNotte 2020');
      const rows = await page.$$eval('#modems tbody tr', (trs) =>
        trs.map((tr) => ({ serial: (tr as HTMLElement).dataset.serial, punches: Number((tr.children[2] as HTMLElement).dataset.value) })),
      );
      expect(rows).toHaveLength(30);
      const perModem = await timing.database.pool.query<{ modem: string; n: string }>('select modem, count(*) n from punches group by modem');
      for (const r of perModem.rows) expect(rows.find((row) => row.serial === r.modem)?.punches).toBe(Number(r.n));
      expect(await page.$$eval('#feed tbody tr', (trs) => trs.length)).toBe(50);
      expect(await page.$('#chart canvas')).not.toBeNull();
    } finally {
      await page.close();
    }
  });

  it('a punch uploaded through the API appears in the feed', async () => {
    const page = await openPage();
    try {
      const before = await valueOf(page, '#total');
      const sent = Date.now();
      await uploadPunch('2020054', 8_700_001, 54);
      await page.waitForFunction((card) => document.querySelector('#feed tbody tr')?.children[1]?.textContent === card, '8700001', {
        timeout: testTime(15_000),
      });
      testNote(`live page: the uploaded punch appeared after ${Date.now() - sent} ms`);
      expect(await valueOf(page, '#total')).toBe(before + 1);
      expect(await valueOf(page, '#last-minute')).toBeGreaterThanOrEqual(1);
      expect(await page.$eval('#modems tr[data-serial="2020054"]', (tr) => (tr as HTMLElement).dataset.quiet)).toBe('false');
    } finally {
      await page.close();
    }
  });

  it('warns when a modem that was sending goes quiet (threshold set in the page)', async () => {
    const page = await openPage('?quiet=0.05'); // 3 s
    try {
      await uploadPunch('2020056', 8_700_002, 56);
      const row = '#modems tr[data-serial="2020056"]';
      await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.quiet === 'false', row, { timeout: testTime(2_000) });
      // No more uploads from it: within the threshold plus the one-second tick it is flagged.
      await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.quiet === 'true', row, { timeout: testTime(6_000) });
      expect(await page.textContent(`${row} .badge`)).toMatch(/^quiet for (<1|\d+) min$/);
      // The threshold is the page's own: back to 5 minutes, the modem is sending again.
      await page.fill('#quiet-minutes', '5');
      await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.quiet === 'false', row, { timeout: testTime(2_000) });
    } finally {
      await page.close();
    }
  });

  it('reloads in the middle of a stream of uploads without losing or repeating a punch', async () => {
    const page = await openPage();
    try {
      let uploading = true;
      let card = 8_710_000;
      const uploader = (async () => {
        while (uploading) {
          await uploadPunch('2020058', card++, 58);
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
      await new Promise((r) => setTimeout(r, 700));
      await page.reload();
      await page.waitForSelector('#connection.live', { timeout: testTime(15_000) });
      await new Promise((r) => setTimeout(r, 700));
      uploading = false;
      await uploader;
      await waitUntilVisible(timing);
      const total = await dbTotal();
      await page.waitForFunction((n) => Number((document.querySelector('#total') as HTMLElement).dataset.value) === n, total, { timeout: testTime(5_000) });
      // The feed holds the 50 newest ids, each once, newest first: exactly the newest 50 the API has.
      const ids = await feedIds(page);
      const newest = (await timing.database.pool.query<{ id: string }>('select id from punches order by id desc limit 50')).rows.map((r) => Number(r.id));
      expect(ids).toEqual(newest);
      expect(card - 8_710_000).toBeGreaterThan(5);
    } finally {
      await page.close();
    }
  });

  it('fits a phone in one column (screenshots at desktop and phone width, after the uploads above)', async () => {
    mkdirSync(IMAGES, { recursive: true });
    const desktop = await openPage();
    await desktop.screenshot({ path: path.join(IMAGES, 'live-page-desktop.png'), fullPage: true });
    await desktop.close();
    const page = await openPage('', { width: 390, height: 844 });
    try {
      const widths = await page.$$eval('main > section:not([hidden])', (els) => els.map((e) => Math.round(e.getBoundingClientRect().width)));
      expect(new Set(widths.slice(1)).size).toBe(1); // every section below the totals spans the column
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await page.screenshot({ path: path.join(IMAGES, 'live-page-phone.png'), fullPage: false });
    } finally {
      await page.close();
    }
  });

  it('a finished event: modems silent for years are idle (never "quiet for N days"); one time format on the page', async () => {
    const page = await openPage();
    try {
      expect(await page.textContent('#event-window')).toMatch(/finished/);
      const badges = await page.$$eval('#modems tbody tr .badge', (els) => els.map((e) => e.textContent ?? ''));
      expect(badges.filter((b) => b === 'idle').length).toBeGreaterThan(20);
      expect(badges.join(' ')).not.toMatch(/day/);
      // Every time on the page ends in the one hour:minute:second shape of the browser's locale.
      const shape = (t: string) => t.replace(/\d/g, '9').replace(/\b[AP]M\b/, 'XM');
      const timeShape = shape(
        await page.evaluate(() => new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', timeZone: 'UTC' }).format(0)),
      );
      const cells = await page.$$eval('#feed tbody tr td:nth-child(5), #modems tbody tr td:nth-child(4), #modems tbody tr td:nth-child(5)', (tds) =>
        tds.map((td) => td.textContent ?? ''),
      );
      const times = cells.filter((t) => t !== '—' && !/ ago$/.test(t));
      expect(times.length).toBeGreaterThan(50);
      expect(times.filter((t) => !shape(t).endsWith(timeShape))).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

describe('an event of 100,000 punches', () => {
  it(
    'loads and stays responsive: the status is one bounded read, the page renders 50 feed rows and a per-minute chart',
    async () => {
      const owner = await timing.createUser('big-organiser');
      const modems = Array.from({ length: 60 }, (_, i) => String(6_000_001 + i));
      const start = Date.UTC(2026, 5, 1, 9);
      for (let batch = 0; batch < 10; batch++) {
        const punches = Array.from({ length: 10_000 }, (_, j) => {
          const i = batch * 10_000 + j;
          return { card: String(1_000_000 + (i % 5000)), time: start + i * 300, code: 31 + (i % 60), type: 'Control', modem: modems[i % 60] };
        });
        await request(timing.app).post('/api/rest/v1/punches').set('apikey', owner.key).send(punches).expect(200);
      }
      const ev = await request(timing.app).post('/api/rest/v1/events').set('apikey', owner.key).send({ name: 'Big', public: true, modems }).expect(201);
      await waitUntilVisible(timing);
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      try {
        const opened = Date.now();
        await page.goto(`${base}/events/${ev.body.id}/live`);
        await page.waitForSelector('#connection.live', { timeout: testTime(15_000) });
        const loadMs = Date.now() - opened;
        expect(await valueOf(page, '#total')).toBe(100_000);
        expect(await page.$$eval('#modems tbody tr', (trs) => trs.length)).toBe(60);
        // Responsive: a round trip into the page's main thread while it is live.
        const t0 = Date.now();
        await page.evaluate(() => 1);
        const roundTripMs = Date.now() - t0;
        testNote(`live page, 100,000 punches: live after ${loadMs} ms, main-thread round trip ${roundTripMs} ms`);
      } finally {
        await page.close();
      }
    },
    testTime(120_000),
  );
});

describe('a private event', () => {
  it('asks for a key (a private event answers as a missing one), refuses another user’s key, opens with the owner’s key', async () => {
    const owner = await timing.createUser('private-organiser');
    const stranger = await timing.createUser('stranger');
    await request(timing.app)
      .post('/api/rest/v1/punches')
      .set('apikey', owner.key)
      .send([{ card: '8700100', time: Date.UTC(2026, 10, 24, 10), code: 31, type: 'Control', modem: '5000001' }])
      .expect(200);
    const ev = await request(timing.app)
      .post('/api/rest/v1/events')
      .set('apikey', owner.key)
      .send({ name: 'Club training', public: false, modems: ['5000001'] })
      .expect(201);
    const page = await browser.newPage();
    try {
      await page.goto(`${base}/events/${ev.body.id}/live`);
      await page.waitForSelector('#key-form-section:not([hidden])');
      expect(await page.textContent('#key-message')).toMatch(/private/);
      await page.fill('#api-key', stranger.key);
      await page.keyboard.press('Enter');
      await page.waitForSelector('#key-message:has-text("does not give access")');
      await page.fill('#api-key', owner.key);
      await page.keyboard.press('Enter');
      await page.waitForSelector('#connection.live', { timeout: testTime(15_000) });
      expect(await valueOf(page, '#total')).toBe(1);
      // The key is kept in this tab's session only.
      expect(
        await page.evaluate(() =>
          (globalThis as unknown as { sessionStorage: { getItem(k: string): string | null } }).sessionStorage.getItem('timing-live-apikey'),
        ),
      ).toBe(owner.key);
      expect(await page.evaluate(() => (globalThis as unknown as { localStorage: { length: number } }).localStorage.length)).toBe(0);
    } finally {
      await page.close();
    }
  });
});
