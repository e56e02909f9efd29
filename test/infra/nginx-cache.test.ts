/**
 * The checked-in nginx cache (infra/nginx/timing-cache.conf, infra/README.md "nginx cache") in front of a real
 * timing instance (its own pool, LISTEN session and HTTP server on a real PostgreSQL): Debian's nginx started
 * by test/support/nginx.ts. The instance's HTTP server counts every request that reaches it (the origin), so
 * what the cache kept is measured, not assumed:
 * (a) identical polls of a public event, concurrent and sequential, reach the service about once per cache
 *     period (`max-age`), and keyed polls every time (negative control);
 * (b) an answer read with a key is never served to another caller nor to an anonymous one;
 * (c) pollers following an event with `afterId` through nginx while punches are uploaded see every punch
 *     exactly once; long-polls through it are never collapsed;
 * (d) an SSE stream through nginx receives punches live, and the service sees the client in X-Forwarded-For;
 * (e) a stored page older than `max-age` + `stale-while-revalidate` is never served, however the cache is asked.
 *
 * Needs Debian's nginx (`apt-get install nginx-light`; `.ci/run` installs it). Without it the tests are
 * reported as skipped locally, and fail in CI (`CI=true`).
 */
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDatabase, createLogger, type Database } from '@sports-timing/shared';
import { testNote } from '@sports-timing/shared/src/testing';
import { createApp } from '../../services/timing/src/app';
import type { DB } from '../../services/timing/src/db/schema';
import type { LiveHub } from '../../services/timing/src/live/hub';
import { composeTiming } from '../../services/timing/src/composition';
import { startPunchListener, type PunchListener } from '../../services/timing/src/live/listener';
import { PUNCH_SESSION_SETTINGS } from '../../services/timing/src/punches/punches.repository';
import { startTiming, waitUntilVisible, type TestUser, type TimingTestContext } from '../../services/timing/test/helpers';
import { NGINX_BIN, startNginxCache, type NginxCache } from '../support/nginx';
import { testConnectTimeoutMs } from '@sports-timing/shared/src/test-time';

jest.setTimeout(120_000);

const haveNginx = existsSync(NGINX_BIN);

if (!haveNginx && process.env.CI === 'true') {
  test('nginx is installed (CI)', () => {
    throw new Error(`${NGINX_BIN} is missing: apt-get install -y nginx-light (.ci/run does this)`);
  });
}
if (!haveNginx && process.env.CI !== 'true') {
  testNote(`nginx cache tests skipped: ${NGINX_BIN} is missing (apt-get install -y nginx-light)`);
}

const logger = createLogger('nginx-cache-test');

/** A request that reached the service. */
interface OriginRequest {
  method: string;
  url: string;
  keyed: boolean;
  forwardedFor: string | undefined;
}

let ctx: TimingTestContext;
let database: Database<DB>;
let hub: LiveHub;
let listener: PunchListener;
let server: http.Server;
let nginx: NginxCache;
let owner: TestUser;
let stranger: TestUser;
let publicEvent: number;
let privateEvent: number;
const origin: OriginRequest[] = [];

/** Requests that reached the service for `url` (path and query exactly) since `from`. */
const reached = (url: string, from = 0) => origin.slice(from).filter((r) => r.url === url);

let seq = 0;
function punches(modem: string, n: number) {
  return Array.from({ length: n }, () => ({
    card: String(700_000 + (seq % 89)),
    time: 1_580_600_000_000 + seq++ * 1000,
    code: 31 + (seq % 40),
    type: 'Control',
    modem,
  }));
}

/** A request through nginx. */
function viaNginx(pathAndQuery: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${nginx.url}${pathAndQuery}`, init);
}

/** Uploads `batch` with `key` through nginx (POST passes through); returns the stored count. */
async function upload(key: string, batch: object[]): Promise<number> {
  const res = await viaNginx('/api/rest/v1/punches', {
    method: 'POST',
    headers: { apikey: key, 'Content-Type': 'application/json' },
    body: JSON.stringify(batch),
  });
  if (res.status !== 200) throw new Error(`upload: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { stored: number }).stored;
}

