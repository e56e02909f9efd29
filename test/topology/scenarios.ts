/**
 * Load scenarios through the balancer of a running {@link Topology} (SCALING.md). Each returns its figures
 * and the violations it found (empty = the guarantee held); the caller asserts or reports them.
 * Guarantees checked: the polling guarantee of `getPunches` and `getPunchStream` (specs/timing.yaml: never
 * skip, never repeat), order idempotency and one confirmation e-mail per order (specs/ordering.yaml
 * `createShopOrder`), maintenance mode and `clearCaches` on every instance, shared rate limits.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { createOrderingClient, TokenSession } from '@sports-timing/ordering-client';
import { readEventStream } from '../../packages/timing-client/src';
import type { Instance, Topology } from './topology';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Counts of which instance answered (`X-Served-By`), and how often two consecutive requests of one client went to different instances. */
class Spread {
  readonly byInstance: Record<string, number> = {};
  switches = 0;
  consecutive = 0;
  private last = new Map<number, string>();
  note(client: number, res: Response): void {
    const by = res.headers.get('x-served-by') ?? '?';
    this.byInstance[by] = (this.byInstance[by] ?? 0) + 1;
    const prev = this.last.get(client);
    if (prev !== undefined) {
      this.consecutive++;
      if (prev !== by) this.switches++;
    }
    this.last.set(client, by);
  }
  /** Share of consecutive requests of one client served by another instance than the one before. */
  get switchShare(): number {
    return this.consecutive ? this.switches / this.consecutive : 0;
  }
}

/** Kills or stops one instance at a fraction of a run and starts it again later; resolves with what happened when. */
export interface Disruption {
  /** `kill` = SIGKILL, `term` = SIGTERM (graceful drain). */
  mode: 'kill' | 'term';
  instance: Instance;
  atMs: number;
  /** Down time before the restart begins. */
  downMs: number;
}

async function disrupt(t: Topology, d: Disruption, events: string[], t0: number): Promise<void> {
  await sleep(d.atMs);
  events.push(`${Date.now() - t0} ms: ${d.mode === 'kill' ? 'SIGKILL' : 'SIGTERM'} ${d.instance.name}`);
  if (d.mode === 'kill') await d.instance.kill();
  else {
    const code = await d.instance.stop();
    events.push(`${Date.now() - t0} ms: ${d.instance.name} exited ${code}`);
  }
  await sleep(d.downMs);
  await d.instance.start();
  await t.waitUp(d.instance.name);
  events.push(`${Date.now() - t0} ms: ${d.instance.name} UP again`);
}

// ─────────────────────────── (a) punches: uploaders + afterId pollers ───────────────────────────

/** Running uploaders of {@link startUploaders}. */
interface Uploaders {
  /** `modem/card` of every acknowledged punch (cards are unique within a run). */
  expected: Set<string>;
  readonly uploads: number;
  readonly retries: number;
  readonly lastAckAt: number;
  /** Ends the loops after their current batch is acknowledged. */
  stop(): Promise<void>;
}

/**
 * `uploaders` loops posting batches of `batch` = [min, max] punches (unique cards, spread over `modems`)
 * through the balancer with the admin key; a batch answered 5xx or lost on the network is re-sent unchanged
 * until acknowledged (a re-sent punch is stored once: specs/timing.yaml `postPunches`); a 4xx is a violation.
 */
function startUploaders(
  t: Topology,
  o: { uploaders: number; modems: string[]; batch?: [number, number]; violations: string[]; firstCard?: number },
): Uploaders {
  const headers = { apikey: t.timingAdminKey, 'content-type': 'application/json' };
  const [minBatch, maxBatch] = o.batch ?? [1, 20];
  let seq = o.firstCard ?? 0;
  let stopped = false;
  const state = { expected: new Set<string>(), uploads: 0, retries: 0, lastAckAt: Date.now() };
  const loop = async () => {
    while (!stopped) {
      const n = minBatch + Math.floor(Math.random() * (maxBatch - minBatch + 1));
      const batch = Array.from({ length: n }, () => {
        const s = ++seq;
        return { card: String(s), time: 1_700_000_000_000 + s, code: 31 + (s % 200), type: 'Control', modem: o.modems[s % o.modems.length] };
      });
      const body = JSON.stringify(batch);
      for (;;) {
        let status: number;
        try {
          const res = await fetch(`${t.timingUrl}/api/rest/v1/punches`, { method: 'POST', headers, body, signal: AbortSignal.timeout(20_000) });
          status = res.status;
          await res.arrayBuffer();
        } catch {
          status = 0;
        }
        if (status === 200) break;
        if (status >= 400 && status < 500) {
          o.violations.push(`upload answered ${status}`);
          break;
        }
        state.retries++;
        await sleep(50);
      }
      state.uploads++;
      for (const p of batch) state.expected.add(`${p.modem}/${p.card}`);
      state.lastAckAt = Date.now();
    }
  };
  const runs = Array.from({ length: o.uploaders }, () => loop());
  return {
    expected: state.expected,
    get uploads() {
      return state.uploads;
    },
    get retries() {
      return state.retries;
    },
    get lastAckAt() {
      return state.lastAckAt;
    },
    async stop() {
      stopped = true;
      await Promise.all(runs);
    },
  };
}

