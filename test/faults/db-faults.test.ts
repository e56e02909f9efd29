/**
 * Database trouble against a private PostgreSQL (port FAULT_PG_PORT + 1, default 5681, so it never meets the
 * restart test's; the machine's server is never touched), with the real timing service process serving
 * punch uploaders and gap-free pollers, and the shop placing orders for the read-only case:
 * - read-only as after a fail-over: the database is set `default_transaction_read_only` and the services'
 *   sessions are cut, so they reconnect to a server that refuses writes; then it is made writable again
 *   *without* cutting the sessions (the pooled read-only sessions must be discarded by the services);
 * - `timing.punches` held by an `access exclusive` lock past the services' `lock_timeout`;
 * - out of connections: every slot of the server taken by other clients;
 * - disk full: `timing.punches` moved to a tablespace on a 1 MiB tmpfs (needs root to mount it: as root, and
 *   always in CI, the case runs; elsewhere it says why it did not), then the tmpfs grown.
 * Proves: writes and reads answer 503 with `Retry-After` (never another 5xx) during each fault; `/readyz`
 * says 503 while read-only and stays 200 under the lock and while the pool serves without new connections;
 * the `LISTEN` session survives the connection shortage; the services recover by themselves once the fault
 * is lifted (the seconds are reported through testNote); afterwards every acknowledged punch and order
 * exists exactly once and the pollers saw every punch exactly once.
 */
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { testNote } from '@sports-timing/shared/src/testing';
import { newTally, sleep, startFaultPg, until, withRetries, type FaultPg } from '../support/fault-pg';
import { startServiceProcess, type ServiceProcess } from '../support/service-process';

const PORT = Number(process.env.FAULT_PG_PORT ?? 5680) + 1;
const MAX_CONNECTIONS = 40;
const API_KEY = `tk_${'f'.repeat(43)}`;
const DB = 'timing_faults';

jest.setTimeout(300_000);

let server: FaultPg;
let admin: pg.Client;
let timing: ServiceProcess;
let dataDir: string;
/** The tmpfs mount point of the disk-full case, while mounted. */
let smallDisk: string | undefined;
const savedUrl = process.env.DATABASE_URL;

