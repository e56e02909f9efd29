/**
 * The punch scenarios through the balancer of a running {@link Topology} (SCALING.md): (a) uploaders and
 * afterId pollers while instances die, (b) SSE and long-poll clients resuming after their instance died,
 * (e) replica lag. Each checks the polling guarantee of `getPunches` and `getPunchStream` (specs/timing.yaml:
 * never skip, never repeat) and returns its figures and violations (empty = the guarantee held).
 */
import { readEventStream } from '../../packages/timing-client/src';
import { disrupt, quantile, sleep, Spread, startUploaders, type Disruption } from './load-tools';
import type { Topology } from './topology';
import { testTime } from '@sports-timing/shared/src/test-time';

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
 * database every punch once. `disruption` kills or stops an instance, or upgrades them all, meanwhile; the
 * uploads go on until it is over.
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
          signal: AbortSignal.timeout(testTime(20_000)),
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
  await Promise.all([sleep(o.durationMs), disruption]);
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
  const until = Date.now() + testTime(20_000);
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
  const until = Date.now() + testTime(10_000);
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