/** Figures of {@link punchDelivery}. */
export interface PunchDeliveryResult {
  uploaders: number;
  pollers: number;
  durationMs: number;
  uploads: number;
  punches: number;
  uploadsPerSecond: number;
  polls: number;
  pollsPerSecond: number;
  /** Upload attempts answered 5xx or failed on the network, retried with the same batch. */
  uploadRetries: number;
  /** Poll attempts that failed (5xx, network) and were repeated with the same afterId. */
  pollRetries: number;
  /** Punches stored in the database for the run's modems, and distinct (modem, card) among them. */
  stored: number;
  storedDistinct: number;
  /** Per poller: punches missed and received twice (all must be 0). */
  missed: number[];
  repeated: number[];
  pollSpread: Spread;
  /** Longest time after the last upload until every poller held everything, ms. */
  catchUpMs: number;
  events: string[];
  violations: string[];
}

/**
 * `uploaders` clients upload small batches (1–20 punches, unique cards) for `durationMs`, re-sending a batch
 * until it is acknowledged; `pollers` clients follow the spec's polling procedure (same modem filter,
 * `afterId` = highest id received). Afterwards each poller must hold every punch exactly once and the
 * database every punch once. `disruption` kills or stops an instance meanwhile.
 */
export async function punchDelivery(
  t: Topology,
  o: { uploaders: number; pollers: number; durationMs: number; tag: string; disruption?: Disruption; batch?: [number, number] },
): Promise<PunchDeliveryResult> {
  const modems = Array.from({ length: 8 }, (_, i) => `TOPO-${o.tag}-${i + 1}`);
  const violations: string[] = [];
  const events: string[] = [];
  const spread = new Spread();
  let polls = 0;
  let pollRetries = 0;
  const t0 = Date.now();
  const up = startUploaders(t, { uploaders: o.uploaders, modems, batch: o.batch, violations });
  const expected = up.expected;

  const received: Map<string, number>[] = [];
  const catchUp: number[] = [];
  let uploadsDone = false;
  const poller = async (k: number) => {
    const got = new Map<string, number>();
    received.push(got);
    let afterId = 0;
    for (;;) {
      let page: { id: number; card: string; modem: string }[] | undefined;
      try {
        const res = await fetch(`${t.timingUrl}/api/rest/v1/punches?modem=${modems.join(',')}&afterId=${afterId}`, {
          headers: { apikey: t.timingAdminKey },
          signal: AbortSignal.timeout(20_000),
        });
        if (res.status === 200) {
          spread.note(k, res);
          page = (await res.json()) as typeof page;
        } else {
          await res.arrayBuffer();
          if (res.status < 500) violations.push(`poll answered ${res.status}`);
        }
      } catch {
        page = undefined;
      }
      if (!page) {
        pollRetries++;
        await sleep(50);
        continue;
      }
      polls++;
      for (const p of page) {
        if (p.id <= afterId) violations.push(`poller ${k}: id ${p.id} not above afterId ${afterId}`);
        afterId = Math.max(afterId, p.id);
        const key = `${p.modem}/${p.card}`;
        got.set(key, (got.get(key) ?? 0) + 1);
      }
      if (uploadsDone && got.size >= expected.size) {
        catchUp.push(Date.now() - up.lastAckAt);
        return;
      }
      if (uploadsDone && Date.now() - up.lastAckAt > 30_000) {
        violations.push(`poller ${k}: gave up waiting, ${got.size} of ${expected.size}`);
        return;
      }
      if (page.length === 0) await sleep(10);
    }
  };

  const pollerRuns = Array.from({ length: o.pollers }, (_, k) => poller(k));
  const disruption = o.disruption ? disrupt(t, o.disruption, events, t0) : Promise.resolve();
  await sleep(o.durationMs);
  await up.stop();
  const durationMs = Date.now() - t0;
  uploadsDone = true;
  await Promise.all(pollerRuns);
  await disruption;

  const missed = received.map((got) => [...expected].filter((k) => !got.has(k)).length);
  const repeated = received.map((got) => [...got.values()].filter((c) => c > 1).length);
  missed.forEach((m, k) => m && violations.push(`poller ${k} missed ${m} punches`));
  repeated.forEach((r, k) => r && violations.push(`poller ${k} received ${r} punches twice`));
  const { rows } = await t.primary.pool.query<{ n: string; d: string }>(
    'select count(*) n, count(distinct (modem, card)) d from timing.punches where modem = any($1)',
    [modems],
  );
  const stored = Number(rows[0].n);
  const storedDistinct = Number(rows[0].d);
  if (stored !== expected.size || storedDistinct !== expected.size)
    violations.push(`database holds ${stored} punches (${storedDistinct} distinct) of ${expected.size} acknowledged`);
  return {
    uploaders: o.uploaders,
    pollers: o.pollers,
    durationMs,
    uploads: up.uploads,
    punches: expected.size,
    uploadsPerSecond: up.uploads / (durationMs / 1000),
    polls,
    pollsPerSecond: polls / (durationMs / 1000),
    uploadRetries: up.retries,
    pollRetries,
    stored,
    storedDistinct,
    missed,
    repeated,
    pollSpread: spread,
    catchUpMs: Math.max(0, ...catchUp),
    events,
    violations,
  };
}

// ─────────────────────────── (c) orders, mails, idempotency, maintenance, caches ───────────────────────────