beforeAll(async () => {
  server = startFaultPg(PORT, { max_connections: MAX_CONNECTIONS, superuser_reserved_connections: 0 });
  admin = new pg.Client({ connectionString: server.url, application_name: 'fault-admin' });
  await admin.connect();
  await admin.query(`create database ${DB}`);
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'db-faults-'));
  timing = await startServiceProcess({
    entry: 'services/timing/src/server.ts',
    env: {
      TIMING_DATABASE_URL: server.url.replace(/\/postgres$/, `/${DB}`),
      TIMING_PORT: '0',
      HOST: '127.0.0.1',
      APP_ENV: 'test',
      DEMO_DATA: 'false',
      DATA_DIR: dataDir,
      TIMING_BOOTSTRAP_API_KEY: API_KEY,
      DATABASE_LOCK_TIMEOUT_MS: '1000',
    },
  });
  // The shop helpers create their databases on DATABASE_URL: point them at the private server.
  process.env.DATABASE_URL = server.url;
});
afterAll(async () => {
  process.env.DATABASE_URL = savedUrl;
  await timing?.stop();
  await admin?.end();
  server?.stop();
  if (smallDisk) {
    execFileSync('umount', [smallDisk]);
    rmSync(smallDisk, { recursive: true, force: true });
  }
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/**
 * Uploaders (batches of 10 distinct punches, retried until answered) and pollers (`afterId` from the last id
 * they saw) against the timing process until `stop()`; `readiness` samples `/readyz` all along.
 */
function timingLoad(tag: string) {
  const uploads = newTally();
  const polls = newTally();
  const ready: number[] = [];
  const seen: number[][] = [[], []];
  let stopped = false;
  let batch = 0;
  let lastAckAt = 0;
  const base = timing.baseUrl;
  const uploader = async () => {
    while (!stopped) {
      const b = batch++;
      const punches = Array.from({ length: 10 }, (_, j) => ({
        modem: `${tag}-${b % 4}`,
        card: String(2_000_000 + b * 10 + j),
        time: 1_700_000_000_000 + b * 1000 + j,
        code: 31,
        type: 'Control',
      }));
      const res = await withRetries(
        `${base}/api/rest/v1/punches`,
        { method: 'POST', headers: { 'content-type': 'application/json', apikey: API_KEY }, body: JSON.stringify(punches) },
        uploads,
      );
      const text = await res.text();
      if (res.status === 200) {
        uploads.acknowledged++;
        lastAckAt = Date.now();
      } else uploads.otherErrors.push(`${res.status} ${text.slice(0, 200)}`);
    }
  };
  const poller = async (ids: number[]) => {
    let afterId = 0;
    const pollOnce = async () => {
      const res = await withRetries(
        // By modem, as result software polls (a `user=` read would do too: its modems, resolved before the page,
        // are resolved again after a page with punches, docs/decisions.md §5).
        `${base}/api/rest/v1/punches?modem=${[0, 1, 2, 3].map((m) => `${tag}-${m}`).join(',')}&afterId=${afterId}`,
        { headers: { apikey: API_KEY, accept: 'application/json' } },
        polls,
      );
      if (res.status !== 200) {
        polls.otherErrors.push(`${res.status} ${(await res.text()).slice(0, 200)}`);
        return 0;
      }
      polls.acknowledged++;
      const page = (await res.json()) as { id: number }[];
      for (const p of page) ids.push(p.id);
      if (page.length) afterId = page[page.length - 1].id;
      return page.length;
    };
    while (!stopped) if ((await pollOnce()) === 0) await sleep(50);
    while ((await pollOnce()) > 0); // catch up after the last upload
  };
  const readiness = async () => {
    while (!stopped) {
      try {
        ready.push((await fetch(`${base}/readyz`)).status);
      } catch {
        ready.push(0);
      }
      await sleep(100);
    }
  };
  const running = Promise.all([uploader(), uploader(), uploader(), uploader(), poller(seen[0]), poller(seen[1]), readiness()]);
  return {
    uploads,
    polls,
    ready,
    seen,
    lastAckAt: () => lastAckAt,
    async stop() {
      stopped = true;
      await running;
    },
  };
}

/** Every punch of `tag` in the timing database, and whether the pollers saw each exactly once. */
async function checkPunches(tag: string) {
  const db = new pg.Client({ connectionString: server.url.replace(/\/postgres$/, `/${DB}`) });
  await db.connect();
  try {
    const r = await db.query<{ n: number; distinct: number }>(
      `select count(*)::int as n, count(distinct (modem, card, time, code))::int as distinct from timing.punches where modem like $1`,
      [`${tag}-%`],
    );
    const all = await db.query<{ id: string }>('select p.id::text as id from timing.punches p where p.modem like $1 order by p.id', [`${tag}-%`]);
    return { stored: r.rows[0], allIds: all.rows.map((x) => Number(x.id)) };
  } finally {
    await db.end();
  }
}

/** Asserts the common outcome of a fault: 503s with Retry-After only, nothing lost, nothing twice. */
async function expectIntact(tag: string, load: ReturnType<typeof timingLoad>) {
  const { stored, allIds } = await checkPunches(tag);
  expect(load.uploads.otherErrors).toEqual([]);
  expect(load.polls.otherErrors).toEqual([]);
  expect(load.uploads.status503WithoutRetryAfter + load.polls.status503WithoutRetryAfter).toBe(0);
  expect(stored).toEqual({ n: load.uploads.acknowledged * 10, distinct: load.uploads.acknowledged * 10 });
  for (const ids of load.seen) expect(ids).toEqual(allIds.slice(allIds.indexOf(ids[0]), allIds.indexOf(ids[0]) + ids.length));
  return stored;
}

const summary = (load: ReturnType<typeof timingLoad>) =>
  `uploads ${load.uploads.acknowledged} acknowledged, 503 ${load.uploads.status503}, network errors ${load.uploads.networkErrors}; polls ${load.polls.acknowledged}, 503 ${load.polls.status503}; /readyz 503 ${load.ready.filter((s) => s === 503).length} of ${load.ready.length}`;

test('read-only after a fail-over: 503 with Retry-After, readiness down, recovery without cutting sessions', async () => {
  const load = timingLoad('ro');
  try {
    await until(() => load.uploads.acknowledged >= 20);
    await admin.query(`alter database ${DB} set default_transaction_read_only = on`);
    await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = $1`, [DB]);
    const before = load.uploads.status503;
    await until(() => load.uploads.status503 >= before + 10 && load.ready.slice(-1)[0] === 503);
    const readyDownSeen = load.ready.includes(503);
    // Writable again; the services' sessions stay as they are (still read-only until discarded).
    await admin.query(`alter database ${DB} reset default_transaction_read_only`);
    const lifted = Date.now();
    await until(() => load.lastAckAt() > lifted);
    const writesBack = (Date.now() - lifted) / 1000;
    await until(async () => (await fetch(`${timing.baseUrl}/readyz`)).status === 200);
    const readyBack = (Date.now() - lifted) / 1000;
    await load.stop();
    const stored = await expectIntact('ro', load);
    expect(readyDownSeen).toBe(true);
    testNote(
      `db-faults read-only: ${summary(load)}; writes back ${writesBack.toFixed(1)} s, ready ${readyBack.toFixed(1)} s after the lift; stored ${JSON.stringify(stored)}`,
    );
  } finally {
    await load.stop();
  }
});

test('timing.punches locked past lock_timeout: 503 with Retry-After instead of a hang, readiness up', async () => {
  const load = timingLoad('lock');
  const locker = new pg.Client({ connectionString: server.url.replace(/\/postgres$/, `/${DB}`) });
  await locker.connect();
  try {
    await until(() => load.uploads.acknowledged >= 20);
    const readyBefore = load.ready.length;
    await locker.query('begin; lock table timing.punches in access exclusive mode');
    const up = load.uploads.status503;
    const polls = load.polls.status503;
    await until(() => load.uploads.status503 >= up + 8 && load.polls.status503 >= polls + 2);
    const readyDuring = load.ready.slice(readyBefore);
    await locker.query('commit');
    const lifted = Date.now();
    await until(() => load.lastAckAt() > lifted);
    const back = (Date.now() - lifted) / 1000;
    await load.stop();
    const stored = await expectIntact('lock', load);
    expect(readyDuring.filter((s) => s !== 200)).toEqual([]);
    testNote(`db-faults lock: ${summary(load)}; writes back ${back.toFixed(1)} s after the unlock; stored ${JSON.stringify(stored)}`);
  } finally {
    await locker.query('rollback').catch(() => undefined);
    await locker.end();
    await load.stop();
  }
});

test('out of connections: served on the pool, readiness up, LISTEN kept, refusals 503', async () => {
  const load = timingLoad('conn');
  const fillers: pg.Client[] = [];
  const listenSessions = async (c: pg.Client) =>
    (await c.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where application_name = 'timing-listen'`)).rows[0].n;
  try {
    await until(() => load.uploads.acknowledged >= 20);
    expect(await listenSessions(admin)).toBe(1);
    // Take every free slot of the server.
    for (;;) {
      const c = new pg.Client({ connectionString: server.url, application_name: 'fault-filler' });
      c.on('error', () => undefined);
      try {
        await c.connect();
        fillers.push(c);
      } catch (err) {
        expect((err as { code?: string }).code).toBe('53300');
        break;
      }
    }
    const taken = fillers.length;
    const readyBefore = load.ready.length;
    const acked = load.uploads.acknowledged;
    // A burst of more reads at once than the pool has sessions: the pool must open sessions the server refuses.
    const burst = await Promise.all(
      Array.from({ length: 24 }, async () => {
        const res = await fetch(`${timing.baseUrl}/api/rest/v1/punches?user=admin&afterId=0`, { headers: { apikey: API_KEY } });
        await res.arrayBuffer();
        return { status: res.status, retryAfter: res.headers.get('retry-after') };
      }),
    );
    await until(() => load.uploads.acknowledged >= acked + 50);
    const readyDuring = load.ready.slice(readyBefore);
    const listenDuring = await listenSessions(admin);
    for (const c of fillers.splice(0)) await c.end();
    await load.stop();
    const stored = await expectIntact('conn', load);
    expect(readyDuring.filter((s) => s !== 200)).toEqual([]);
    expect(listenDuring).toBe(1);
    expect(burst.filter((b) => !(b.status === 200 || (b.status === 503 && Number(b.retryAfter) > 0)))).toEqual([]);
    const refused = burst.filter((b) => b.status === 503).length;
    testNote(
      `db-faults connections: ${taken} slots taken by others; burst of ${burst.length} reads: ${refused} answered 503 with Retry-After, the rest 200; ${summary(load)}; stored ${JSON.stringify(stored)}`,
    );
  } finally {
    for (const c of fillers) await c.end().catch(() => undefined);
    await load.stop();
  }
});

test('the shop, read-only after a fail-over: 503 with Retry-After, recovery without cutting sessions, one order each', async () => {
  const { startShop, orderBody } = await import('../../services/ordering/test/support/orders');
  const { createApp } = await import('../../services/ordering/src/app');
  const { composeOrdering } = await import('../../services/ordering/src/composition');
  const shop = await startShop({ poolSize: 5 });
  const app = createApp(composeOrdering({ ...shop.ctx.deps, database: shop.database, config: { ...shop.ctx.deps.config, rateLimitOrdersPerMinute: 0 } }));
  const httpServer = http.createServer(app);
  await new Promise<void>((r) => httpServer.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
  const dbName = new URL(shop.ctx.testDb.url).pathname.slice(1);
  const tally = newTally();
  let stopped = false;
  let next = 0;
  let lastAckAt = 0;
  const worker = async () => {
    while (!stopped) {
      const i = next++;
      const body = orderBody({
        orderItems: [{ articleNumber: 'SIAC1', quantity: 1, configuration: { cardNumber: String(8_200_000 + i), personalDataFirstName: 'Anna' } }],
      });
      const res = await withRetries(
        `${base}/api/grpc-json/v1/shop/orders`,
        { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': `ro-order-${i}` }, body: JSON.stringify(body) },
        tally,
      );
      const text = await res.text();
      if (res.status >= 200 && res.status < 300) {
        tally.acknowledged++;
        lastAckAt = Date.now();
      } else tally.otherErrors.push(`${res.status} ${text.slice(0, 200)}`);
    }
  };
  const running = Promise.all([worker(), worker(), worker(), worker()]);
  try {
    await until(() => tally.acknowledged >= 10);
    await admin.query(`alter database ${dbName} set default_transaction_read_only = on`);
    await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = $1`, [dbName]);
    const before = tally.status503;
    await until(() => tally.status503 >= before + 10);
    await admin.query(`alter database ${dbName} reset default_transaction_read_only`);
    const lifted = Date.now();
    await until(() => lastAckAt > lifted);
    const back = (Date.now() - lifted) / 1000;
    stopped = true;
    await running;
    const c = (
      await shop.database.pool.query<{ orders: number; mails: number; keys: number }>(`
        select (select count(*) from orders)::int as orders,
               (select count(distinct dedupe_key) from outbox_messages where kind = 'mail')::int as mails,
               (select count(*) from idempotency_keys)::int as keys`)
    ).rows[0];
    testNote(
      `db-faults shop read-only: ${tally.acknowledged} orders, 503 ${tally.status503}, network errors ${tally.networkErrors}; orders back ${back.toFixed(1)} s after the lift; db ${JSON.stringify(c)}`,
    );
    expect(tally.otherErrors).toEqual([]);
    expect(tally.status503WithoutRetryAfter).toBe(0);
    expect(c).toEqual({ orders: tally.acknowledged, mails: tally.acknowledged, keys: tally.acknowledged });
  } finally {
    stopped = true;
    await running;
    httpServer.closeAllConnections();
    await new Promise((r) => httpServer.close(r));
    await shop.close();
  }
});

test('disk full (53100): 503 with Retry-After while the tablespace is full, writes back once it has room', async () => {
  if (process.getuid?.() !== 0 && !process.env.CI) {
    testNote('db-faults disk full: not run (mounting the small tmpfs needs root)');
    return;
  }
  const dir = path.join(os.tmpdir(), `fault-pg-${PORT}-small`);
  mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir]);
  smallDisk = dir;
  execFileSync('chown', ['postgres:postgres', dir]);
  await admin.query(`create tablespace small_disk location '${dir}'`);
  const load = timingLoad('disk');
  const db = new pg.Client({ connectionString: server.url.replace(/\/postgres$/, `/${DB}`) });
  await db.connect();
  try {
    await until(() => load.uploads.acknowledged >= 20);
    await db.query('alter table timing.punches set tablespace small_disk');
    const before = load.uploads.status503;
    await until(() => load.uploads.status503 >= before + 10);
    const readyBefore = load.ready.length;
    const full = load.uploads.status503;
    await until(() => load.uploads.status503 >= full + 10);
    const readyDuring = load.ready.slice(readyBefore);
    execFileSync('mount', ['-o', 'remount,size=64m', dir]);
    const lifted = Date.now();
    await until(() => load.lastAckAt() > lifted);
    const back = (Date.now() - lifted) / 1000;
    await load.stop();
    const stored = await expectIntact('disk', load);
    testNote(
      `db-faults disk full: ${summary(load)} (/readyz while full: ${readyDuring.filter((x) => x === 200).length} × 200 of ${readyDuring.length}); writes back ${back.toFixed(1)} s after the tmpfs grew; stored ${JSON.stringify(stored)}`,
    );
  } finally {
    await load.stop();
    await db.query('alter table timing.punches set tablespace pg_default').catch(() => undefined);
    await db.end();
  }
});
