/**
 * Load scenarios through the balancer of a running {@link Topology} (SCALING.md). Each returns its figures
 * and the violations it found (empty = the guarantee held); the caller asserts or reports them.
 * Guarantees checked: the polling guarantee of `getPunches` and `getPunchStream` (specs/timing.yaml: never
 * skip, never repeat), order idempotency and one confirmation e-mail per order (specs/ordering.yaml
 * `createShopOrder`), maintenance mode and `clearCaches` on every instance, shared rate limits.
 */
import { createOrderingClient, TokenSession } from '@sports-timing/ordering-client';
import { readEventStream } from '../../packages/timing-client/src';
import type { Instance, Topology } from './topology';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Counts of which instance answered (`X-Served-By`), and how often two consecutive requests of one client went to different instances. */
export class Spread {
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
  const headers = { apikey: t.timingAdminKey, 'content-type': 'application/json' };
  const [minBatch, maxBatch] = o.batch ?? [1, 20];
  const expected = new Set<string>();
  let seq = 0;
  let uploads = 0;
  let uploadRetries = 0;
  let polls = 0;
  let pollRetries = 0;
  const violations: string[] = [];
  const events: string[] = [];
  const spread = new Spread();
  let stop = false;
  let lastUploadAt = 0;
  const t0 = Date.now();

  const uploader = async () => {
    while (!stop) {
      const n = minBatch + Math.floor(Math.random() * (maxBatch - minBatch + 1));
      const batch = Array.from({ length: n }, () => {
        const s = ++seq;
        return { card: String(s), time: 1_700_000_000_000 + s, code: 31 + (s % 200), type: 'Control', modem: modems[s % modems.length] };
      });
      const body = JSON.stringify(batch);
      for (;;) {
        let status = 0;
        try {
          const res = await fetch(`${t.timingUrl}/api/rest/v1/punches`, { method: 'POST', headers, body, signal: AbortSignal.timeout(20_000) });
          status = res.status;
          await res.arrayBuffer();
        } catch {
          status = 0;
        }
        if (status === 200) break;
        if (status >= 400 && status < 500) {
          violations.push(`upload answered ${status}`);
          break;
        }
        uploadRetries++;
        await sleep(50);
      }
      uploads++;
      for (const p of batch) expected.add(`${p.modem}/${p.card}`);
      lastUploadAt = Date.now();
    }
  };

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
        const res = await fetch(`${t.timingUrl}/api/rest/v1/punches?modem=${modems.join(',')}&afterId=${afterId}`, { headers: { apikey: t.timingAdminKey }, signal: AbortSignal.timeout(20_000) });
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
        catchUp.push(Date.now() - lastUploadAt);
        return;
      }
      if (uploadsDone && Date.now() - lastUploadAt > 30_000) {
        violations.push(`poller ${k}: gave up waiting, ${got.size} of ${expected.size}`);
        return;
      }
      if (page.length === 0) await sleep(10);
    }
  };

  const pollerRuns = Array.from({ length: o.pollers }, (_, k) => poller(k));
  const uploaderRuns = Array.from({ length: o.uploaders }, () => uploader());
  const disruption = o.disruption ? disrupt(t, o.disruption, events, t0) : Promise.resolve();
  await sleep(o.durationMs);
  stop = true;
  await Promise.all(uploaderRuns);
  const durationMs = Date.now() - t0;
  uploadsDone = true;
  await Promise.all(pollerRuns);
  await disruption;

  const missed = received.map((got) => [...expected].filter((k) => !got.has(k)).length);
  const repeated = received.map((got) => [...got.values()].filter((c) => c > 1).length);
  missed.forEach((m, k) => m && violations.push(`poller ${k} missed ${m} punches`));
  repeated.forEach((r, k) => r && violations.push(`poller ${k} received ${r} punches twice`));
  const { rows } = await t.primary.pool.query<{ n: string; d: string }>('select count(*) n, count(distinct (modem, card)) d from timing.punches where modem = any($1)', [modems]);
  const stored = Number(rows[0].n);
  const storedDistinct = Number(rows[0].d);
  if (stored !== expected.size || storedDistinct !== expected.size) violations.push(`database holds ${stored} punches (${storedDistinct} distinct) of ${expected.size} acknowledged`);
  return {
    uploaders: o.uploaders,
    pollers: o.pollers,
    durationMs,
    uploads,
    punches: expected.size,
    uploadsPerSecond: uploads / (durationMs / 1000),
    polls,
    pollsPerSecond: polls / (durationMs / 1000),
    uploadRetries,
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
  confirmationsReceived: number;
  ordersWithoutExactlyOneMail: number;
  /** Seconds from the last acknowledgement until the last confirmation arrived at the SMTP server. */
  mailDrainMs: number;
  /** Replays of every key through the balancer: answered another order, and on how many instances replays landed. */
  replayMismatches: number;
  replaySpread: Spread;
  spread: Spread;
  events: string[];
  violations: string[];
}

