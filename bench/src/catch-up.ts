/**
 * Fair catch-up (RELIABILITY.md "Fair catch-up"): what backlog replays cost everybody else. Starts the timing
 * service (tsx, a database of its own on BENCH_DATABASE_URL's server, no demo data) once per value of
 * `TIMING_MAX_BACKLOG_READS` given, stores a public event of `--punches` punches, and measures other users
 * (`--pollers` result programs polling another event's head with a key every 200 ms, and one modem posting one
 * punch every 100 ms to it) in two phases:
 * - `quiet`: `--quiet-seconds` without any replay;
 * - `replay`: `--streams` anonymous Server-Sent-Events streams of the big event open from `afterId=0` at once
 *   and replay its whole history; the phase lasts until every stream has every punch.
 * Reports, per gate setting and phase, the others' poll and upload p50/p99/max (ms) and the replay's duration.
 *
 *   npx tsx bench/src/catch-up.ts [--punches 100000] [--streams 50] [--pollers 16] [--quiet-seconds 15] [--gates 4,1000]
 *
 * The figures are written to stdout as JSON and Markdown rows; they go to RELIABILITY.md by hand, with the
 * machine's state. `--gates 1000` is as good as no gate (the limit's maximum): the comparison of the same run.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import * as hdr from 'hdr-histogram-js';
import { createScratchDatabase, startTimingProcess } from './timing-process';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}

const PUNCHES = Number(arg('punches', '100000'));
const STREAMS = Number(arg('streams', '50'));
const POLLERS = Number(arg('pollers', '16'));
const QUIET_SECONDS = Number(arg('quiet-seconds', '15'));
const GATES = arg('gates', '4,1000').split(',').map(Number);
/** Longest replay phase: the streams are closed and the phase reported as unfinished after it. */
const REPLAY_LIMIT_SECONDS = Number(arg('replay-limit-seconds', '300'));
const BASE_URL = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/bench';
const BIG_MODEMS = 10;
const POLL_INTERVAL_MS = 200;
const UPLOAD_INTERVAL_MS = 100;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

