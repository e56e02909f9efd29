/**
 * One thread's part of the championship evening (championship-load.ts runs both): the spectators and streams,
 * or the modems and freshness probes, with the send times of the uploads shared between the threads.
 */
import http from 'node:http';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import pg from 'pg';
import * as hdr from 'hdr-histogram-js';
import type { ChampionshipSpec, SpectatorKind } from './load-spec';

/** One client's record for the gap-free check (load-spec.ts `LoadResult.followed`). */
type Rec = { start: number; last: number; count: number; sum: number; outOfOrder: number; note?: string };

/** Cards of the uploaded punches: one per punch, above the generated 7-digit cards, below the 24-bit limit. */
const CARD_BASE = 10_000_000;

/** A full page: the client asks again at once instead of waiting for its interval. */
const PAGE = 1000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
const between = ([lo, hi]: [number, number]) => (lo + Math.random() * (hi - lo)) * 1000;

function send(
  base: URL,
  agent: http.Agent,
  o: { method: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: string },
): Promise<{ status: number; body: string; cache: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: base.hostname, port: base.port, path: o.path, method: o.method, headers: o.headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), cache: String(res.headers['x-cache-status'] ?? '') }),
      );
      res.on('error', reject);
    });
    req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(o.body);
  });
}

/** (id, card) of each punch of a poll's body: JSON array, CSV with a header row, or ROC lines `id;code;card;time`. */
function rows(body: string, format: 'json' | 'csv' | 'roc'): { id: number; card: string }[] {
  if (format === 'json') return (JSON.parse(body) as { id: number; card: string | number }[]).map((p) => ({ id: Number(p.id), card: String(p.card) }));
  const lines = body.split(/\r?\n/).filter((l) => l.length > 0);
  if (format === 'roc') {
    return lines.map((l) => {
      const f = l.split(';');
      return { id: Number(f[0]), card: f[2] };
    });
  }
  const header = (lines.shift() ?? '').split(',');
  const idAt = header.indexOf('id');
  const cardAt = header.indexOf('card');
  return lines.map((l) => {
    const f = l.split(',');
    return { id: Number(f[idAt]), card: f[cardAt] };
  });
}

/** Figures of a latency histogram (ms). */
type Figures = { count: number; p50: number; p99: number; max: number };

/**
 * What the two threads share (SharedArrayBuffers): `sentAt[seq]`, when the upload of card `CARD_BASE + seq` was
 * sent (ms since the epoch, `performance.timeOrigin + performance.now()`, 0 while unsent); `burst[seq]`, 1 for the
 * mass start's punches; `control[0]`, the next seq; `control[1]`, 1 once the modems stopped.
 */
export interface ChampionshipShared {
  sentAt: Float64Array;
  burst: Uint8Array;
  control: Int32Array;
}

/** Which clients a thread runs: the spectators and streams, or the modems and probes. */
export type ChampionshipSide = 'clients' | 'modems';

/** One thread's part of the evening's figures ({@link runSide}); the clients' thread merges both. */
export interface SideResult {
  followed: Rec[];
  /** The client kind of each entry of `followed` (a spectator's kind, `probe` or `stream`). */
  kinds: string[];
  statusBuckets: Record<string, number>;
  responses: number;
  polls: Record<SpectatorKind, number>;
  probePolls: number;
  pollErrors: number;
  streamsOpen: number;
  streamDeliveries: number;
  uploaded: number;
  uploadErrors: number;
  delivery: Figures;
  /** The 90th percentile of `delivery` (ms), for the run's `p90`. */
  deliveryP90: number;
  streamDelivery: Figures;
  visible: Figures;
  visibleBurst: Figures;
  upload: Figures;
  uploadBurst: Figures;
  loopDelay: { p50: number; p99: number; max: number };
  finalId: number;
  elapsedSeconds: number;
  totalSeconds: number;
}

/**
 * One thread's part of the evening: the spectators and streams (`clients`) or the modems and probes (`modems`),
 * from `startAt` (ms since the epoch, the same for both threads). Each thread reads the scope's newest id once
 * the modems stopped (`control[1]`) and its clients read until they have it.
 */
