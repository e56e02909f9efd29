/**
 * `/metrics` of both services after real activity shows what operations needs: request counts and latency
 * histograms per operation, pool usage (total/idle/waiting/max), punches ingested (committed rows, duplicates
 * excluded), live connections (a held long-poll counts while it waits), and the ordering outbox backlog
 * (per kind, with the age of the oldest waiting message) — each with values, not just declared.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTiming, type TimingTestContext } from '../../services/timing/test/helpers';
import { orderBody, postOrder, startShop, type TestShop } from '../../services/ordering/test/support/orders';
import { testTime } from '@sports-timing/shared/src/test-time';

jest.setTimeout(testTime(120_000));

/** Value of one sample in Prometheus text format, e.g. `sample(text, 'live_connections')`; undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[3] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[4]);
  }
  return undefined;
}

describe('timing', () => {
  let ctx: TimingTestContext;
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    ctx = await startTiming();
    server = http.createServer(ctx.app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await ctx.close();
  });
  const scrape = async () => (await fetch(`${base}/metrics`)).text();
  const upload = (body: unknown) =>
    fetch(`${base}/api/rest/v1/punches`, { method: 'POST', headers: { apikey: ctx.adminKey, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

  test('punches ingested, live connections, per-operation requests and latency, pool usage', async () => {
    const punches = Array.from({ length: 5 }, (_, i) => ({
      card: String(500 + i),
      time: 1_600_000_000_000 + i * 1000,
      code: 31,
      type: 'Control',
      modem: 'MET-1',
    }));
    expect((await upload(punches)).status).toBe(200);
    // Two of these are re-sent duplicates: only the 3 new rows are ingested.
    const again = [
      ...punches.slice(3),
      ...Array.from({ length: 3 }, (_, i) => ({ card: String(600 + i), time: 1_600_000_100_000 + i, code: 31, type: 'Control', modem: 'MET-1' })),
    ];
    expect(await (await upload(again)).json()).toMatchObject({ stored: 3, duplicates: 2 });

    let text = await scrape();
    expect(sample(text, 'punches_ingested_total')).toBe(8);
    expect(sample(text, 'live_connections')).toBe(0);
    expect(sample(text, 'live_connections_max')).toBeGreaterThan(0);

    // A long-poll for a modem with nothing new is held: it counts while it waits.
    const held = fetch(`${base}/api/rest/v1/punches?modem=MET-2&afterId=0&wait=20`, { headers: { apikey: ctx.adminKey } });
    const deadline = Date.now() + testTime(10_000);
    while (sample(await scrape(), 'live_connections') !== 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(sample(await scrape(), 'live_connections')).toBe(1);
    expect((await upload([{ card: '700', time: 1_600_000_200_000, code: 31, type: 'Control', modem: 'MET-2' }])).status).toBe(200);
    const answered = await held;
    expect(((await answered.json()) as unknown[]).length).toBe(1);

    text = await scrape();
    expect(sample(text, 'live_connections')).toBe(0);
    expect(sample(text, 'punches_ingested_total')).toBe(9);
    expect(sample(text, 'http_requests_total', { operation: 'postPunches', method: 'POST', status: '200' })).toBe(3);
    expect(sample(text, 'http_requests_total', { operation: 'getPunches', method: 'GET', status: '200' })).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_count', { operation: 'postPunches', method: 'POST' })).toBe(3);
    expect(sample(text, 'http_request_duration_seconds_bucket', { operation: 'postPunches', method: 'POST', le: '+Inf' })).toBe(3);
    expect(sample(text, 'db_pool_connections_total')).toBeGreaterThan(0);
    expect(sample(text, 'db_pool_connections_idle')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'db_pool_requests_waiting')).toBe(0);
    expect(sample(text, 'db_pool_connections_max')).toBeGreaterThan(0);
  });
});

describe('ordering', () => {
  let shop: TestShop;
  beforeAll(async () => {
    shop = await startShop();
  });
  afterAll(async () => {
    await shop.close();
  });

  test('outbox backlog by kind with the age of the oldest message, order requests, pool usage', async () => {
    let text = await (await fetch(`${shop.url}/metrics`)).text();
    expect(sample(text, 'outbox_backlog_messages', { kind: 'mail' })).toBeUndefined();
    // No dispatcher runs in this app: the confirmation mail stays in the outbox.
    const res = await postOrder(shop, orderBody());
    expect(res.status).toBe(200);
    await new Promise((r) => setTimeout(r, 1100));
    text = await (await fetch(`${shop.url}/metrics`)).text();
    expect(sample(text, 'outbox_backlog_messages', { kind: 'mail' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'outbox_dead_messages', { kind: 'mail' })).toBe(0);
    expect(sample(text, 'outbox_oldest_pending_age_seconds', { kind: 'mail' })).toBeGreaterThan(1);
    expect(sample(text, 'http_requests_total', { operation: 'createShopOrder', method: 'POST', status: '200' })).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_count', { operation: 'createShopOrder', method: 'POST' })).toBe(1);
    expect(sample(text, 'db_pool_connections_total')).toBeGreaterThan(0);
    expect(sample(text, 'metrics_collect_errors_total', { metric: 'outbox_backlog_messages' })).toBeUndefined();
  });
});