/** Figures of {@link orderDelivery}. */
export interface OrderDeliveryResult {
  clients: number;
  orders: number;
  durationMs: number;
  ordersPerSecond: number;
  /** Attempts answered 5xx or failed on the network, retried with the same Idempotency-Key. */
  retries: number;
  /** Orders stored for the run's keys; orders with more than one row; confirmation mails; orders without exactly one. */
  stored: number;
  /** Distinct confirmation messages (Message-IDs) received, and deliveries beyond one of the same message. */
  confirmationsReceived: number;
  redeliveries: number;
  ordersWithoutExactlyOneMail: number;
  /** ms from the end of the order phase (instance back up) until every order's confirmation had arrived. */
  mailDrainMs: number;
  /** Replays of every key through the balancer: answered another order, and on how many instances replays landed. */
  replayMismatches: number;
  replaySpread: Spread;
  spread: Spread;
  events: string[];
  violations: string[];
}

/** The order body of the demo shop (article `SIAC1` with a personal card number). */
function shopOrder(card: number, email: string): unknown {
  return {
    contact: { firstName: 'Topo', lastName: 'Logy', email, culture: 'en' },
    shippingAddress: { firstName: 'Topo', lastName: 'Logy', address1: 'Teststraße 5', zip: '10115', city: 'Berlin', countryCode: 'DE' },
    billingAddressIsSameAsShippingAddress: true,
    orderItems: [{ articleNumber: 'SIAC1', quantity: 1, configuration: { cardNumber: String(card), personalDataFirstName: 'Topo' } }],
  };
}

/**
 * `clients` place `orders` shop orders through the balancer, each with its own Idempotency-Key, retrying
 * 5xx and network failures with the same key; `disruption` kills or stops an ordering instance meanwhile.
 * Afterwards: each acknowledged order is stored once, the SMTP server received exactly one confirmation
 * per order, and replaying every key (on alternating instances) answers the same order. `stalledOrders`
 * orders placed first go to a recipient the SMTP server stalls (a slow relay): their mail must not hold up
 * the others'.
 */