export async function runSide(
  c: ChampionshipSpec,
  durationSeconds: number,
  shared: ChampionshipShared,
  side: ChampionshipSide,
  startAt: number,
): Promise<SideResult> {
  const base = new URL(c.baseUrl);
  const upload = new URL(c.uploadUrl);
  const histogram = () => hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: 3 });
  const latencyUs = histogram();
  const streamUs = histogram();
  const visibleUs = histogram();
  /** The probes' arrivals of the mass start's punches apart (`visibleUs` holds the others'). */
  const visibleBurstUs = histogram();
  /** Upload round trips (sent → answered), the mass start's apart. */
  const uploadUs = histogram();
  const uploadBurstUs = histogram();
  const buckets: Record<string, number> = { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
  const polls: Record<SpectatorKind, number> = { meos: 0, live: 0, roc: 0 };
  const followed: Rec[] = [];
  const kinds: string[] = [];
  let responses = 0;
  let pollErrors = 0;
  let uploaded = 0;
  let uploadErrors = 0;
  let streamsOpen = 0;
  let streamDeliveries = 0;
  let probePolls = 0;
  /** The scope's newest id once the modems stopped (Infinity before: nobody is done). */
  let finalId = Infinity;
  // How late this thread runs its own timers and reads: every latency it measures includes it.
  const loopDelay = monitorEventLoopDelay({ resolution: 20 });
  loopDelay.enable();
  const epochNow = () => performance.timeOrigin + performance.now();
  await sleep(startAt - epochNow());
  const start = performance.now();
  const end = start + durationSeconds * 1000;
  const deadline = end + c.catchUpSeconds * 1000;

  const take = (rec: Rec, list: { id: number; card: string }[], into: hdr.Histogram): number => {
    const now = epochNow();
    let fresh = 0;
    for (const p of list) {
      if (p.id <= rec.last) {
        rec.outOfOrder++;
        continue;
      }
      rec.last = p.id;
      rec.count++;
      rec.sum += p.id;
      fresh++;
      const seq = Number(p.card) - CARD_BASE;
      const at = seq >= 0 && seq < shared.sentAt.length ? shared.sentAt[seq] : 0;
      if (at === 0) continue;
      const us = Math.max(1, Math.round((now - at) * 1000));
      (into === visibleUs && shared.burst[seq] === 1 ? visibleBurstUs : into).recordValue(us);
    }
    return fresh;
  };

  /** A spectator's poll loop; a probe's (`probe`) arrivals and polls are counted apart. */
  const spectator = async (s: ChampionshipSpec['spectators'][number], probe = false) => {
    const rec: Rec = { start: c.startAfterId, last: c.startAfterId, count: 0, sum: 0, outOfOrder: 0 };
    followed.push(rec);
    kinds.push(probe ? 'probe' : s.kind);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    // Clients were started at different moments: the first poll falls anywhere in the first interval.
    await sleep(Math.random() * s.intervalSeconds[1] * 1000);
    try {
      while (rec.last < finalId && performance.now() < deadline) {
        let full = false;
        try {
          const r = await send(base, agent, { method: 'GET', path: s.path.replace('{afterId}', String(rec.last)), headers: s.headers });
          responses++;
          const bucket = `${Math.floor(r.status / 100)}xx`;
          if (bucket in buckets) buckets[bucket]++;
          if (r.status === 200) {
            if (probe) probePolls++;
            else polls[s.kind]++;
            const list = rows(r.body, s.format);
            rec.note = `last answer at ${((performance.now() - start) / 1000).toFixed(1)} s: ${r.status} ${r.cache}, ${list.length} rows after ${rec.last}`;
            take(rec, list, probe ? visibleUs : latencyUs);
            full = list.length >= PAGE;
          }
        } catch {
          pollErrors++;
        }
        if (!full) await sleep(Math.min(between(s.intervalSeconds), deadline - performance.now()));
      }
    } finally {
      agent.destroy();
    }
  };

  const requests: http.ClientRequest[] = [];
  const stream = (path: string) =>
    new Promise<void>((resolve) => {
      const rec: Rec = { start: c.startAfterId, last: c.startAfterId, count: 0, sum: 0, outOfOrder: 0 };
      followed.push(rec);
      kinds.push('stream');
      const req = http.request({ host: base.hostname, port: base.port, path, method: 'GET', headers: { accept: 'text/event-stream' }, agent: false }, (res) => {
        if (res.statusCode === 200) streamsOpen++;
        let rest = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const lines = (rest + chunk).split('\n');
          rest = lines.pop() ?? '';
          const list: { id: number; card: string }[] = [];
          for (const line of lines) {
            if (!line.startsWith('data: ')) continue;
            const p = JSON.parse(line.slice(6)) as { id?: number; card?: string };
            if (p.id !== undefined) list.push({ id: Number(p.id), card: String(p.card) });
          }
          streamDeliveries += take(rec, list, streamUs);
        });
        res.on('error', () => undefined);
        resolve();
      });
      req.on('error', () => {
        pollErrors++;
        resolve();
      });
      req.end();
      requests.push(req);
    });

  const modem = async (m: { serial: string; key: string }, i: number) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    // The mass start: every modem once within one second, in turn.
    let burst: number | null = start + c.burstAtSeconds * 1000 + (i * 1000) / Math.max(1, c.modems.length);
    let regular = start + between(c.modemIntervalSeconds);
    try {
      for (;;) {
        const due: number = burst !== null && burst < regular ? burst : regular;
        if (due >= end) break;
        await sleep(due - performance.now());
        const seq = Atomics.add(shared.control, 0, 1);
        if (seq >= shared.sentAt.length) throw new Error('championship: more punches than the shared send times hold');
        const isBurst = due === burst;
        if (isBurst) {
          burst = null;
          shared.burst[seq] = 1;
        } else regular += between(c.modemIntervalSeconds);
        const card = String(CARD_BASE + seq);
        const body = JSON.stringify([{ card, time: Date.now(), code: 31 + (i % 200), type: 'Control', modem: m.serial }]);
        const sent = epochNow();
        shared.sentAt[seq] = sent;
        try {
          const r = await send(upload, agent, {
            method: 'POST',
            path: `${upload.pathname}`,
            headers: { apikey: m.key, 'content-type': 'application/json' },
            body,
          });
          (isBurst ? uploadBurstUs : uploadUs).recordValue(Math.max(1, Math.round((epochNow() - sent) * 1000)));
          if (r.status === 200) uploaded++;
          else uploadErrors++;
        } catch {
          uploadErrors++;
        }
      }
    } finally {
      agent.destroy();
    }
  };

  let clients: Promise<void>[];
  if (side === 'clients') {
    clients = c.spectators.flatMap((s) => Array.from({ length: s.count }, () => spectator(s)));
    if (c.streams) for (let i = 0; i < c.streams.count; i++) await stream(c.streams.path);
    while (Atomics.load(shared.control, 1) === 0) await sleep(100);
  } else {
    clients = c.probes.map((s) => spectator(s, true));
    await Promise.all(c.modems.map((m, i) => modem(m, i)));
    Atomics.store(shared.control, 1, 1);
  }
  const elapsedSeconds = (performance.now() - start) / 1000;
  finalId = await newestId(c);
  await Promise.all(clients);
  const streamRecs = followed.filter((_rec, i) => kinds[i] === 'stream');
  while (streamRecs.some((rec) => rec.last < finalId) && performance.now() < deadline) await sleep(100);
  for (const req of requests) req.destroy();
  const totalSeconds = (performance.now() - start) / 1000;
  const figures = (h: hdr.Histogram): Figures => ({
    count: h.totalCount,
    p50: h.getValueAtPercentile(50) / 1000,
    p99: h.getValueAtPercentile(99) / 1000,
    max: h.maxValue / 1000,
  });
  loopDelay.disable();
  return {
    followed,
    kinds,
    statusBuckets: buckets,
    responses,
    polls,
    probePolls,
    pollErrors,
    streamsOpen,
    streamDeliveries,
    uploaded,
    uploadErrors,
    delivery: figures(latencyUs),
    deliveryP90: latencyUs.getValueAtPercentile(90) / 1000,
    streamDelivery: figures(streamUs),
    visible: figures(visibleUs),
    visibleBurst: figures(visibleBurstUs),
    upload: figures(uploadUs),
    uploadBurst: figures(uploadBurstUs),
    loopDelay: { p50: loopDelay.percentile(50) / 1e6, p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 },
    finalId,
    elapsedSeconds,
    totalSeconds,
  };
}

/** The newest id of the modems' scope (the spectators read until they have it). */
async function newestId(c: ChampionshipSpec): Promise<number> {
  const db = new pg.Client({ connectionString: c.databaseUrl, application_name: 'bench-writer' });
  await db.connect();
  try {
    const { rows: r } = await db.query<{ id: string }>('select coalesce(max(id), $2) as id from timing.punches where modem = any($1)', [
      c.modems.map((m) => m.serial),
      c.startAfterId,
    ]);
    return Number(r[0].id);
  } finally {
    await db.end();
  }
}
