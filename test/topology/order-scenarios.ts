/**
 * The ordering scenarios through the balancer of a running {@link Topology} (SCALING.md): (c) order
 * idempotency and one confirmation e-mail per order (specs/ordering.yaml `createShopOrder`), maintenance mode
 * and `clearCaches` on every instance; (d) rate limits shared by all instances. Each returns its figures and
 * violations (empty = the guarantee held).
 */
import { createOrderingClient, TokenSession } from '@sports-timing/ordering-client';
import { disrupt, sleep, Spread, type Disruption } from './load-tools';
import type { Instance, Topology } from './topology';
import { testTime } from '@sports-timing/shared/src/test-time';

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
 * per order, and replaying every key (on alternating instances) answers the same order. `stalledOrders`
 * orders placed first go to a recipient the SMTP server stalls (a slow relay): their mail must not hold up
 * the others'.
 */
export async function orderDelivery(
  t: Topology,
  o: {
    clients: number;
    orders: number;
    firstCard: number;
    tag: string;
    disruption?: Disruption;
    stalledOrders?: number;
    /** Pause of each client between two orders (ms), so that the orders span a long disruption. */
    paceMs?: number;
    /** Keep placing orders beyond `orders` until the disruption is over. */
    whileDisrupted?: boolean;
  },
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
          signal: AbortSignal.timeout(testTime(20_000)),
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
  let disrupted = o.disruption !== undefined;
  const client = async (c: number) => {
    for (let i = next++; i < o.orders || (o.whileDisrupted && disrupted); i = next++) {
      const key = `topo-${o.tag}-${i}`;
      const placed = await place(key, JSON.stringify(shopOrder(o.firstCard + i, `buyer-${o.tag}-${i}@example.com`)), c, spread);
      if (placed) acked.set(key, placed);
      if (o.paceMs) await sleep(o.paceMs);
    }
  };
  // The slow relay's orders first: their two messages each sit in the relay while the others are placed.
  for (let i = 0; i < (o.stalledOrders ?? 0); i++) {
    await place(`stalled-topo-${o.tag}-${i}`, JSON.stringify(shopOrder(o.firstCard + o.orders + i, `stalled-${o.tag}-${i}@example.com`)), 0, new Spread());
  }
  const disruption = (o.disruption ? disrupt(t, o.disruption, events, t0) : Promise.resolve()).finally(() => (disrupted = false));
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
