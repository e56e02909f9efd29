/**
 * The organiser's console (`/console` of the timing service) in a real browser (Debian's Chromium driven by
 * playwright-core): a club from nothing to a live event. The admin creates the club; the club signs in,
 * makes a key, creates an event with modems (after the API's messages for a bad serial and a window that
 * ends before it starts, shown beside their fields); a punch uploaded as a modem would appears in the open
 * live view, then `pnpm punches replay` uploads a real five-minute file and the view counts every punch; the
 * CSV download holds them all; the client settings name this server and the event; another club's modem is
 * refused with the API's words; the keys list when each key was last used ("never" for a new one); a revoked
 * key stops working (and its sign-in shows the API's message); a
 * private event is refused to another club. Every view is checked with axe-core (no serious or critical
 * violation) and photographed into `test-output/console/`.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import request from 'supertest';
import { testTime } from '@sports-timing/shared/src/test-time';
import { OUTPUT, seriousViolations, shot, signIn, startConsoleRig, type ConsoleRig } from './support/console-browser';
import type { components } from '../services/timing/src/generated/openapi';

const run = promisify(execFile);
const ROOT = path.join(__dirname, '..');
const FILE = path.join(ROOT, 'test/live/fixtures/venotte2020-1900-1905.csv');
const CLI = path.join(ROOT, 'packages/cli/bin/punches.cjs');

/** The DOM shapes the page functions below use (the project's type-check has no DOM library). */
interface El {
  dataset: Record<string, string | undefined>;
  textContent: string | null;
}
declare const document: { querySelector(selector: string): El | null };

let rig: ConsoleRig;
let page: Page;
let clubKey = '';
let meosKey = '';
let eventId = 0;
let modems: string[] = [];

