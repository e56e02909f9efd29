/**
 * The live scenarios of the load process: the popular-event clients that follow the big event by `afterId`
 * ({@link runFollow}), the open live pages on Server-Sent Events ({@link runStreams}), and the writer that
 * stores punches meanwhile through the timing service's own gap-free upload function and NOTIFY.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { notifyNewPunches, uploadPunchBatch } from '@sports-timing/timing/src/punches/punch-upload.repository';
import { PUNCH_SESSION_SETTINGS } from '@sports-timing/timing/src/punches/punches.repository';
import * as hdr from 'hdr-histogram-js';
import type { LoadResult, LoadSpec } from './load-spec';

/** Commit times of the writer's batches: the batch's highest id and `performance.now()` right after its commit. */
type Commits = { maxId: number; at: number }[];

/** The card of punches written by {@link startWriter} (24-bit maximum: no generated card has it). */
export const WRITER_CARD = '16777215';

/** Writes batches at a fixed rate until stopped (see {@link LoadSpec.writer}); `stop` returns the punches written. */
export function startWriter(w: NonNullable<LoadSpec['writer']>, commits: Commits = []): { stop(): Promise<number> } {
  const pool = new pg.Pool({
    connectionString: w.databaseUrl,
    max: 1,
    application_name: 'bench-writer',
    options: `-c search_path=timing ${Object.entries(PUNCH_SESSION_SETTINGS)
      .map(([k, v]) => `-c ${k}=${v}`)
      .join(' ')}`,
  });
  let written = 0;
  let n = 0;
  let stopped = false;
  const start = performance.now();
  const loop = (async () => {
    for (let i = 0; !stopped; i++) {
      const due = start + (i * 1000) / w.ratePerSecond;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (stopped) break;
      const size = 1 + (i % w.maxBatch);
      const now = Date.now();
      const rows = Array.from({ length: size }, () => {
        const k = n++;
        return { card: WRITER_CARD, time: now + k, code: 31 + (k % 200), type: 'Control', modem: w.modems[k % w.modems.length], receptionTimeUtc: now };
      });
      const r = await uploadPunchBatch(pool, w.userId, true, null, rows);
      written += r.stored;
      if (r.maxId !== null) {
        commits.push({ maxId: r.maxId, at: performance.now() });
        await notifyNewPunches(pool, r.maxId);
      }
    }
  })();
  let ended: Promise<number> | undefined;
  return {
    stop() {
      stopped = true;
      ended ??= loop.then(
        async () => {
          await pool.end();
          return written;
        },
        async (err: Error) => {
          await pool.end();
          throw err;
        },
      );
      return ended;
    },
  };
}

/**
 * Closed-loop live clients (see {@link LoadSpec.follow}): `spec.connections` clients, each on its own
 * keep-alive connection, each sending its next poll (from the highest id it received) when the last one
 * was answered. autocannon cannot do this: it resets a connection's request context after every request.
 * Latency per poll in µs; each client's punches are recorded for the gap-free check.
 */
export async function runFollow(spec: LoadSpec, f: NonNullable<LoadSpec['follow']>): Promise<LoadResult> {
  const target = new URL(spec.url);
  const latencyUs = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: 3 });
  const buckets: Record<string, number> = { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
  const followed: NonNullable<LoadResult['followed']> = [];
  let ok = 0;
  let responses = 0;
  let errors = 0;
  let bytes = 0;
  const start = performance.now();
  const end = start + spec.durationSeconds * 1000;
  const poll = (agent: http.Agent, path: string): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const req = http.request({ host: target.hostname, port: target.port, path, method: 'GET', headers: spec.headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        bytes += 17 + res.rawHeaders.reduce((n, h) => n + h.length + 2, 0);
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          bytes += c.length;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
      req.on('error', reject);
      req.end();
    });
  const client = async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const rec = { start: f.startAfterId, last: f.startAfterId, count: 0, sum: 0, outOfOrder: 0 };
    followed.push(rec);
    try {
      while (performance.now() < end) {
        const sent = performance.now();
        let r: { status: number; body: string };
        try {
          r = await poll(agent, f.template.replace('{afterId}', String(rec.last)));
        } catch {
          errors++;
          continue;
        }
        latencyUs.recordValue(Math.max(1, Math.round((performance.now() - sent) * 1000)));
        responses++;
        const bucket = `${Math.floor(r.status / 100)}xx`;
        if (bucket in buckets) buckets[bucket]++;
        if (r.status !== 200) continue;
        ok++;
        const ids =
          f.format === 'json'
            ? (JSON.parse(r.body) as { id: number }[]).map((p) => Number(p.id))
            : r.body
                .split('\n')
                .slice(1)
                .filter((l) => l.length > 0)
                .map((l) => Number(l.slice(0, l.indexOf(','))));
        for (const id of ids) {
          if (id <= rec.last) rec.outOfOrder++;
          else {
            rec.last = id;
            rec.count++;
            rec.sum += id;
          }
        }
      }
    } finally {
      agent.destroy();
    }
  };
  await Promise.all(Array.from({ length: spec.connections }, () => client()));
  const elapsed = (performance.now() - start) / 1000;
  const ms = (p: number) => latencyUs.getValueAtPercentile(p) / 1000;
  return {
    requests: responses,
    durationSeconds: elapsed,
    rps: ok / elapsed,
    p50: ms(50),
    p90: ms(90),
    p99: ms(99),
    max: latencyUs.maxValue / 1000,
    bytesPerRequest: responses > 0 ? bytes / responses : 0,
    non2xx: responses - ok,
    errors,
    timeouts: 0,
    statusBuckets: buckets,
    followed,
  };
}