export async function orderDelivery(
  t: Topology,
  o: { clients: number; orders: number; firstCard: number; tag: string; disruption?: Disruption; stalledOrders?: number },
): Promise<OrderDeliveryResult> {
  if (!t.smtp) throw new Error('orderDelivery needs ordering instances (and their SMTP server)');
  const violations: string[] = [];
  const events: string[] = [];
  const spread = new Spread();
  const acked = new Map<string, { oid: string; orderNumber: string }>();
  let retries = 0;
  let next = 0;
  const t0 = Date.now();
  const place = async (key: string, body: string, client: number, s: Spread): Promise<{ oid: string; orderNumber: string } | undefined> => {
    for (let attempt = 0; attempt < 200; attempt++) {
      let status: number;
      let json: { oid?: string; orderNumber?: string } = {};
      try {
        const res = await fetch(`${t.orderingUrl}/api/grpc-json/v1/shop/orders`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': key },
          body,
          signal: AbortSignal.timeout(20_000),
        });
        status = res.status;
        json = (await res.json()) as typeof json;
        if (status === 200) s.note(client, res);
      } catch {
        status = 0;
      }
      if (status === 200) return { oid: String(json.oid), orderNumber: String(json.orderNumber) };
      if (status >= 400 && status < 500) {
        violations.push(`order ${key} answered ${status} ${JSON.stringify(json).slice(0, 200)}`);
        return undefined;
      }
      retries++;
      await sleep(100);
    }
    violations.push(`order ${key}: gave up after 200 attempts`);
    return undefined;
  };
  const client = async (c: number) => {
    for (let i = next++; i < o.orders; i = next++) {
      const key = `topo-${o.tag}-${i}`;
      const placed = await place(key, JSON.stringify(shopOrder(o.firstCard + i, `buyer-${o.tag}-${i}@example.com`)), c, spread);
      if (placed) acked.set(key, placed);
    }
  };
  // The slow relay's orders first: their two messages each sit in the relay while the others are placed.
  for (let i = 0; i < (o.stalledOrders ?? 0); i++) {
    await place(`stalled-topo-${o.tag}-${i}`, JSON.stringify(shopOrder(o.firstCard + o.orders + i, `stalled-${o.tag}-${i}@example.com`)), 0, new Spread());
  }
  const disruption = o.disruption ? disrupt(t, o.disruption, events, t0) : Promise.resolve();
  await Promise.all(Array.from({ length: o.clients }, (_, c) => client(c)));
  const durationMs = Date.now() - t0;
  await disruption;

  const numbers = [...acked.values()].map((a) => a.orderNumber);
  // Confirmations at the SMTP server, per order: deliveries and distinct Message-IDs. The outbox delivers at
  // least once with a stable Message-ID (services/ordering/src/outbox): a job whose instance died between the
  // SMTP server's acceptance and marking it sent is delivered again after its lease (10 s) — the same message,
  // which mail clients show once. So the guarantee is one Message-ID per order; repeated deliveries are a figure.
  const confirmations = () => {
    const byOrder = new Map<string, { deliveries: number; ids: Set<string> }>();
    for (const m of t.smtp!.received) {
      if (/payment link/i.test(m.parsed.subject ?? '')) continue;
      const text = `${m.parsed.subject ?? ''}\n${m.parsed.text ?? ''}`;
      for (const n of numbers) {
        if (!text.includes(n)) continue;
        const e = byOrder.get(n) ?? { deliveries: 0, ids: new Set<string>() };
        e.deliveries++;
        e.ids.add(m.parsed.messageId ?? `no-id-${e.deliveries}`);
        byOrder.set(n, e);
      }
    }
    return byOrder;
  };
  const drainStart = Date.now();
  let counted = confirmations();
  while (counted.size < numbers.length && Date.now() - drainStart < 75_000) {
    await sleep(200);
    counted = confirmations();
  }
  const mailDrainMs = Date.now() - drainStart;
  // Replays (after the mails, so that a replay that sent another mail shows in the count below): the same key (and body) again, twice per key from one client, so consecutive replays alternate instances.
  const replaySpread = new Spread();
  let replayMismatches = 0;
  for (const [key, first] of acked) {
    const i = Number(key.split('-').pop());
    for (let r = 0; r < 2; r++) {
      const again = await place(key, JSON.stringify(shopOrder(o.firstCard + i, `buyer-${o.tag}-${i}@example.com`)), 0, replaySpread);
      if (!again || again.oid !== first.oid) replayMismatches++;
    }
  }
  if (replayMismatches) violations.push(`${replayMismatches} replays answered another order`);

  const { rows } = await t.primary.pool.query<{ order_number: string; n: string }>(
    'select order_number, count(*) n from ordering.orders where order_number = any($1) group by 1',
    [numbers],
  );
  const stored = rows.reduce((s, r) => s + Number(r.n), 0);
  if (rows.length !== numbers.length || rows.some((r) => Number(r.n) !== 1))
    violations.push(`stored ${stored} rows for ${numbers.length} acknowledged orders (${rows.length} distinct)`);
  // Every key of the run names one order, and no order of the run exists without a key (no half-retried duplicate).
  const { rows: keyed } = await t.primary.pool.query<{ keys: string; orders: string }>(
    `select count(*) keys, count(distinct order_id) orders from ordering.idempotency_keys where key like $1`,
    [`topo-${o.tag}-%`],
  );
  if (Number(keyed[0].keys) !== acked.size || Number(keyed[0].orders) !== acked.size)
    violations.push(`${keyed[0].keys} idempotency records naming ${keyed[0].orders} orders for ${acked.size} acknowledged orders`);
  const { rows: byMail } = await t.primary.pool.query<{ n: string }>(`select count(*) n from ordering.orders where contact->>'email' like $1`, [
    `buyer-${o.tag}-%`,
  ]);
  if (Number(byMail[0].n) !== acked.size) violations.push(`${byMail[0].n} orders carry the run's contact addresses, ${acked.size} were acknowledged`);

  await sleep(1500);
  counted = confirmations();
  const ordersWithoutExactlyOneMail = numbers.filter((n) => counted.get(n)?.ids.size !== 1).length;
  if (ordersWithoutExactlyOneMail) {
    const detail = numbers.filter((n) => counted.get(n)?.ids.size !== 1).map((n) => `${n}: ${counted.get(n)?.ids.size ?? 0} messages`);
    violations.push(`${ordersWithoutExactlyOneMail} orders without exactly one confirmation message (${detail.slice(0, 5).join(', ')})`);
  }
  const confirmationsReceived = [...counted.values()].reduce((a, b) => a + b.ids.size, 0);
  const redeliveries = [...counted.values()].reduce((a, b) => a + b.deliveries - b.ids.size, 0);
  return {
    clients: o.clients,
    orders: acked.size,
    durationMs,
    ordersPerSecond: acked.size / (durationMs / 1000),
    retries,
    stored,
    confirmationsReceived,
    redeliveries,
    ordersWithoutExactlyOneMail,
    mailDrainMs,
    replayMismatches,
    replaySpread,
    spread,
    events,
    violations,
  };
}

/** Figures of {@link maintenanceAndCaches}. */
export interface MaintenanceResult {
  /** ms from the enable call until every instance answered the shop with 503, and from disable until 200 again. */
  enableSpreadMs: number;
  disableSpreadMs: number;
  /** Instances whose log shows the cache clear (the serving one, the others by notification) within 5 s. */
  instancesCleared: number;
  instances: number;
  violations: string[];
}

/** Admin session of the ordering service through the balancer. */
async function orderingAdmin(t: Topology) {
  const session = await TokenSession.password('admin', t.orderingAdminPassword, { baseUrl: t.orderingUrl });
  return createOrderingClient({ baseUrl: t.orderingUrl, auth: session });
}

