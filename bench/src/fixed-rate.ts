/**
 * The open-loop load generator of the fixed-rate scenarios ({@link runFixedRate}), run by the load process.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import * as hdr from 'hdr-histogram-js';
import type { LoadResult, LoadSpec } from './load-spec';

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
