/**
 * Memory and CPU per open punch stream (SCALING.md "Stream fan-out"): starts the timing service (tsx, its own
 * database on BENCH_DATABASE_URL's server, no demo data), opens N streams of one public event from this process
 * (each on its own connection, like spectators behind one address), then uploads punches in small batches and
 * waits until every stream has each batch. Reports the service's RSS before and after the streams opened (per
 * stream) and its CPU time (user + system from /proc) per delivered batch and per stream delivery.
 *
 *   npx tsx bench/src/stream-fanout.ts --streams 1000 [--batches 20] [--mode anonymous|keyed]
 *
 * `anonymous` streams follow the shared feed; `keyed` ones (with the owner's key) run their own read loop each.
 * The figures are written to stdout as JSON and a Markdown row; they go to SCALING.md by hand, with the
 * machine's state.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { createScratchDatabase, startTimingProcess, type TimingProcess } from './timing-process';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}

const STREAMS = Number(arg('streams', '1000'));
const BATCHES = Number(arg('batches', '20'));
const MODE = arg('mode', 'anonymous');
const BASE_URL = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/bench';

/** RSS (KiB) and CPU ticks (user + system) of `pid` from /proc. */
function proc(pid: number): { rssKiB: number; cpuTicks: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { rssKiB, cpuTicks: Number(fields[11]) + Number(fields[12]) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const db = await createScratchDatabase(BASE_URL, `bench_fanout_${process.pid}`);
  const key = `tk_${randomBytes(32).toString('base64url')}`;
  const sockets: http.ClientRequest[] = [];
  let server: TimingProcess | undefined;
  try {
    server = await startTimingProcess(db.url, key, {
      TIMING_MAX_LIVE_CONNECTIONS: String(STREAMS + 100),
      TIMING_MAX_LIVE_CONNECTIONS_PER_CLIENT: String(STREAMS + 100),
    });
    const { base } = server;
    const json = { apikey: key, 'Content-Type': 'application/json' };
    const event = (await (
      await fetch(`${base}/api/rest/v1/events`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ name: 'fan-out bench', public: true, modems: ['FAN-B'] }),
      })
    ).json()) as { id: number };
    let seq = 0;
    const upload = (n: number) =>
      fetch(`${base}/api/rest/v1/punches`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify(
          Array.from({ length: n }, () => ({
            modem: 'FAN-B',
            card: String(100_000 + (seq % 500)),
            time: 1_600_000_000_000 + seq++ * 1000,
            code: 31 + (seq % 40),
            type: 'Control',
          })),
        ),
      });
    await upload(1);
    await sleep(500);
    const firstPage = (await (await fetch(`${base}/api/rest/v1/punches?eventId=${event.id}`, { headers: { apikey: key } })).json()) as { id: number }[];
    const head = firstPage[firstPage.length - 1].id;
    process.stderr.write(`service up, event ${event.id}, head ${head}; opening ${STREAMS} ${MODE} streams\n`);
    global.gc?.();
    const idle = proc(server.pid);
    const received = new Array<number>(STREAMS).fill(0);
    const headers: Record<string, string> = { Accept: 'text/event-stream', ...(MODE === 'keyed' ? { apikey: key } : {}) };
    for (let i = 0; i < STREAMS; i++) {
      await new Promise<void>((resolve, reject) => {
        const req = http.get(`${base}/api/rest/v1/punches/stream?eventId=${event.id}&afterId=${head}`, { agent: false, headers }, (res) => {
          if (res.statusCode !== 200) reject(new Error(`stream ${i}: ${res.statusCode}`));
          res.setEncoding('utf8');
          res.on('data', (c: string) => (received[i] += c.split('\nevent: punch\n').length - 1));
          resolve();
        });
        req.on('error', reject);
        sockets.push(req);
      });
    }
    await sleep(2000);
    const open = proc(server.pid);
    process.stderr.write(`streams open; ${BATCHES} batches\n`);
    const perBatch = 10;
    const start = proc(server.pid);
    const t0 = Date.now();
    for (let b = 0; b < BATCHES; b++) {
      await upload(perBatch);
      const want = (b + 1) * perBatch;
      while (received.some((n) => n < want)) await sleep(5);
    }
    const wallMs = Date.now() - t0;
    const end = proc(server.pid);
    const tick = 1000 / 100; // ms per clock tick (CLK_TCK 100 on Linux)
    const cpuMs = (end.cpuTicks - start.cpuTicks) * tick;
    const result = {
      mode: MODE,
      streams: STREAMS,
      rssIdleMiB: +(idle.rssKiB / 1024).toFixed(1),
      rssOpenMiB: +(open.rssKiB / 1024).toFixed(1),
      rssPerStreamKiB: +((open.rssKiB - idle.rssKiB) / STREAMS).toFixed(1),
      batches: BATCHES,
      punchesPerBatch: perBatch,
      cpuMsPerBatch: +(cpuMs / BATCHES).toFixed(1),
      cpuUsPerStreamDelivery: +((cpuMs * 1000) / (BATCHES * STREAMS)).toFixed(1),
      wallMsPerBatch: +(wallMs / BATCHES).toFixed(1),
      loadAverage: os.loadavg().map((l) => +l.toFixed(2)),
      cpus: os.cpus().length,
      node: process.version,
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
    process.stdout.write(
      `| ${MODE} | ${STREAMS} | ${result.rssIdleMiB} → ${result.rssOpenMiB} MiB | ${result.rssPerStreamKiB} KiB | ${result.cpuMsPerBatch} ms | ${result.cpuUsPerStreamDelivery} µs | ${result.loadAverage[0]} |\n`,
    );
  } finally {
    for (const s of sockets) s.destroy();
    await server?.stop();
    await db.drop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