/** Maintenance mode and clear-caches, called once through the balancer, observed on every instance directly. */
export async function maintenanceAndCaches(t: Topology): Promise<MaintenanceResult> {
  const violations: string[] = [];
  const admin = await orderingAdmin(t);
  const shopStatus = async (i: Instance) => (await fetch(`${i.url}/api/grpc-json/v1/shop/articles`)).status;
  const until = async (want: number): Promise<number> => {
    const start = Date.now();
    while (Date.now() - start < 5_000) {
      const s = await Promise.all(t.ordering.map(shopStatus));
      if (s.every((x) => x === want)) return Date.now() - start;
      await sleep(20);
    }
    violations.push(`not every instance answered the shop with ${want} within 5 s`);
    return Date.now() - start;
  };
  const on = await admin.api.POST('/api/rest/v1/maintenance/enable-maintenance-mode');
  if (on.response.status !== 200) violations.push(`enable answered ${on.response.status}`);
  const enableSpreadMs = await until(503);
  const off = await admin.api.POST('/api/rest/v1/maintenance/disable-maintenance-mode');
  if (off.response.status !== 200) violations.push(`disable answered ${off.response.status}`);
  const disableSpreadMs = await until(200);

  const clearedLines = (i: Instance) => (i.output().match(/caches cleared/g) ?? []).length;
  const before = t.ordering.map(clearedLines);
  const cleared = await admin.api.POST('/api/rest/v1/maintenance/clear-caches');
  if (cleared.response.status !== 200) violations.push(`clear-caches answered ${cleared.response.status}`);
  const start = Date.now();
  let instancesCleared = 0;
  while (Date.now() - start < 5_000) {
    instancesCleared = t.ordering.filter((i, k) => clearedLines(i) > before[k]).length;
    if (instancesCleared === t.ordering.length) break;
    await sleep(50);
  }
  if (instancesCleared !== t.ordering.length) violations.push(`caches cleared on ${instancesCleared} of ${t.ordering.length} instances`);
  return { enableSpreadMs, disableSpreadMs, instancesCleared, instances: t.ordering.length, violations };
}

// ─────────────────────────── (f) rolling restart ───────────────────────────

/** Figures of {@link rollingRestart}. */
export interface RollingRestartResult {
  durationMs: number;
  requests: number;
  /** Requests that failed as the client saw them (no client retry): network error or any status other than the expected. */
  failed: number;
  failures: string[];
  byKind: Record<string, number>;
  events: string[];
  violations: string[];
}

/**
 * Mixed load without client retries (punch uploads, afterId polls, shop article reads, shop orders with
 * Idempotency-Key) while every instance of both services is stopped with SIGTERM, one at a time, started
 * again and awaited UP before the next. Every request must succeed.
 */
export async function rollingRestart(t: Topology, o: { clients: number; tag: string; firstCard: number }): Promise<RollingRestartResult> {
  const failures: string[] = [];
  const byKind: Record<string, number> = {};
  const events: string[] = [];
  let requests = 0;
  let stop = false;
  let seq = 0;
  let card = o.firstCard;
  const t0 = Date.now();
  const modem = `TOPO-${o.tag}-R`;
  const one = async (kind: string, url: string, init: RequestInit, ok: number) => {
    requests++;
    byKind[kind] = (byKind[kind] ?? 0) + 1;
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(20_000) });
      await res.arrayBuffer();
      if (res.status !== ok) failures.push(`${Date.now() - t0} ms ${kind}: ${res.status} from ${res.headers.get('x-served-by')}`);
    } catch (err) {
      failures.push(`${Date.now() - t0} ms ${kind}: ${(err as Error).message} ${(err as { cause?: Error }).cause?.message ?? ''}`);
    }
  };
  const client = async (c: number) => {
    for (let i = 0; !stop; i++) {
      const k = (i + c) % 4;
      if (k === 0) {
        const s = ++seq;
        await one(
          'upload',
          `${t.timingUrl}/api/rest/v1/punches`,
          {
            method: 'POST',
            headers: { apikey: t.timingAdminKey, 'content-type': 'application/json' },
            body: JSON.stringify([{ card: String(s), time: 1_700_000_000_000 + s, code: 31, type: 'Control', modem }]),
          },
          200,
        );
      } else if (k === 1)
        await one('poll', `${t.timingUrl}/api/rest/v1/punches?modem=${modem}&afterId=${Math.max(0, seq - 5)}`, { headers: { apikey: t.timingAdminKey } }, 200);
      else if (k === 2) await one('articles', `${t.orderingUrl}/api/grpc-json/v1/shop/articles`, {}, 200);
      else if (t.ordering.length) {
        const n = card++;
        await one(
          'order',
          `${t.orderingUrl}/api/grpc-json/v1/shop/orders`,
          {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'idempotency-key': `topo-${o.tag}-roll-${n}` },
            body: JSON.stringify(shopOrder(n, `roll-${o.tag}-${n}@example.com`)),
          },
          200,
        );
      }
    }
  };
  const runs = Array.from({ length: o.clients }, (_, c) => client(c));
  await sleep(1000);
  for (const inst of [...t.timing, ...t.ordering]) {
    events.push(`${Date.now() - t0} ms: SIGTERM ${inst.name}`);
    const code = await inst.stop();
    events.push(`${Date.now() - t0} ms: ${inst.name} exited ${code}`);
    await inst.start();
    await t.waitUp(inst.name);
    events.push(`${Date.now() - t0} ms: ${inst.name} UP`);
    await sleep(500);
  }
  stop = true;
  await Promise.all(runs);
  const violations = failures.length ? [`${failures.length} of ${requests} requests failed: ${failures.slice(0, 5).join('; ')}`] : [];
  return { durationMs: Date.now() - t0, requests, failed: failures.length, failures, byKind, events, violations };
}

// ─────────────────────────── (b) SSE and long-poll clients resuming after their instance died ───────────────────────────

/** Figures of {@link liveResume}. */
export interface LiveResumeResult {
  streams: number;
  longPolls: number;
  punches: number;
  /** Reconnects of SSE clients (with `Last-Event-ID`) and repeated long-polls after a failure. */
  reconnects: number;
  longPollRetries: number;
  /** Per client: punches missed and received twice (all must be 0). */
  missed: number[];
  repeated: number[];
  events: string[];
  violations: string[];
}

