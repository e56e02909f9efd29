/**
 * The championship evening in the load process (see {@link ChampionshipSpec}; the harness side is
 * championship.ts): spectators poll at their clients' intervals, each from the newest id it has, SSE streams stay
 * open, and modems post single punches at an evening's rate with one mass-start burst, all through nginx.
 * Every uploaded punch has a card of its own, so each arrival (at a spectator or a stream) is timed from the
 * moment its upload was sent (the spectators' and the streams' arrivals in histograms of their own). Once the modems stopped, every client keeps reading until it has the scope's
 * newest id (or `catchUpSeconds` passed): the harness then checks that each saw every punch exactly once.
 */
import http from 'node:http';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import pg from 'pg';
import * as hdr from 'hdr-histogram-js';
import type { ChampionshipSpec, LoadResult, SpectatorKind } from './load-spec';

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

/** Runs the championship evening (see the module comment); `followed` lists the spectators, the probes, then the streams. */
export async function runChampionship(c: ChampionshipSpec, durationSeconds: number): Promise<LoadResult> {
  const base = new URL(c.baseUrl);
  const upload = new URL(c.uploadUrl);
  const histogram = () => hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: 3 });
  const latencyUs = histogram();
  const streamUs = histogram();
  const visibleUs = histogram();
  /** The probes' arrivals of the mass start's punches apart (`visibleUs` holds the others'). */
  const visibleBurstUs = histogram();
  const burstCards = new Set<string>();
  const buckets: Record<string, number> = { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
  const polls: Record<SpectatorKind, number> = { meos: 0, live: 0, roc: 0 };
  const sentAt = new Map<string, number>();
  const followed: Rec[] = [];
  /** The client kind of each entry of `followed` (a spectator's kind, `probe` or `stream`). */
  const kinds: string[] = [];
  let responses = 0;
  let pollErrors = 0;
  let uploaded = 0;
  let uploadErrors = 0;
  let streamsOpen = 0;
  let streamDeliveries = 0;
  let probePolls = 0;
  let seq = 0;
  /** The scope's newest id once the modems stopped (Infinity before: nobody is done). */
  let finalId = Infinity;
  // How late this process runs its own timers and reads: every latency above includes it.
  const loopDelay = monitorEventLoopDelay({ resolution: 20 });
  loopDelay.enable();
  const start = performance.now();
  const end = start + durationSeconds * 1000;
  const deadline = end + c.catchUpSeconds * 1000;

  const take = (rec: Rec, list: { id: number; card: string }[], now: number, into: hdr.Histogram): number => {
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
      const at = sentAt.get(p.card);
      if (at === undefined) continue;
      const us = Math.max(1, Math.round((now - at) * 1000));
      (into === visibleUs && burstCards.has(p.card) ? visibleBurstUs : into).recordValue(us);
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
            take(rec, list, performance.now(), probe ? visibleUs : latencyUs);
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
          const now = performance.now();
          const lines = (rest + chunk).split('\n');
          rest = lines.pop() ?? '';
          for (const line of lines) {
            if (!line.startsWith('data: ')) continue;
            const p = JSON.parse(line.slice(6)) as { id?: number; card?: string };
            if (p.id !== undefined) streamDeliveries += take(rec, [{ id: Number(p.id), card: String(p.card) }], now, streamUs);
          }
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
  const streamRecs = () => followed.slice(followed.length - (c.streams?.count ?? 0));

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
        const card = String(CARD_BASE + seq++);
        if (due === burst) {
          burst = null;
          burstCards.add(card);
        } else regular += between(c.modemIntervalSeconds);
        const body = JSON.stringify([{ card, time: Date.now(), code: 31 + (i % 200), type: 'Control', modem: m.serial }]);
        sentAt.set(card, performance.now());
        try {
          const r = await send(upload, agent, {
            method: 'POST',
            path: `${upload.pathname}`,
            headers: { apikey: m.key, 'content-type': 'application/json' },
            body,
          });
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

  const spectators = [...c.spectators.flatMap((s) => Array.from({ length: s.count }, () => spectator(s))), ...c.probes.map((s) => spectator(s, true))];
  if (c.streams) for (let i = 0; i < c.streams.count; i++) await stream(c.streams.path);
  await Promise.all(c.modems.map((m, i) => modem(m, i)));
  const elapsed = (performance.now() - start) / 1000;
  const db = new pg.Client({ connectionString: c.databaseUrl, application_name: 'bench-writer' });
  await db.connect();
  try {
    const { rows: r } = await db.query<{ id: string }>('select coalesce(max(id), $2) as id from timing.punches where modem = any($1)', [
      c.modems.map((m) => m.serial),
      c.startAfterId,
    ]);
    finalId = Number(r[0].id);
  } finally {
    await db.end();
  }
  await Promise.all(spectators);
  while (streamRecs().some((rec) => rec.last < finalId) && performance.now() < deadline) await sleep(100);
  for (const req of requests) req.destroy();
  // Polls served per second over the whole evening, the clients' catch-up after the modems stopped included.
  const total = (performance.now() - start) / 1000;
  const ms = (p: number) => latencyUs.getValueAtPercentile(p) / 1000;
  const figures = (h: hdr.Histogram) => ({
    count: h.totalCount,
    p50: h.getValueAtPercentile(50) / 1000,
    p99: h.getValueAtPercentile(99) / 1000,
    max: h.maxValue / 1000,
  });
  loopDelay.disable();
  const pollsServed = polls.meos + polls.live + polls.roc;
  return {
    requests: responses,
    durationSeconds: elapsed,
    rps: pollsServed / total,
    p50: ms(50),
    p90: ms(90),
    p99: ms(99),
    max: latencyUs.maxValue / 1000,
    bytesPerRequest: 0,
    non2xx: responses - buckets['2xx'],
    errors: pollErrors,
    timeouts: 0,
    statusBuckets: buckets,
    followed,
    written: uploaded,
    championship: {
      polls,
      pollErrors,
      streamsOpen,
      streamDeliveries,
      uploaded,
      uploadErrors,
      delivery: figures(latencyUs),
      streamDelivery: figures(streamUs),
      visible: figures(visibleUs),
      visibleBurst: figures(visibleBurstUs),
      probePolls,
      loadProcessDelay: { p50: loopDelay.percentile(50) / 1e6, p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 },
      finalId,
      incomplete: followed.filter((rec) => rec.last < finalId).length,
      firstIncomplete: followed.find((rec) => rec.last < finalId)?.note,
      incompleteByClient: Object.fromEntries([...new Set(kinds)].map((k) => [k, followed.filter((rec, i) => kinds[i] === k && rec.last < finalId).length])),
    },
  };
}
