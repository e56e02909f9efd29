/**
 * The load generator process (load from a separate process): receives {@link LoadSpec}s over
 * IPC, runs each in turn and sends back a {@link LoadResult}. Closed-loop runs ("as fast as possible") use
 * autocannon; fixed-rate runs use {@link runFixedRate}, an open-loop generator. Upload specs get a fresh body
 * per request (unique punches, so every punch is new and really stored), signed with the keys of many users.
 * The live scenarios are live-load.ts, the open-loop generator fixed-rate.ts, the messages load-spec.ts.
 */
import zlib from 'node:zlib';
import autocannon from 'autocannon';
import { runChampionship } from './championship-load';
import { runFixedRate } from './fixed-rate';
import { runFollow, runStreams, startWriter } from './live-load';
import type { LoadReply, LoadRequest, LoadResult, LoadSpec } from './load-spec';

/** autocannon requests of an upload scenario: each a fresh batch of unique punches, keys and modems in turn. */
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

/** autocannon requests carrying `header` with a value unique to each request (e.g. `Idempotency-Key`). */
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
  if (spec.championship) return runChampionship(spec.championship, spec.durationSeconds);
  const writer = spec.writer ? startWriter(spec.writer) : undefined;
  try {
    const result = await (spec.follow ? runFollow(spec, spec.follow) : spec.overallRate ? runFixedRate(spec, spec.overallRate) : runClosedLoop(spec));
    if (writer) result.written = await writer.stop();
    return result;
  } finally {
    await writer?.stop();
  }
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