/** Ids of the punches of `modems` in the database (committed), ascending. */
async function storedIds(modems: string[]): Promise<number[]> {
  const { rows } = await database.pool.query<{ id: string }>('select id from timing.punches where modem = any($1) order by id', [modems]);
  return rows.map((r) => Number(r.id));
}

(haveNginx ? describe : describe.skip)('nginx cache in front of a timing instance', () => {
  beforeAll(async () => {
    ctx = await startTiming();
    database = createDatabase<DB>({
      connectTimeoutMs: testConnectTimeoutMs(),
      url: ctx.testDb.url,
      schema: 'timing',
      logger,
      max: 20,
      settings: PUNCH_SESSION_SETTINGS,
    });
    const composed = composeTiming({ database, logger, trustedProxies: ['127.0.0.1'], sseHeartbeatMs: 1000 });
    hub = composed.live;
    listener = startPunchListener(database.url, composed, logger);
    await listener.ready;
    const app = createApp(composed);
    server = http.createServer((req, res) => {
      origin.push({
        method: req.method ?? '',
        url: req.url ?? '',
        keyed: Boolean(req.headers.apikey),
        forwardedFor: req.headers['x-forwarded-for'] as string | undefined,
      });
      app(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    nginx = await startNginxCache(`127.0.0.1:${(server.address() as AddressInfo).port}`);
    owner = await ctx.createUser('nginx-owner');
    stranger = await ctx.createUser('nginx-stranger');
    const created = async (body: object) =>
      (
        (await (
          await viaNginx('/api/rest/v1/events', {
            method: 'POST',
            headers: { apikey: owner.key, 'Content-Type': 'application/json' },
            body: JSON.stringify(body),
          })
        ).json()) as { id: number }
      ).id;
    publicEvent = await created({ name: 'Open via nginx', public: true, modems: ['NX-1', 'NX-2'] });
    privateEvent = await created({ name: 'Closed via nginx', public: false, modems: ['NX-9'] });
    await upload(owner.key, [...punches('NX-1', 5), ...punches('NX-9', 3)]);
    // Readable once no older transaction on the cluster is open (other test files' included): (a) and (b)
    // compare answers, which must not change meanwhile.
    await waitUntilVisible(ctx);
  }, 90_000);

  afterAll(async () => {
    await nginx?.stop();
    hub?.close();
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    await listener?.stop();
    await database?.close();
    await ctx?.close();
  });

  test('(a) identical polls of a public event reach the service about once per cache period; keyed polls every time', async () => {
    const url = `/api/rest/v1/punches?eventId=${publicEvent}&afterId=0`;
    const from = origin.length;
    const concurrent = await Promise.all(Array.from({ length: 50 }, () => viaNginx(url)));
    expect(concurrent.map((r) => r.status)).toEqual(Array(50).fill(200));
    const bodies = new Set(await Promise.all(concurrent.map((r) => r.text())));
    expect(bodies.size).toBe(1);
    // proxy_cache_lock: fifty at once, one at the service.
    expect(reached(url, from)).toHaveLength(1);

    // Sequential polls for a few cache periods (max-age=1): one revalidation per period at most, plus the first.
    const started = Date.now();
    let polls = 0;
    while (Date.now() - started < 3_500) {
      const res = await viaNginx(url);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe([...bodies][0]);
      polls += 1;
    }
    const periods = Math.ceil((Date.now() - started) / 1000);
    const atService = reached(url, from).length;
    expect(polls).toBeGreaterThan(5);
    expect(atService).toBeGreaterThanOrEqual(2); // it did revalidate after max-age
    expect(atService).toBeLessThanOrEqual(1 + periods + 1);
    testNote(`nginx cache: ${50 + polls} identical polls in ${periods} s reached the service ${atService} times`);

    // Negative control: the same poll with a key is private, no-store — every one reaches the service.
    const keyedFrom = origin.length;
    for (let i = 0; i < 10; i++) expect((await viaNginx(url, { headers: { apikey: owner.key } })).status).toBe(200);
    expect(reached(url, keyedFrom)).toHaveLength(10);
  });

  test('(b) an answer read with a key is never served to another caller nor to an anonymous one', async () => {
    // A private event: the owner reads it through nginx; the same URL anonymously and with another key is 404.
    const privateUrl = `/api/rest/v1/punches?eventId=${privateEvent}&afterId=0`;
    const mine = await viaNginx(privateUrl, { headers: { apikey: owner.key } });
    expect(mine.status).toBe(200);
    expect(mine.headers.get('cache-control')).toBe('private, no-store');
    expect(((await mine.json()) as unknown[]).length).toBe(3);
    for (const headers of [{}, { apikey: stranger.key }] as Record<string, string>[]) {
      for (let i = 0; i < 3; i++) {
        const res = await viaNginx(privateUrl, { headers });
        expect(res.status).toBe(404);
      }
    }
    // A modem list with a public and a private modem, in both orders of who asks first: each caller gets its own scope.
    const listUrl = `/api/rest/v1/punches?modem=NX-1,NX-9&afterId=0`;
    const privateModems = async (headers: Record<string, string>) => {
      const res = await viaNginx(listUrl, { headers });
      expect(res.status).toBe(200);
      return ((await res.json()) as { modem: string }[]).filter((p) => p.modem === 'NX-9').length;
    };
    expect(await privateModems({ apikey: owner.key })).toBe(3);
    expect(await privateModems({})).toBe(0);
    expect(await privateModems({ apikey: stranger.key })).toBe(0);
    expect(await privateModems({ apikey: owner.key })).toBe(3);
    expect(await privateModems({})).toBe(0);
    // The ROC read with the key in the path, then the same event without it.
    const roc = await viaNginx(`/roc/key/${owner.key}/getpunches.asp?unitId=${privateEvent}&lastId=0`);
    expect(roc.status).toBe(200);
    expect((await roc.text()).split('\r\n').filter(Boolean)).toHaveLength(3);
    expect((await viaNginx(`/getpunches.asp?unitId=${privateEvent}&lastId=0`)).status).toBe(404);
  });

  test('(c) afterId pollers through nginx while punches are uploaded see every punch exactly once; long-polls are not collapsed', async () => {
    const before = await storedIds(['NX-1', 'NX-2']);
    const startAfter = before[before.length - 1] ?? 0;
    let uploading = true;
    const uploads = (async () => {
      const jobs = Array.from({ length: 4 }, async (_, u) => {
        for (let b = 0; b < 15; b++) await upload(owner.key, punches(u % 2 ? 'NX-2' : 'NX-1', 1 + (b % 4)));
      });
      await Promise.all(jobs);
      uploading = false;
    })();
    const poller = async (format: 'json' | 'csv') => {
      const seen: number[] = [];
      let afterId = startAfter;
      for (;;) {
        const res = await viaNginx(`/api/rest/v1/punches?eventId=${publicEvent}&afterId=${afterId}`, {
          headers: { Accept: format === 'csv' ? 'text/csv' : 'application/json' },
        });
        expect(res.status).toBe(200);
        const ids =
          format === 'csv'
            ? (await res.text())
                .split('\n')
                .slice(1)
                .filter(Boolean)
                .map((line) => Number(line.split(',')[0]))
            : ((await res.json()) as { id: number }[]).map((p) => p.id);
        seen.push(...ids);
        if (ids.length > 0) afterId = ids[ids.length - 1];
        if (!uploading) {
          const all = (await storedIds(['NX-1', 'NX-2'])).filter((id) => id > startAfter);
          if (seen.length >= all.length && seen[seen.length - 1] === all[all.length - 1]) return { seen, all };
        }
        if (ids.length === 0) await new Promise((r) => setTimeout(r, 25));
      }
    };
    const results = await Promise.all([poller('json'), poller('json'), poller('csv'), poller('csv')]);
    await uploads;
    for (const { seen, all } of results) {
      expect(all.length).toBeGreaterThan(0);
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen).toEqual(all);
    }

    // Two identical long-polls at the head: both reach the service (never collapsed) and both get the new punch.
    const head = (await storedIds(['NX-1', 'NX-2'])).pop()!;
    const waitUrl = `/api/rest/v1/punches?eventId=${publicEvent}&afterId=${head}&wait=30`;
    const from = origin.length;
    const polls = [viaNginx(waitUrl), viaNginx(waitUrl)];
    while (reached(waitUrl, from).length < 2) await new Promise((r) => setTimeout(r, 20));
    await upload(owner.key, punches('NX-1', 1));
    for (const res of await Promise.all(polls)) {
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect((await res.json()) as unknown[]).toHaveLength(1);
    }
  });

  test('(e) a stored page older than max-age + stale-while-revalidate is never served: the first poll after it gets the new punch', async () => {
    const head = (await storedIds(['NX-1', 'NX-2'])).pop()!;
    const url = `/api/rest/v1/punches?eventId=${publicEvent}&afterId=${head}`;
    const first = await viaNginx(url);
    expect(first.headers.get('cache-control')).toBe('public, max-age=1, stale-while-revalidate=1');
    expect((await first.json()) as unknown[]).toHaveLength(0);
    await upload(owner.key, punches('NX-1', 1));
    await waitUntilVisible(ctx);
    // Past max-age (1 s) and stale-while-revalidate (1 s), plus a second as nginx counts whole seconds: with
    // `proxy_cache_use_stale updating` nginx answered this poll with the stored empty page (STALE).
    await new Promise((r) => setTimeout(r, 3_500));
    const later = await viaNginx(url);
    expect(later.headers.get('x-cache-status')).not.toBe('STALE');
    expect((await later.json()) as unknown[]).toHaveLength(1);
  });

  test('(d) an SSE stream through nginx receives punches live; the service sees the client in X-Forwarded-For', async () => {
    const head = (await storedIds(['NX-1', 'NX-2'])).pop()!;
    const ac = new AbortController();
    const res = await viaNginx(`/api/rest/v1/punches/stream?eventId=${publicEvent}&afterId=${head}`, {
      headers: { Accept: 'text/event-stream', 'X-Forwarded-For': '203.0.113.7' },
      signal: ac.signal,
    });
    try {
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-store');
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      // The stream's first bytes arrive before any punch: nginx does not buffer it.
      while (!text.includes('retry:')) text += decoder.decode((await reader.read()).value, { stream: true });
      for (let round = 0; round < 3; round++) {
        await upload(owner.key, punches('NX-2', 1));
        const id = (await storedIds(['NX-2'])).pop()!;
        while (!text.includes(`id: ${id}\n`)) {
          const chunk = await reader.read();
          if (chunk.done) throw new Error(`stream ended before punch ${id}:\n${text}`);
          text += decoder.decode(chunk.value, { stream: true });
        }
      }
      const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toHaveLength(3);
    } finally {
      ac.abort();
    }
    const streamed = origin.filter((r) => r.url.startsWith('/api/rest/v1/punches/stream')).pop()!;
    // nginx appends the address it saw: the service (TRUSTED_PROXIES=127.0.0.1) takes the client from there.
    expect(streamed.forwardedFor).toBe('203.0.113.7, 127.0.0.1');
    expect(nginx.output()).not.toMatch(/\[(emerg|alert|crit)\]/);
  });
});