/** The order body of the demo shop (article `SIAC1` with a personal card number). */
export function shopOrder(card: number, email: string): unknown {
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
 * per order, and replaying every key (on alternating instances) answers the same order.
 */
export async function orderDelivery(t: Topology, o: { clients: number; orders: number; firstCard: number; tag: string; disruption?: Disruption }): Promise<OrderDeliveryResult> {
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
      let status = 0;
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
  const disruption = o.disruption ? disrupt(t, o.disruption, events, t0) : Promise.resolve();
  await Promise.all(Array.from({ length: o.clients }, (_, c) => client(c)));
  const durationMs = Date.now() - t0;
  await disruption;

  // Replays: the same key (and body) again, twice per key from one client, so consecutive replays alternate instances.
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

  const numbers = [...acked.values()].map((a) => a.orderNumber);
  const { rows } = await t.primary.pool.query<{ order_number: string; n: string }>('select order_number, count(*) n from ordering.orders where order_number = any($1) group by 1', [numbers]);
  const stored = rows.reduce((s, r) => s + Number(r.n), 0);
  if (rows.length !== numbers.length || rows.some((r) => Number(r.n) !== 1)) violations.push(`stored ${stored} rows for ${numbers.length} acknowledged orders (${rows.length} distinct)`);
  // Every key of the run names one order, and no order of the run exists without a key (no half-retried duplicate).
  const { rows: keyed } = await t.primary.pool.query<{ keys: string; orders: string }>(
    `select count(*) keys, count(distinct order_id) orders from ordering.idempotency_keys where key like $1`,
    [`topo-${o.tag}-%`],
  );
  if (Number(keyed[0].keys) !== acked.size || Number(keyed[0].orders) !== acked.size) violations.push(`${keyed[0].keys} idempotency records naming ${keyed[0].orders} orders for ${acked.size} acknowledged orders`);
  const { rows: byMail } = await t.primary.pool.query<{ n: string }>(`select count(*) n from ordering.orders where contact->>'email' like $1`, [`buyer-${o.tag}-%`]);
  if (Number(byMail[0].n) !== acked.size) violations.push(`${byMail[0].n} orders carry the run's contact addresses, ${acked.size} were acknowledged`);

  // Confirmations at the SMTP server: wait for one per order, then a little longer for duplicates.
  const confirmations = () => {
    const count = new Map<string, number>();
    for (const m of t.smtp!.received) {
      if (/payment link/i.test(m.parsed.subject ?? '')) continue;
      const text = `${m.parsed.subject ?? ''}\n${m.parsed.text ?? ''}`;
      for (const n of numbers) if (text.includes(n)) count.set(n, (count.get(n) ?? 0) + 1);
    }
    return count;
  };
  const drainStart = Date.now();
  let counted = confirmations();
  while (counted.size < numbers.length && Date.now() - drainStart < 60_000) {
    await sleep(200);
    counted = confirmations();
  }
  const mailDrainMs = Date.now() - drainStart;
  await sleep(1500);
  counted = confirmations();
  const ordersWithoutExactlyOneMail = numbers.filter((n) => counted.get(n) !== 1).length;
  if (ordersWithoutExactlyOneMail) violations.push(`${ordersWithoutExactlyOneMail} orders without exactly one confirmation mail`);
  const confirmationsReceived = [...counted.values()].reduce((a, b) => a + b, 0);
  return {
    clients: o.clients,
    orders: acked.size,
    durationMs,
    ordersPerSecond: acked.size / (durationMs / 1000),
    retries,
    stored,
    confirmationsReceived,
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
export async function orderingAdmin(t: Topology) {
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
      failures.push(`${Date.now() - t0} ms ${kind}: ${(err as Error).message} ${String((err as { cause?: unknown }).cause ?? '')}`);
    }
  };
  const client = async (c: number) => {
    for (let i = 0; !stop; i++) {
      const k = (i + c) % 4;
      if (k === 0) {
        const s = ++seq;
        await one('upload', `${t.timingUrl}/api/rest/v1/punches`, { method: 'POST', headers: { apikey: t.timingAdminKey, 'content-type': 'application/json' }, body: JSON.stringify([{ card: String(s), time: 1_700_000_000_000 + s, code: 31, type: 'Control', modem }]) }, 200);
      } else if (k === 1) await one('poll', `${t.timingUrl}/api/rest/v1/punches?modem=${modem}&afterId=${Math.max(0, seq - 5)}`, { headers: { apikey: t.timingAdminKey } }, 200);
      else if (k === 2) await one('articles', `${t.orderingUrl}/api/grpc-json/v1/shop/articles`, {}, 200);
      else if (t.ordering.length) {
        const n = card++;
        await one('order', `${t.orderingUrl}/api/grpc-json/v1/shop/orders`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': `topo-${o.tag}-roll-${n}` }, body: JSON.stringify(shopOrder(n, `roll-${o.tag}-${n}@example.com`)) }, 200);
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