/**
 * `streams` SSE clients (`getPunchStream`) and `longPolls` long-poll clients (`getPunches` with `wait`) follow
 * the punches of uploaders through the balancer while `disruption` kills a timing instance. A stream that
 * ends or breaks reconnects through the balancer with `Last-Event-ID` = the last id received (as EventSource
 * does); a failed long-poll is repeated with the same `afterId`. Every client must hold every punch once.
 */
export async function liveResume(
  t: Topology,
  o: { streams: number; longPolls: number; uploaders: number; durationMs: number; tag: string; disruption?: Disruption },
): Promise<LiveResumeResult> {
  const modems = Array.from({ length: 4 }, (_, i) => `TOPO-${o.tag}-${i + 1}`);
  const violations: string[] = [];
  const events: string[] = [];
  const filter = `modem=${modems.join(',')}`;
  const received: Map<string, number>[] = [];
  let reconnects = 0;
  let longPollRetries = 0;
  const abort = new AbortController();
  const t0 = Date.now();

  const stream = async (k: number) => {
    const got = new Map<string, number>();
    received.push(got);
    let lastId: string | undefined;
    while (!abort.signal.aborted) {
      try {
        const res = await fetch(`${t.timingUrl}/api/rest/v1/punches/stream?${filter}`, {
          headers: { apikey: t.timingAdminKey, accept: 'text/event-stream', ...(lastId ? { 'last-event-id': lastId } : {}) },
          signal: abort.signal,
        });
        if (res.status !== 200 || !res.body) {
          await res.arrayBuffer();
          if (res.status < 500) violations.push(`stream ${k} answered ${res.status}`);
        } else {
          await readEventStream(
            res.body,
            (e) => {
              if (e.event !== 'punch') return;
              const p = JSON.parse(e.data) as { id: number; modem: string; card: string };
              if (lastId !== undefined && p.id <= Number(lastId)) violations.push(`stream ${k}: id ${p.id} after ${lastId}`);
              lastId = e.id;
              const key = `${p.modem}/${p.card}`;
              got.set(key, (got.get(key) ?? 0) + 1);
            },
            undefined,
            abort.signal,
          );
        }
      } catch {
        // instance gone mid-stream, or our own abort
      }
      if (abort.signal.aborted) return;
      reconnects++;
      await sleep(100);
    }
  };
  const longPoll = async (k: number) => {
    const got = new Map<string, number>();
    received.push(got);
    let afterId = 0;
    while (!abort.signal.aborted) {
      try {
        const res = await fetch(`${t.timingUrl}/api/rest/v1/punches?${filter}&afterId=${afterId}&wait=5`, {
          headers: { apikey: t.timingAdminKey },
          signal: abort.signal,
        });
        if (res.status === 200) {
          for (const p of (await res.json()) as { id: number; modem: string; card: string }[]) {
            afterId = Math.max(afterId, p.id);
            const key = `${p.modem}/${p.card}`;
            got.set(key, (got.get(key) ?? 0) + 1);
          }
          continue;
        }
        await res.arrayBuffer();
        if (res.status < 500) violations.push(`long-poll ${k} answered ${res.status}`);
      } catch {
        if (abort.signal.aborted) return;
      }
      longPollRetries++;
      await sleep(100);
    }
  };
  const clients = [...Array.from({ length: o.streams }, (_, k) => stream(k)), ...Array.from({ length: o.longPolls }, (_, k) => longPoll(o.streams + k))];
  await sleep(300); // every client connected before the first punch
  const up = startUploaders(t, { uploaders: o.uploaders, modems, batch: [1, 5], violations });
  const disruption = o.disruption ? disrupt(t, o.disruption, events, t0) : Promise.resolve();
  await sleep(o.durationMs);
  await up.stop();
  await disruption;
  const until = Date.now() + 20_000;
  while (Date.now() < until && received.some((g) => g.size < up.expected.size)) await sleep(50);
  await sleep(300); // room for a repeat to show up
  abort.abort();
  await Promise.all(clients);
  const missed = received.map((got) => [...up.expected].filter((key) => !got.has(key)).length);
  const repeated = received.map((got) => [...got.values()].filter((c) => c > 1).length);
  missed.forEach((m, k) => m && violations.push(`client ${k} missed ${m} punches`));
  repeated.forEach((r, k) => r && violations.push(`client ${k} received ${r} punches twice`));
  return { streams: o.streams, longPolls: o.longPolls, punches: up.expected.size, reconnects, longPollRetries, missed, repeated, events, violations };
}

// ─────────────────────────── (d) rate limits shared through Redis ───────────────────────────

/** Figures of {@link sharedRateLimit}. */
export interface SharedRateLimitResult {
  limitPerMinute: number;
  requests: number;
  accepted: number;
  limited: number;
  byInstance: Record<string, { accepted: number; limited: number }>;
  violations: string[];
}

/**
 * Discount-code validations of one caller (`RATE_LIMIT_DISCOUNT_VALIDATIONS_PER_MINUTE`, default 120 per
 * minute; the caller is the client address HAProxy forwards, a fresh documentation address per run) spread
 * over every ordering instance: exactly the limit is accepted in total, not the limit per instance.
 */
