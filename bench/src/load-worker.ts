/**
 * The load generator process (load from a separate process): receives {@link LoadSpec}s over
 * IPC, runs each in turn and sends back a {@link LoadResult}. Closed-loop runs ("as fast as possible") use
 * autocannon; fixed-rate runs use {@link runFixedRate}, an open-loop generator. Upload specs get a fresh body
 * per request (unique punches, so every punch is new and really stored), signed with the keys of many users.
 */
import http from 'node:http';
import pg from 'pg';
import { notifyNewPunches, uploadPunchBatch } from '@sports-timing/timing/src/punches/punch-upload.repository';
import { PUNCH_SESSION_SETTINGS } from '@sports-timing/timing/src/punches/punches.repository';
import { performance } from 'node:perf_hooks';
import zlib from 'node:zlib';
import autocannon from 'autocannon';
import * as hdr from 'hdr-histogram-js';

/** Body generators of upload scenarios. */
export type UploadKind = 'single' | 'batch' | 'batchGzip';

/** One load run. */
export interface LoadSpec {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** Fixed request body (uploads generate theirs). */
  body?: string;
  /** A header that gets a value unique to each request (e.g. `idempotency-key`, so every order is new). */
  uniqueHeader?: string;
  connections: number;
  durationSeconds: number;
  /** Fixed total request rate (req/s); unset = as fast as possible. */
  overallRate?: number;
  /**
   * Live clients at the head: every connection polls `template` with `{afterId}` replaced by the highest id
   * it has received (starting at `startAfterId`), as RadioSender or a live page does.
   */
  follow?: { template: string; format: 'json' | 'csv'; startAfterId: number };
  /**
   * Open pages of a live page: `spec.connections` Server-Sent-Events streams of `spec.url` (from `startAfterId`),
   * held for the run; each stream's punches are recorded for the gap-free check, and each punch's delay from
   * the writer's commit to its arrival is the latency.
   */
  streams?: { startAfterId: number };
  /**
   * Punches arriving meanwhile: `ratePerSecond` batches of 1–`maxBatch` punches on `modems`, by the gap-free
   * upload function (as the service stores them, admin user `userId`) and its NOTIFY, from this process on
   * one connection (application_name `bench-writer`, left out of the PostgreSQL CPU figures).
   */
  writer?: { databaseUrl: string; modems: string[]; ratePerSecond: number; maxBatch: number; userId: number };
  upload?: {
    kind: UploadKind;
    batchSize: number;
    /** Keys and the modems of each key's user. */
    users: { key: string; modems: string[] }[];
  };
}

/** What a run measured (latencies in ms). */
export interface LoadResult {
  requests: number;
  durationSeconds: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Response bytes per request as autocannon counts them (headers included). */
  bytesPerRequest: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Status code counts (autocannon's 1xx…5xx buckets). */
  statusBuckets: Record<string, number>;
  /** With `follow`: per connection, the afterId it started from, the last id received, the count and sum of ids received, and ids out of order. */
  followed?: { start: number; last: number; count: number; sum: number; outOfOrder: number }[];
  /** With `writer`: punches written during the run. */
  written?: number;
}

/** Commit times of the writer's batches: the batch's highest id and `performance.now()` right after its commit. */
type Commits = { maxId: number; at: number }[];

function uploadRequests(spec: NonNullable<LoadSpec['upload']>): autocannon.Request[] {
  // A card per load process (random) and a time counter: every punch is unique, also across runs.
  const card = String(1_000_000 + Math.floor(Math.random() * 8_999_999));
  let counter = 0;
  let turn = 0;
  const body = () => {
    const user = spec.users[turn++ % spec.users.length];
    const punches = [];
    for (let i = 0; i < spec.batchSize; i++) {
      const n = counter++;
      punches.push({ card, time: 1_600_000_000_000 + n, code: 31 + (n % 200), type: 'Control', modem: user.modems[n % user.modems.length] });
    }
    return { key: user.key, json: JSON.stringify(punches) };
  };
  return [
    {
      setupRequest: (req) => {
        const { key, json } = body();
        const headers: Record<string, string> = { ...(req.headers as Record<string, string>), apikey: key, 'content-type': 'application/json' };
        if (spec.kind === 'batchGzip') {
          headers['content-encoding'] = 'gzip';
          return { ...req, headers, body: zlib.gzipSync(json, { level: 1 }) };
        }
        return { ...req, headers, body: json };
      },
    },
  ];
}

function uniqueHeaderRequests(header: string): autocannon.Request[] {
  // Process-unique prefix and a counter: unique also across runs on the same database.
  const prefix = `bench-${process.pid}-${Date.now().toString(36)}-`;
  let counter = 0;
  return [{ setupRequest: (req) => ({ ...req, headers: { ...(req.headers as Record<string, string>), [header]: `${prefix}${counter++}` } }) }];
}

/** Runs one spec: fixed-rate specs open-loop ({@link runFixedRate}), the others with autocannon. */
async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  // Streams start their writer themselves, once every stream is open.
  if (spec.streams) return runStreams(spec, spec.streams);
  const writer = spec.writer ? startWriter(spec.writer) : undefined;
  try {
    const result = await (spec.follow ? runFollow(spec, spec.follow) : spec.overallRate ? runFixedRate(spec, spec.overallRate) : runClosedLoop(spec));
    if (writer) result.written = await writer.stop();
    return result;
  } finally {
    await writer?.stop();
  }
}