function request(
  base: string,
  agent: http.Agent,
  method: string,
  p: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${p}`, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.setTimeout(60_000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

/** p50/p99/max (ms) and count of a histogram of microseconds. */
function figures(h: hdr.Histogram): { count: number; p50: number; p99: number; max: number } {
  const ms = (us: number) => +(us / 1000).toFixed(1);
  return { count: h.totalCount, p50: ms(h.getValueAtPercentile(50)), p99: ms(h.getValueAtPercentile(99)), max: ms(h.maxValue) };
}

/** The other users' load: pollers and one modem, recording into the histograms the phase hands them. */
class Others {
  polls = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: 3 });
  uploads = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: 3 });
  errors = 0;
  private running = true;
  private readonly done: Promise<void>[] = [];
  private seq = 0;

  constructor(
    private readonly base: string,
    private readonly key: string,
    private readonly eventId: number,
    private readonly modem: string,
  ) {}

  /** New histograms for the next phase. */
  reset(): void {
    this.polls.reset();
    this.uploads.reset();
    this.errors = 0;
  }

  start(): void {
    for (let i = 0; i < POLLERS; i++) this.done.push(this.poller());
    this.done.push(this.uploader());
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.done);
  }

  private async poller(): Promise<void> {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    let after = 0;
    await sleep(Math.random() * POLL_INTERVAL_MS);
    while (this.running) {
      const t = performance.now();
      try {
        const r = await request(this.base, agent, 'GET', `/api/rest/v1/punches?eventId=${this.eventId}&afterId=${after}`, {
          apikey: this.key,
          accept: 'application/json',
        });
        this.polls.recordValue(Math.max(1, Math.round((performance.now() - t) * 1000)));
        if (r.status !== 200) this.errors++;
        else {
          const list = JSON.parse(r.body) as { id: number }[];
          if (list.length > 0) after = list[list.length - 1].id;
        }
      } catch {
        this.errors++;
      }
      await sleep(t + POLL_INTERVAL_MS - performance.now());
    }
    agent.destroy();
  }

  private async uploader(): Promise<void> {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    while (this.running) {
      const t = performance.now();
      const body = JSON.stringify([
        { modem: this.modem, card: String(200_000 + (this.seq % 500)), time: Date.now(), code: 31 + (this.seq++ % 40), type: 'Control' },
      ]);
      try {
        const r = await request(this.base, agent, 'POST', '/api/rest/v1/punches', { apikey: this.key, 'content-type': 'application/json' }, body);
        this.uploads.recordValue(Math.max(1, Math.round((performance.now() - t) * 1000)));
        if (r.status !== 200) this.errors++;
      } catch {
        this.errors++;
      }
      await sleep(t + UPLOAD_INTERVAL_MS - performance.now());
    }
    agent.destroy();
  }
}

/** Opens `STREAMS` streams from afterId=0 and resolves with the seconds until each had `want` punches (or null). */
async function replay(base: string, eventId: number, want: number): Promise<{ seconds: number | null; received: number[] }> {
  const received = new Array<number>(STREAMS).fill(0);
  const requests: http.ClientRequest[] = [];
  const t0 = performance.now();
  for (let i = 0; i < STREAMS; i++) {
    const req = http.get(
      `${base}/api/rest/v1/punches/stream?eventId=${eventId}&afterId=0`,
      { agent: false, headers: { accept: 'text/event-stream' } },
      (res) => {
        if (res.statusCode !== 200) process.stderr.write(`stream ${i}: ${res.statusCode}\n`);
        res.setEncoding('utf8');
        let rest = '';
        res.on('data', (chunk: string) => {
          const lines = (rest + chunk).split('\n');
          rest = lines.pop() ?? '';
          for (const line of lines) if (line === 'event: punch') received[i]++;
        });
        res.on('error', () => undefined);
      },
    );
    req.on('error', () => undefined);
    requests.push(req);
  }
  const deadline = t0 + REPLAY_LIMIT_SECONDS * 1000;
  while (received.some((n) => n < want) && performance.now() < deadline) await sleep(50);
  const seconds = received.every((n) => n >= want) ? (performance.now() - t0) / 1000 : null;
  for (const r of requests) r.destroy();
  return { seconds, received };
}

async function main(): Promise<void> {
  const db = await createScratchDatabase(BASE_URL, `bench_catchup_${process.pid}`);
  const key = `tk_${randomBytes(32).toString('base64url')}`;
  const rows: string[] = [];
  const results: unknown[] = [];
  let prepared: { big: number; other: number } | null = null;
  try {
    for (const gate of GATES) {
      const server = await startTimingProcess(db.url, key, { TIMING_MAX_BACKLOG_READS: String(gate) });
      const { base } = server;
      try {
        const json = { apikey: key, 'Content-Type': 'application/json' };
        if (!prepared) prepared = await prepare(base, json);
        const others = new Others(base, key, prepared.other, 'CU-O');
        others.start();
        await sleep(2000);
        others.reset();
        await sleep(QUIET_SECONDS * 1000);
        const quiet = { polls: figures(others.polls), uploads: figures(others.uploads), errors: others.errors };
        others.reset();
        const r = await replay(base, prepared.big, PUNCHES);
        const during = { polls: figures(others.polls), uploads: figures(others.uploads), errors: others.errors };
        await others.stop();
        const result = { gate, quiet, replay: { ...during, seconds: r.seconds, streams: STREAMS, punches: PUNCHES, leastReceived: Math.min(...r.received) } };
        results.push(result);
        process.stderr.write(`${JSON.stringify(result)}\n`);
        const row = (phase: string, f: typeof quiet, extra: string) =>
          `| ${gate} | ${phase} | ${f.polls.p50} / ${f.polls.p99} / ${f.polls.max} | ${f.uploads.p50} / ${f.uploads.p99} / ${f.uploads.max} | ${f.errors} | ${extra} |`;
        rows.push(row('quiet', quiet, '–'));
        rows.push(row(`${STREAMS} streams from afterId=0`, during, r.seconds === null ? `not done in ${REPLAY_LIMIT_SECONDS} s` : `${r.seconds.toFixed(1)} s`));
      } finally {
        await server.stop();
      }
    }
    process.stdout.write(
      `${JSON.stringify({ results, loadAverage: os.loadavg().map((l) => +l.toFixed(2)), cpus: os.cpus().length, node: process.version })}\n`,
    );
    process.stdout.write(
      '| TIMING_MAX_BACKLOG_READS | phase | others’ polls p50 / p99 / max ms | others’ uploads p50 / p99 / max ms | errors | replay done after |\n|---:|---|---:|---:|---:|---:|\n',
    );
    process.stdout.write(`${rows.join('\n')}\n`);
  } finally {
    await db.drop();
  }
}

/** The big event (`PUNCHES` punches on `BIG_MODEMS` modems) and the others' event (modem CU-O, a few punches). */
async function prepare(base: string, json: Record<string, string>): Promise<{ big: number; other: number }> {
  const modems = Array.from({ length: BIG_MODEMS }, (_, i) => `CU-B${i}`);
  const create = async (name: string, m: string[]) =>
    (
      (await (
        await fetch(`${base}/api/rest/v1/events`, { method: 'POST', headers: json, body: JSON.stringify({ name, public: true, modems: m }) })
      ).json()) as { id: number }
    ).id;
  const big = await create('catch-up bench: big event', modems);
  const other = await create('catch-up bench: other event', ['CU-O']);
  const batch = 5000;
  for (let done = 0; done < PUNCHES; done += batch) {
    const n = Math.min(batch, PUNCHES - done);
    const body = JSON.stringify(
      Array.from({ length: n }, (_, k) => {
        const s = done + k;
        return { modem: modems[s % BIG_MODEMS], card: String(100_000 + (s % 5000)), time: 1_600_000_000_000 + s * 100, code: 31 + (s % 40), type: 'Control' };
      }),
    );
    const r = await fetch(`${base}/api/rest/v1/punches`, { method: 'POST', headers: json, body });
    if (r.status !== 200) throw new Error(`upload: ${r.status} ${await r.text()}`);
  }
  process.stderr.write(`stored ${PUNCHES} punches on event ${big}; others poll event ${other}\n`);
  return { big, other };
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