beforeAll(async () => {
  rig = await startConsoleRig();
  page = await rig.browser.newPage({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  page.setDefaultTimeout(testTime(10_000));
  page.on('dialog', (d) => void d.accept());
  modems = JSON.parse((await run(process.execPath, [CLI, 'replay', FILE, '--modem-base', '3000000', '--list-modems'])).stdout) as string[];
}, testTime(120_000));
afterAll(async () => {
  await page?.close();
  await rig?.close();
});

async function accessible(name: string): Promise<void> {
  await shot(page, name);
  expect(await seriousViolations(page)).toEqual([]);
}

/** The local wall clock (ms as if UTC) as a `datetime-local` value, `offsetMs` from now. */
function localInput(offsetMs: number): string {
  return new Date(Date.now() - new Date().getTimezoneOffset() * 60_000 + offsetMs).toISOString().slice(0, 19);
}

const value = (selector: string) => page.$eval(selector, (el) => Number((el as unknown as El).dataset.value));

describe('a club from nothing to a live event', () => {
  it('the admin signs in and creates the club with its first key', async () => {
    await page.goto(`${rig.base}/console`);
    await accessible('01-sign-in');
    await signIn(page, rig.base, rig.timing.adminKey);
    expect(await page.textContent('#who')).toBe('admin (admin)');
    await page.click('#nav-users');
    await page.fill('#user-name', 'ok lagune');
    await page.click('#user-form button[type=submit]');
    // The API's message, next to the field it names.
    await page.waitForSelector('#user-name-error');
    expect(await page.getAttribute('#user-name', 'aria-invalid')).toBe('true');
    expect(await page.textContent('#user-name-error')).toMatch(/pattern/);
    await page.fill('#user-name', 'ok-lagune');
    await page.fill('#user-key-name', 'timing laptop');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#new-user-key');
    clubKey = (await page.textContent('#new-user-key')) ?? '';
    expect(clubKey).toMatch(/^tk_/);
    expect(await page.$$eval('#users tbody tr', (rows) => rows.map((r) => (r as unknown as El).textContent))).toEqual(
      expect.arrayContaining([expect.stringContaining('ok-lagune')]),
    );
    await accessible('02-admin-users');
    await page.click('#sign-out');
    await page.waitForSelector('#sign-in-key');
  });

  it('the club signs in and makes a key for its MeOS computer, by keyboard alone', async () => {
    // The key field has the focus on arrival; each view puts the focus on its content, so Shift+Tab walks back
    // to the navigation and Tab on into the forms; Enter follows a link and submits.
    await page.keyboard.type(clubKey);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#nav:not([hidden])');
    expect(await page.textContent('#who')).toBe('ok-lagune');
    expect(await page.isHidden('#nav-users')).toBe(true);
    const focused = () => page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string } | null } }).document.activeElement?.id);
    for (let i = 0; i < 10 && (await focused()) !== 'nav-keys'; i++) await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('nav-keys');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#key-name');
    for (let i = 0; i < 10 && (await focused()) !== 'key-name'; i++) await page.keyboard.press('Tab');
    expect(await focused()).toBe('key-name');
    await page.keyboard.type('MeOS');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#new-key-value');
    meosKey = (await page.textContent('#new-key-value')) ?? '';
    expect(meosKey).toMatch(/^tk_/);
    // Listed before anything used it: never used.
    expect(await page.textContent('#keys tbody tr:has-text("MeOS") td.last-used')).toBe('never');
    await request(rig.base).get('/api/rest/v1/keys').set('apikey', meosKey).expect(200);
    await page.waitForSelector('#keys tbody tr:nth-child(2)');
    await accessible('03-keys');
    // The key is in this tab's session only: not in the address, not in localStorage.
    expect(page.url()).not.toContain('tk_');
    expect(await page.evaluate(() => (globalThis as unknown as { localStorage: { length: number } }).localStorage.length)).toBe(0);
  });

  it('creates the event: the API refuses a bad serial and a window that ends before it starts, beside the fields', async () => {
    await page.click('#nav-events');
    await page.waitForSelector('#new-form');
    await page.fill('#new-name', 'Club night');
    await page.fill('#new-modems', `${modems.join(', ')}, Control 53`);
    await page.click('#new-form button[type=submit]');
    await page.waitForSelector('#new-modems-error');
    expect(await page.textContent('#new-modems-error')).toMatch(/pattern/);
    await shot(page, '04-event-bad-modem');
    await page.fill('#new-modems', modems.join(', '));
    await page.fill('#new-from', localInput(3_600_000));
    await page.fill('#new-to', localInput(-3_600_000));
    await page.click('#new-form button[type=submit]');
    await page.waitForSelector('#new-to-error');
    expect(await page.textContent('#new-to-error')).toBe('must not be before from');
    expect(await page.textContent('#new-form .form-error')).toBe('The window ends before it starts.');
    expect(await page.$('#new-modems-error')).toBeNull();
    await accessible('05-event-bad-window');
    await page.fill('#new-from', localInput(-3_600_000));
    await page.fill('#new-to', localInput(3_600_000));
    await page.click('#new-form button[type=submit]');
    await page.waitForURL(/#\/events\/\d+$/);
    eventId = Number(/(\d+)$/.exec(page.url())![1]);
    await page.waitForSelector('#connection.live');
    const ev = await request(rig.base).get(`/api/rest/v1/events/${eventId}`).expect(200);
    expect(ev.body).toMatchObject({ name: 'Club night', public: true, owner: 'ok-lagune', modems: [...modems].sort() });
  });

  it('shows the punches of `pnpm punches replay` arriving, and the modems sending', async () => {
    expect(await value('#total')).toBe(0);
    // One punch as a modem uploads it, now: the open page shows it arriving (no reload).
    const now = Date.now() - new Date().getTimezoneOffset() * 60_000;
    await request(rig.base)
      .post('/api/rest/v1/punches')
      .set('apikey', meosKey)
      .send([{ card: '8000001', time: now, code: 53, type: 'Control', modem: '3000053' }])
      .expect(200);
    await page.waitForSelector('#feed tbody tr[data-id] >> text=8000001', { timeout: testTime(10_000) });
    expect(await value('#total')).toBe(1);
    await shot(page, '06-live-first-punch');
    const { stdout } = await run(process.execPath, [
      CLI,
      'replay',
      FILE,
      '--modem-base',
      '3000000',
      '--now',
      '--speed',
      '60',
      '--url',
      rig.base,
      '--key',
      meosKey,
    ]);
    expect(stdout).toMatch(/sent 475, stored 475, duplicates 0, rejected 0/);
    await page.waitForFunction(() => Number(document.querySelector('#total')?.dataset.value) === 476, undefined, { timeout: testTime(20_000) });
    expect(await page.$$eval('#feed tbody tr', (rows) => rows.length)).toBe(50);
    await page.waitForSelector('#client-settings');
    await accessible('07-event-live');
    await page.click('#nav-modems');
    await page.waitForSelector('#modem-list');
    const sending = await page.$$eval('#modem-list tbody tr', (rows) => rows.map((r) => (r as unknown as El).dataset.sending));
    expect(sending).toHaveLength(modems.length);
    expect(sending.every((s) => s === 'true')).toBe(true);
    expect(await page.textContent('#modem-list tbody tr')).toContain(`Club night (${eventId})`);
    await accessible('08-modems');
  });

  it('downloads the punches as CSV (all 476) and JSON, gives each client its settings, edits the event', async () => {
    await page.goto(`${rig.base}/console#/events/${eventId}`);
    await page.waitForSelector('#client-settings');
    const [csv] = await Promise.all([page.waitForEvent('download'), page.click('#download-csv')]);
    await csv.saveAs(path.join(OUTPUT, 'event-punches.csv'));
    const lines = readFileSync(path.join(OUTPUT, 'event-punches.csv'), 'utf8').trim().split('\n');
    expect(lines[0]).toMatch(/^id,/);
    expect(lines).toHaveLength(477);
    const [json] = await Promise.all([page.waitForEvent('download'), page.click('#download-json')]);
    await json.saveAs(path.join(OUTPUT, 'event-punches.json'));
    expect(JSON.parse(readFileSync(path.join(OUTPUT, 'event-punches.json'), 'utf8'))).toHaveLength(476);
    const origin = await page.inputValue('#server-origin');
    expect(await page.textContent('#setting-meos-center')).toContain(`URL: ${origin}/api/rest/v1/punches\nEvent id: ${eventId}`);
    expect(await page.textContent('#setting-meos-roc')).toBe(`URL: ${origin}/getpunches.asp\nCompetition id: ${eventId}`);
    expect(await page.textContent('#setting-sirap')).toContain(`-Modem ${[...modems].sort().join(',')}`);
    await page.click('#key-for-radiosender');
    await page.waitForFunction(() => /"ApiKey": "tk_/.test(document.querySelector('#setting-radiosender')?.textContent ?? ''));
    const radioKey = /"ApiKey": "(tk_[^"]+)"/.exec((await page.textContent('#setting-radiosender')) ?? '')![1];
    await request(rig.base).get(`/api/rest/v1/public/events/${eventId}/punches?projection=simple&afterId=0&limit=1`).set('apikey', radioKey).expect(200);
    // Edit: a new name and an end before the start are judged by putEvent as on creation.
    await page.click('details summary');
    await page.fill(`#edit-${eventId}-name`, 'Club night (final)');
    await page.fill(`#edit-${eventId}-to`, '2020-01-01T00:00:00');
    await page.click(`#edit-${eventId}-form button[type=submit]`);
    await page.waitForSelector(`#edit-${eventId}-to-error`);
    expect(await page.textContent(`#edit-${eventId}-to-error`)).toBe('must not be before from');
    await page.fill(`#edit-${eventId}-to`, localInput(3_600_000));
    await page.click(`#edit-${eventId}-form button[type=submit]`);
    await page.waitForSelector('#event-name:has-text("Club night (final)")');
    expect((await request(rig.base).get(`/api/rest/v1/events/${eventId}`).expect(200)).body.name).toBe('Club night (final)');
    await page.waitForSelector('#connection.live');
    expect(await value('#total')).toBe(476);
    // A phone: one column, nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await shot(page, '07-event-phone');
    expect(
      await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth),
    ).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('revokes a key: it stops working, and signing in with it shows the API’s message', async () => {
    await page.click('#nav-keys');
    await page.waitForSelector('#keys tbody tr');
    // The MeOS key uploaded a punch and read the keys in the steps before: used within the last minutes.
    await rig.timing.keyUses.settled();
    const used = await request(rig.base).get('/api/rest/v1/keys').set('apikey', clubKey).expect(200);
    const meos = (used.body as components['schemas']['ApiKey'][]).find((k) => k.name === 'MeOS')!;
    expect(meos.lastUsedAt).toEqual(expect.any(String));
    const lastUsedCell = '#keys tbody tr:has-text("MeOS") td.last-used';
    await page.click('#nav-events');
    await page.click('#nav-keys');
    await page.waitForSelector(`${lastUsedCell} time[datetime="${meos.lastUsedAt}"]`);
    expect(await page.textContent(lastUsedCell)).toMatch(/^(just now|\d+ min ago)$/);
    await page.click('#keys tbody tr:has-text("MeOS") button.danger');
    await page.waitForSelector('#keys tbody tr[data-revoked="true"]:has-text("MeOS")');
    // A revoked key still says when it was last used.
    expect(await page.getAttribute(`${lastUsedCell} time`, 'datetime')).toBe(meos.lastUsedAt);
    const refused = await request(rig.base).get('/api/rest/v1/keys').set('apikey', meosKey).expect(401);
    await accessible('09-key-revoked');
    await page.click('#sign-out');
    await page.fill('#sign-in-key', meosKey);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#sign-in-key-error');
    expect(await page.textContent('#sign-in-key-error')).toBe(refused.body.detail);
    expect(await page.getAttribute('#sign-in-key', 'aria-invalid')).toBe('true');
    expect(await page.isVisible('#nav')).toBe(false);
    await shot(page, '10-revoked-sign-in');
  });

  it('a private event is refused to another club (as a missing one), and readable by its own', async () => {
    await signIn(page, rig.base, clubKey);
    await page.click('#nav-events');
    await page.waitForSelector('#new-form');
    await page.fill('#new-name', 'Training');
    await page.uncheck('#new-public');
    expect(await page.textContent('#new-public-hint')).toMatch(/only ok-lagune's keys and the server's admins/);
    // A serial MeOS's modem mode cannot use is stored, and the panel shows the API's warning about it.
    await page.fill('#new-modems', '3000031, SRR-A1');
    await page.click('#new-form button[type=submit]');
    await page.waitForURL(/#\/events\/\d+$/);
    const privateId = Number(/(\d+)$/.exec(page.url())![1]);
    await page.waitForSelector('#connection.live');
    const created = await request(rig.base)
      .put(`/api/rest/v1/events/${privateId}`)
      .set('apikey', clubKey)
      .send({ name: 'Training', public: false, modems: ['3000031', 'SRR-A1'] })
      .expect(200);
    expect(await page.textContent('#event-warnings')).toBe(created.body.warnings.join(''));
    expect(await page.textContent('#event-warnings')).toMatch(/MeOS's modem mode .* SRR-A1/);
    expect(await page.textContent('#event-window')).toMatch(/private/);
    const other = await rig.timing.createUser('ok-other');
    await page.click('#sign-out');
    await signIn(page, rig.base, other.key);
    await page.goto(`${rig.base}/console#/events/${privateId}`);
    await page.waitForSelector('#view .form-error');
    expect(await page.textContent('#view .form-error')).toBe(`No event ${privateId}.`);
    await accessible('11-private-refused');
    // Another club's modem in an event: accepted (naming claims nothing), and the event shows none of its punches.
    await page.click('#nav-events');
    await page.waitForSelector('#new-form');
    await page.fill('#new-name', 'Borrowed modem');
    await page.fill('#new-modems', '3000053');
    await page.click('#new-form button[type=submit]');
    await page.waitForURL(/#\/events\/\d+$/);
    const borrowedId = Number(/(\d+)$/.exec(page.url())![1]);
    await page.waitForSelector('#connection.live');
    const borrowed = await request(rig.base)
      .get(`/api/rest/v1/punches?eventId=${borrowedId}`)
      .set('apikey', other.key)
      .set('accept', 'application/json')
      .expect(200);
    expect(borrowed.body).toEqual([]);
    const own = await request(rig.base).get('/api/rest/v1/punches?modem=3000053').set('apikey', clubKey).set('accept', 'application/json').expect(200);
    expect(own.body.length).toBeGreaterThan(0);
    await shot(page, '12-modem-of-another-club');
    await request(rig.base).get(`/api/rest/v1/punches?eventId=${privateId}`).set('apikey', other.key).expect(404);
    await request(rig.base).get(`/api/rest/v1/punches?eventId=${privateId}`).set('apikey', clubKey).expect(200);
  });
});

describe('the console page itself', () => {
  it('is served with the strict CSP, no inline script, and names the server by the request’s Host', async () => {
    const res = await request(rig.base).get('/console').expect(200);
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.text).not.toMatch(/<script>(?!<)/);
    expect(res.text).toMatch(/<script src="\/console\/app.js"><\/script>/);
    const named = await request(rig.base).get('/console/server.json').set('Host', 'timing.ok-lagune.example:8081').expect(200);
    expect(named.body.origins).toEqual(['http://timing.ok-lagune.example:8081']);
    // Forwarded headers count only from a trusted proxy (none here): the Host stays.
    const forwarded = await request(rig.base).get('/console/server.json').set('Host', 'a.example').set('X-Forwarded-Host', 'evil.example').expect(200);
    expect(forwarded.body.origins).toEqual(['http://a.example']);
    // The organiser on the server itself (loopback Host, loopback caller): the LAN addresses first, then its own.
    const here = await request(rig.base).get('/console/server.json').set('Host', '127.0.0.1:8081').expect(200);
    expect(here.body.origins[here.body.origins.length - 1]).toBe('http://127.0.0.1:8081');
    expect(here.body.origins.slice(0, -1).every((o: string) => /^http:\/\/\d+\.\d+\.\d+\.\d+:8081$/.test(o) && !o.startsWith('http://127.'))).toBe(true);
  });
});