/** The card of punches written by {@link startWriter} (24-bit maximum: no generated card has it). */
export const WRITER_CARD = '16777215';

/** Writes batches at a fixed rate until stopped (see {@link LoadSpec.writer}); `stop` returns the punches written. */
function startWriter(w: NonNullable<LoadSpec['writer']>, commits: Commits = []): { stop(): Promise<number> } {
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
      const r = await uploadPunchBatch(pool, w.userId, true, rows);
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
async function runFollow(spec: LoadSpec, f: NonNullable<LoadSpec['follow']>): Promise<LoadResult> {
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
async function runStreams(spec: LoadSpec, s: NonNullable<LoadSpec['streams']>): Promise<LoadResult> {
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

async function runClosedLoop(spec: LoadSpec): Promise<LoadResult> {
  const opts: autocannon.Options = {
    url: spec.url,
    method: spec.method,
    headers: spec.headers,
    ...(spec.body !== undefined ? { body: spec.body } : {}),
    connections: spec.connections,
    duration: spec.durationSeconds,
    pipelining: 1,
    timeout: 30,
    ...(spec.upload ? { requests: uploadRequests(spec.upload) } : spec.uniqueHeader ? { requests: uniqueHeaderRequests(spec.uniqueHeader) } : {}),
  };
  const r = await autocannon(opts);
  const elapsed = Math.max(0.001, r.duration);
  const total = r.requests.total;
  const buckets: Record<string, number> = { '1xx': r['1xx'], '2xx': r['2xx'], '3xx': r['3xx'], '4xx': r['4xx'], '5xx': r['5xx'] };
  return {
    requests: total,
    durationSeconds: elapsed,
    rps: r['2xx'] / elapsed,
    p50: r.latency.p50,
    p90: r.latency.p90,
    p99: r.latency.p99,
    max: r.latency.max,
    bytesPerRequest: total > 0 ? r.throughput.total / total : 0,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusBuckets: buckets,
  };
}

/**
 * Fixed-rate (open-loop) load, as wrk2 does it: request i is due at `start + i / rate`, whether or not
 * earlier ones have been answered, and its latency runs from that due time to the end of its response.
 * So a stalled server is charged for every request that waited behind the stall (no coordinated omission).
 * autocannon's `overallRate` is not this: each connection sends its per-second quota back to back and then
 * pauses until the next second, so the load comes in bursts at the top of every second, and its correction
 * records `Math.ceil(1 / rate)` = 1 ms as the expected interval, adding a sample per millisecond of every
 * slow response.
 * At most `spec.connections` keep-alive connections are open; requests due while all are busy wait for one
 * (and that wait counts). Latencies are recorded in µs; reported in ms. Uploads are not supported here.
 */
export async function runFixedRate(spec: LoadSpec, rate: number): Promise<LoadResult> {
  if (spec.upload) throw new Error('fixed-rate runs do not generate upload bodies');
  const target = new URL(spec.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: spec.connections });
  const latencyUs = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: 3 });
  const unique = spec.uniqueHeader ? { name: spec.uniqueHeader, prefix: `bench-${process.pid}-${Date.now().toString(36)}-` } : undefined;
  const body = spec.body === undefined ? undefined : Buffer.from(spec.body);
  const intervalMs = 1000 / rate;
  const total = Math.round(rate * spec.durationSeconds);
  const buckets: Record<string, number> = { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
  let issued = 0;
  let settled = 0;
  let responses = 0;
  let ok = 0;
  let errors = 0;
  let timeouts = 0;
  let bytes = 0;
  let lastEnd = 0;
  const start = performance.now();

  return new Promise<LoadResult>((resolve) => {
    const finish = () => {
      agent.destroy();
      const elapsedMs = Math.max(spec.durationSeconds * 1000, lastEnd - start);
      const ms = (p: number) => latencyUs.getValueAtPercentile(p) / 1000;
      resolve({
        requests: settled,
        durationSeconds: elapsedMs / 1000,
        rps: ok / (elapsedMs / 1000),
        p50: ms(50),
        p90: ms(90),
        p99: ms(99),
        max: latencyUs.maxValue / 1000,
        bytesPerRequest: settled > 0 ? bytes / settled : 0,
        non2xx: responses - ok,
        errors,
        timeouts,
        statusBuckets: buckets,
      });
    };
    const settle = (due: number) => {
      lastEnd = performance.now();
      latencyUs.recordValue(Math.max(1, Math.round((lastEnd - due) * 1000)));
      if (++settled === total) finish();
    };
    const send = (due: number) => {
      const headers: Record<string, string> = { ...spec.headers };
      if (unique) headers[unique.name] = `${unique.prefix}${issued}`;
      if (body) headers['content-length'] = String(body.length);
      let done = false;
      let timedOut = false;
      const end = (failed: boolean) => {
        if (done) return;
        done = true;
        if (failed && !timedOut) errors++;
        settle(due);
      };
      const req = http.request({ host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: spec.method, headers, agent });
      req.setTimeout(30_000, () => {
        timedOut = true;
        timeouts++;
        req.destroy(new Error('timeout'));
      });
      req.on('response', (res) => {
        const code = res.statusCode ?? 0;
        const bucket = `${Math.floor(code / 100)}xx`;
        if (bucket in buckets) buckets[bucket]++;
        responses++;
        if (code >= 200 && code < 300) ok++;
        // Status line, headers and body: autocannon's byte count also includes the headers.
        bytes += 17 + res.rawHeaders.reduce((n, h) => n + h.length + 2, 0);
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        res.on('end', () => end(false));
        res.on('error', () => end(true));
      });
      req.on('error', () => end(true));
      req.end(body);
    };
    const tick = () => {
      const now = performance.now();
      while (issued < total && start + issued * intervalMs <= now) {
        send(start + issued * intervalMs);
        issued++;
      }
      if (issued < total) setTimeout(tick, Math.max(0, start + issued * intervalMs - performance.now()));
    };
    tick();
  });
}

/** Message to the worker: a spec with an id; the reply carries the same id. */
interface LoadRequest {
  id: number;
  spec: LoadSpec;
}

/** Reply of the worker. */
export type LoadReply = { id: number; ok: true; result: LoadResult } | { id: number; ok: false; error: string };

if (require.main === module) {
  // Runs one spec at a time, in arrival order; exits when the harness disconnects.
  let queue = Promise.resolve();
  process.on('message', (msg: LoadRequest) => {
    queue = queue.then(() =>
      runLoad(msg.spec).then(
        (result) => void process.send?.({ id: msg.id, ok: true, result } satisfies LoadReply),
        (err: Error) => void process.send?.({ id: msg.id, ok: false, error: err.message } satisfies LoadReply),
      ),
    );
  });
  process.on('disconnect', () => process.exit(0));
}
