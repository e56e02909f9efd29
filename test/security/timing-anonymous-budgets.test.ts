/**
 * OWASP API4 (unrestricted resource consumption) on the timing service's anonymous reads (timing spec "Limits",
 * `getRocPunches`): ROC reads and whole downloads (reads without `afterId`) without a key are budgeted per
 * client address — the address `TRUSTED_PROXIES` name, never a header an untrusted client sets — with 429 and
 * `Retry-After` beyond; polls with `afterId` and reads with a key are not counted. Real HTTP on listening apps,
 * real PostgreSQL; in production the budgets are on by default.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { createLogger } from '@sports-timing/shared';
import { createApp } from '../../services/timing/src/app';
import { loadTimingConfig } from '../../services/timing/src/config';
import { localMs, startTiming, upload, type TimingTestContext } from '../../services/timing/test/helpers';

jest.setTimeout(60_000);

const BUDGET = 3;
let t: TimingTestContext;
let ownerKey: string;
let eventId: number;
const servers: Server[] = [];

/** A listening app on the test database with budgets of {@link BUDGET}; `trusted` proxies when given. */
async function listen(trusted: string[] | undefined, prefix: string): Promise<string> {
  const app = createApp({
    database: t.database,
    logger: createLogger('budget-test'),
    validateResponses: true,
    trustedProxies: trusted,
    rateLimit: { keyReadsPerMinute: 0, anonymousRocReadsPerMinute: BUDGET, anonymousDownloadsPerMinute: BUDGET, prefix },
  });
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((r) => server.once('listening', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function get(url: string, headers: Record<string, string> = {}): Promise<Response> {
  const res = await fetch(url, { headers });
  await res.arrayBuffer();
  return res;
}

/** Statuses of `n` GETs of `url` with `headers`, one after the other. */
async function statuses(n: number, url: string, headers: Record<string, string> = {}): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await get(url, headers)).status);
  return out;
}

beforeAll(async () => {
  t = await startTiming();
  ownerKey = (await t.createUser('budgeted')).key;
  await upload(t, ownerKey, [{ card: '1001', time: localMs(9), code: 31, type: 'Control', modem: 'BUDGET-1' }]);
  const ev = await request(t.app)
    .post('/api/rest/v1/events')
    .set('apikey', ownerKey)
    .send({ name: 'Budget cup', public: true, modems: ['BUDGET-1'] });
  expect(ev.status).toBe(201);
  eventId = (ev.body as { id: number }).id;
});
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  await t?.close();
});

test('production turns the budgets on by default; elsewhere they are off unless set', () => {
  expect(loadTimingConfig({ APP_ENV: 'production' })).toMatchObject({ anonymousRocReadsPerMinute: 120, anonymousDownloadsPerMinute: 60 });
  expect(loadTimingConfig({})).toMatchObject({ anonymousRocReadsPerMinute: 0, anonymousDownloadsPerMinute: 0 });
  expect(loadTimingConfig({ TIMING_ANONYMOUS_ROC_READS_PER_MINUTE: '5' }).anonymousRocReadsPerMinute).toBe(5);
});

describe('behind a trusted proxy', () => {
  let base: string;
  beforeAll(async () => {
    base = await listen(['127.0.0.1'], `budget-${process.pid}-a`);
  });
  const from = (ip: string) => ({ 'X-Forwarded-For': ip });

  test('anonymous ROC reads: the budget, then 429 with Retry-After in the ProblemDetails shape; another address has its own', async () => {
    const url = `${base}/getpunches.asp?unitId=${eventId}&lastId=0`;
    expect(await statuses(BUDGET, url, from('198.51.100.1'))).toEqual(Array(BUDGET).fill(200));
    const refused = await fetch(url, { headers: from('198.51.100.1') });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(await refused.json()).toMatchObject({ status: 429, detail: expect.stringContaining('ROC reads') });
    expect((await get(url, from('198.51.100.2'))).status).toBe(200);
    // With a key the read is the key's, not the address's.
    expect((await get(`${base}/roc/key/${ownerKey}/getpunches.asp?unitId=${eventId}&lastId=0`, from('198.51.100.1'))).status).toBe(200);
  });

  test.each([
    ['getPunches (fast lane)', () => `${base}/api/rest/v1/punches?eventId=${eventId}`, {}],
    ['getPunches with afterId=0, as CSV', () => `${base}/api/rest/v1/punches?eventId=${eventId}&afterId=0`, { Accept: 'text/csv' }],
    ['getPublicEventPunches', () => `${base}/api/rest/v1/public/events/${eventId}/punches`, {}],
  ])('anonymous whole downloads of %s: the budget, then 429; polls with afterId go on', async (name, url, extra: Record<string, string>) => {
    const ip = `203.0.113.${name.length}`;
    expect(await statuses(BUDGET + 1, url(), { ...from(ip), ...extra })).toEqual([...Array(BUDGET).fill(200), 429]);
    const poll = url().includes('?') ? `${url().replace(/&afterId=0/, '')}&afterId=1` : `${url()}?afterId=1`;
    expect(await statuses(BUDGET + 1, poll, { ...from(ip), ...extra })).toEqual(Array(BUDGET + 1).fill(200));
    expect((await get(url(), { ...from(ip), ...extra, apikey: ownerKey })).status).toBe(200);
  });

  test('a stream without afterId and Last-Event-ID counts as a whole download; a resuming one does not', async () => {
    const ip = '192.0.2.77';
    const open = async (headers: Record<string, string>) => {
      const ac = new AbortController();
      const res = await fetch(`${base}/api/rest/v1/punches/stream?eventId=${eventId}`, {
        headers: { Accept: 'text/event-stream', ...from(ip), ...headers },
        signal: ac.signal,
      });
      ac.abort();
      return res.status;
    };
    const got: number[] = [];
    for (let i = 0; i <= BUDGET; i++) got.push(await open({}));
    expect(got).toEqual([...Array(BUDGET).fill(200), 429]);
    expect(await open({ 'Last-Event-ID': '1' })).toBe(200);
  });
});

test('without TRUSTED_PROXIES a forged X-Forwarded-For does not escape the budget', async () => {
  const base = await listen(undefined, `budget-${process.pid}-b`);
  const url = `${base}/getpunches.asp?unitId=${eventId}&lastId=0`;
  const got: number[] = [];
  for (let i = 0; i <= BUDGET; i++) got.push((await get(url, { 'X-Forwarded-For': `198.51.100.${100 + i}` })).status);
  expect(got).toEqual([...Array(BUDGET).fill(200), 429]);
});
