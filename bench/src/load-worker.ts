/**
 * The load generator process (issue 8: load from a separate process): receives {@link LoadSpec}s over
 * IPC, runs autocannon for each in turn and sends back a {@link LoadResult}. Upload specs get a fresh body per
 * request (unique punches, so every punch is new and really stored), signed with the keys of many users.
 */
import zlib from 'node:zlib';
import autocannon from 'autocannon';

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
}

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

/** Runs one spec. */
export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const opts: autocannon.Options = {
    url: spec.url,
    method: spec.method,
    headers: spec.headers,
    ...(spec.body !== undefined ? { body: spec.body } : {}),
    connections: spec.connections,
    duration: spec.durationSeconds,
    pipelining: 1,
    timeout: 30,
    ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
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

/** Message to the worker: a spec with an id; the reply carries the same id. */
export interface LoadRequest {
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