/**
 * Open live pages (see {@link LoadSpec.streams}): `requests` counts punches delivered over all streams, `rps`
 * deliveries per second, and the latencies are each punch's delay from its batch's commit by the writer (same
 * process, same clock) to its arrival on the stream.
 */
export async function runStreams(spec: LoadSpec, s: NonNullable<LoadSpec['streams']>): Promise<LoadResult> {
  const commits: Commits = [];
  const target = new URL(spec.url);
  const latencyUs = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: 3 });
  const buckets: Record<string, number> = { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
  const followed: NonNullable<LoadResult['followed']> = [];
  let delivered = 0;
  let errors = 0;
  let bytes = 0;
  /** Commit time of the batch holding `id` (the first batch whose highest id is ≥ id); undefined for older punches. */
  const committedAt = (id: number): number | undefined => {
    let lo = 0;
    let hi = commits.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (commits[mid].maxId >= id) hi = mid;
      else lo = mid + 1;
    }
    return commits[lo]?.at;
  };
  const requests: http.ClientRequest[] = [];
  let answered = 0;
  const open = () => {
    const rec = { start: s.startAfterId, last: s.startAfterId, count: 0, sum: 0, outOfOrder: 0 };
    followed.push(rec);
    const req = http.request(
      { host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: 'GET', headers: spec.headers, agent: false },
      (res) => {
        const bucket = `${Math.floor((res.statusCode ?? 0) / 100)}xx`;
        if (bucket in buckets) buckets[bucket]++;
        answered++;
        let rest = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          bytes += chunk.length;
          const now = performance.now();
          const lines = (rest + chunk).split('\n');
          rest = lines.pop() ?? '';
          for (const line of lines) {
            if (!line.startsWith('id: ')) continue;
            const id = Number(line.slice(4));
            if (id <= rec.last) {
              rec.outOfOrder++;
              continue;
            }
            rec.last = id;
            rec.count++;
            rec.sum += id;
            delivered++;
            const at = committedAt(id);
            if (at !== undefined) latencyUs.recordValue(Math.max(1, Math.round((now - at) * 1000)));
          }
        });
        res.on('error', () => undefined);
      },
    );
    req.on('error', () => {
      errors++;
      answered++;
    });
    req.end();
    requests.push(req);
  };
  for (let i = 0; i < spec.connections; i++) open();
  // Every page open (or failed) before punches arrive: at most 30 s.
  for (const until = performance.now() + 30_000; answered < spec.connections && performance.now() < until;) await new Promise((r) => setTimeout(r, 50));
  const start = performance.now();
  const writer = spec.writer ? startWriter(spec.writer, commits) : undefined;
  await new Promise((r) => setTimeout(r, spec.durationSeconds * 1000));
  const written = await writer?.stop();
  const elapsed = (performance.now() - start) / 1000;
  // Punches committed in the last moments get a second to arrive before the streams close.
  await new Promise((r) => setTimeout(r, 1000));
  for (const req of requests) req.destroy();
  const ms = (p: number) => latencyUs.getValueAtPercentile(p) / 1000;
  return {
    requests: delivered,
    durationSeconds: elapsed,
    rps: delivered / elapsed,
    p50: ms(50),
    p90: ms(90),
    p99: ms(99),
    max: latencyUs.maxValue / 1000,
    bytesPerRequest: delivered > 0 ? bytes / delivered : 0,
    non2xx: spec.connections - buckets['2xx'],
    errors,
    timeouts: 0,
    statusBuckets: buckets,
    followed,
    ...(written !== undefined ? { written } : {}),
  };
}