export async function sharedRateLimit(t: Topology, o: { limitPerMinute: number; requests: number; callerIp: string }): Promise<SharedRateLimitResult> {
  const byInstance: Record<string, { accepted: number; limited: number }> = {};
  let accepted = 0;
  let limited = 0;
  const violations: string[] = [];
  const body = JSON.stringify({
    codes: ['NO-SUCH-CODE'],
    orderItems: [{ articleNumber: 'SIAC1', quantity: 1, configuration: { cardNumber: '8999999', personalDataFirstName: 'Topo' } }],
  });
  for (let i = 0; i < o.requests; i += 10) {
    await Promise.all(
      Array.from({ length: Math.min(10, o.requests - i) }, async () => {
        const res = await fetch(`${t.orderingUrl}/api/grpc-json/v1/shop/discount-codes/validate`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': o.callerIp },
          body,
        });
        await res.arrayBuffer();
        const by = res.headers.get('x-served-by') ?? '?';
        byInstance[by] ??= { accepted: 0, limited: 0 };
        if (res.status === 200) {
          accepted++;
          byInstance[by].accepted++;
        } else if (res.status === 429) {
          limited++;
          byInstance[by].limited++;
          if (!res.headers.get('retry-after')) violations.push('429 without Retry-After');
        } else violations.push(`validation answered ${res.status}`);
      }),
    );
  }
  if (accepted !== Math.min(o.limitPerMinute, o.requests)) violations.push(`${accepted} accepted, limit ${o.limitPerMinute} per minute across all instances`);
  return { limitPerMinute: o.limitPerMinute, requests: o.requests, accepted, limited, byInstance, violations };
}

// ─────────────────────────── (e) replica lag and reads ───────────────────────────

/** Figures of {@link replicaLag}. */
export interface ReplicaLagResult {
  samples: number;
  /** Time from an upload's acknowledgement until its punch was readable on the standby, ms. */
  visibleP50Ms: number;
  visibleP95Ms: number;
  visibleMaxMs: number;
  /** `replay_lag` of pg_stat_replication at the end of the load (ms; null when idle). */
  replayLagMs: number | null;
  /** Punches of the run read from the primary and from the standby (by id order) after catch-up; equal when both lists match. */
  primaryRows: number;
  replicaRows: number;
  readsEqual: boolean;
  violations: string[];
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : 0;
}

/**
 * While `uploaders` load the primary through the balancer, a probe uploads one punch at a time and measures
 * how long the standby takes to show it (`samples` probes). Afterwards the run's punches read from the standby
 * equal those from the primary.
 */
export async function replicaLag(t: Topology, o: { uploaders: number; samples: number; tag: string }): Promise<ReplicaLagResult> {
  if (!t.replica) throw new Error('replicaLag needs a topology started with replica: true');
  const violations: string[] = [];
  const modems = [`TOPO-${o.tag}-1`, `TOPO-${o.tag}-2`];
  const up = startUploaders(t, { uploaders: o.uploaders, modems: [modems[0]], violations, firstCard: 1_000_000 });
  const lags: number[] = [];
  let replayLagMs: number | null = null;
  for (let i = 0; i < o.samples; i++) {
    const card = String(i + 1);
    const res = await fetch(`${t.timingUrl}/api/rest/v1/punches`, {
      method: 'POST',
      headers: { apikey: t.timingAdminKey, 'content-type': 'application/json' },
      body: JSON.stringify([{ card, time: 1_700_000_000_000 + i, code: 99, type: 'Control', modem: modems[1] }]),
    });
    await res.arrayBuffer();
    if (res.status !== 200) {
      violations.push(`probe upload answered ${res.status}`);
      continue;
    }
    const acked = Date.now();
    for (;;) {
      const { rows } = await t.replica.pool.query('select 1 from timing.punches where modem = $1 and card = $2', [modems[1], card]);
      if (rows.length) break;
      if (Date.now() - acked > 10_000) {
        violations.push(`probe ${card} not on the standby after 10 s`);
        break;
      }
      await sleep(1);
    }
    lags.push(Date.now() - acked);
    if (i === o.samples - 1) {
      const { rows } = await t.primary.pool.query<{ ms: number | null }>(
        `select (extract(epoch from replay_lag) * 1000)::float8 ms from pg_stat_replication limit 1`,
      );
      replayLagMs = rows[0]?.ms ?? null;
    }
  }
  await up.stop();
  const read = async (db: NonNullable<Topology['replica']>) =>
    (await db.pool.query<{ id: string; card: string }>('select id, card from timing.punches where modem = any($1) order by id', [modems])).rows
      .map((r) => `${r.id}:${r.card}`)
      .join(',');
  const primaryList = await read(t.primary);
  let replicaList = '';
  const until = Date.now() + 10_000;
  while (Date.now() < until && (replicaList = await read(t.replica)) !== primaryList) await sleep(50);
  const readsEqual = replicaList === primaryList;
  if (!readsEqual) violations.push('the standby answered other punches than the primary after catch-up');
  return {
    samples: lags.length,
    visibleP50Ms: quantile(lags, 0.5),
    visibleP95Ms: quantile(lags, 0.95),
    visibleMaxMs: Math.max(0, ...lags),
    replayLagMs,
    primaryRows: primaryList ? primaryList.split(',').length : 0,
    replicaRows: replicaList ? replicaList.split(',').length : 0,
    readsEqual,
    violations,
  };
}

// ─────────────────────────── (g) throughput per number of instances ───────────────────────────

/** CPU seconds used during a phase, by process group. */
export type CpuShare = Record<'services' | 'postgres' | 'haproxy' | 'loadGenerator', number>;

/** Figures of {@link throughput}. */
export interface ThroughputResult {
  instances: number;
  uploadsPerSecond: number;
  punchesPerSecond: number;
  pollsPerSecond: number;
  uploadSeconds: number;
  pollSeconds: number;
  uploadCpu: CpuShare;
  pollCpu: CpuShare;
  /** What PostgreSQL's active backends were doing, sampled every 100 ms: `CPU` or `<wait type>:<wait event>` → share of samples. */
  uploadWaits: Record<string, number>;
  pollWaits: Record<string, number>;
  /** The machine's 1-minute load average at the end of each phase (other work on the machine shows here). */
  loadAverage: [number, number];
  violations: string[];
}

/** Samples pg_stat_activity of the topology's database every 100 ms until stopped; answers shares per state. */
function sampleWaits(t: Topology): { stop(): Promise<Record<string, number>> } {
  const counts: Record<string, number> = {};
  let total = 0;
  let stopped = false;
  const run = (async () => {
    while (!stopped) {
      const { rows } = await t.primary.pool.query<{ w: string; n: string }>(
        `select coalesce(wait_event_type || ':' || wait_event, 'CPU') w, count(*) n from pg_stat_activity
          where datname = current_database() and state = 'active' and pid <> pg_backend_pid() and backend_type = 'client backend' group by 1`,
      );
      for (const r of rows) {
        counts[r.w] = (counts[r.w] ?? 0) + Number(r.n);
        total += Number(r.n);
      }
      await sleep(100);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await run;
      return Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, v / (total || 1)]));
    },
  };
}

/** CPU seconds (user + system) of the given pids from /proc, children of PostgreSQL's postmaster included. */
function cpuSeconds(pids: number[]): number {
  const tick = 100; // USER_HZ on Linux
  let total = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += (Number(f[11]) + Number(f[12])) / tick;
    } catch {
      // process gone
    }
  }
  return total;
}

/**
 * Upload throughput (`uploaders` clients, batches of 20) and then poll throughput (`pollers` clients, each
 * poll a page of up to 1000 punches of an 8-modem filter from a random afterId), each for `phaseMs`, through
 * the balancer; with the CPU each process group used, which names the bottleneck.
 */
export async function throughput(
  t: Topology,
  o: { uploaders: number; pollers: number; phaseMs: number; tag: string; processes: () => Record<keyof CpuShare, number[]> },
): Promise<ThroughputResult> {
  const violations: string[] = [];
  const modems = Array.from({ length: 8 }, (_, i) => `TOPO-${o.tag}-${i + 1}`);
  const cpu = () => {
    const p = o.processes();
    const self = process.cpuUsage();
    return {
      services: cpuSeconds(p.services),
      postgres: cpuSeconds(p.postgres),
      haproxy: cpuSeconds(p.haproxy),
      loadGenerator: (self.user + self.system) / 1e6,
    };
  };
  const diff = (a: CpuShare, b: CpuShare): CpuShare => ({
    services: b.services - a.services,
    postgres: b.postgres - a.postgres,
    haproxy: b.haproxy - a.haproxy,
    loadGenerator: b.loadGenerator - a.loadGenerator,
  });

  let c0 = cpu();
  let s0 = Date.now();
  let waits = sampleWaits(t);
  const up = startUploaders(t, { uploaders: o.uploaders, modems, batch: [20, 20], violations });
  await sleep(o.phaseMs);
  await up.stop();
  const uploadSeconds = (Date.now() - s0) / 1000;
  const uploadCpu = diff(c0, cpu());
  const uploadWaits = await waits.stop();
  const uploadLoad = os.loadavg()[0];
  const uploads = up.uploads;

  const { rows } = await t.primary.pool.query<{ max: string }>('select max(id) max from timing.punches where modem = any($1)', [modems]);
  const maxId = Number(rows[0].max ?? 0);
  let polls = 0;
  let stop = false;
  c0 = cpu();
  s0 = Date.now();
  waits = sampleWaits(t);
  const poller = async () => {
    while (!stop) {
      const afterId = Math.max(0, maxId - 1000 - Math.floor(Math.random() * 5000));
      try {
        const res = await fetch(`${t.timingUrl}/api/rest/v1/punches?modem=${modems.join(',')}&afterId=${afterId}`, { headers: { apikey: t.timingAdminKey } });
        await res.arrayBuffer();
        if (res.status === 200) polls++;
        else violations.push(`poll answered ${res.status}`);
      } catch (err) {
        violations.push(`poll failed: ${(err as Error).message}`);
      }
    }
  };
  const runs = Array.from({ length: o.pollers }, () => poller());
  await sleep(o.phaseMs);
  stop = true;
  await Promise.all(runs);
  const pollSeconds = (Date.now() - s0) / 1000;
  const pollCpu = diff(c0, cpu());
  const pollWaits = await waits.stop();
  return {
    instances: t.timing.length,
    uploadsPerSecond: uploads / uploadSeconds,
    punchesPerSecond: (uploads * 20) / uploadSeconds,
    pollsPerSecond: polls / pollSeconds,
    uploadSeconds,
    pollSeconds,
    uploadCpu,
    pollCpu,
    uploadWaits,
    pollWaits,
    loadAverage: [uploadLoad, os.loadavg()[0]],
    violations: [...new Set(violations)].slice(0, 10),
  };
}
