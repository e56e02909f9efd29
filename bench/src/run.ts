/**
 * `pnpm bench [--scale 1] [--duration 8] [--rounds 3] [--warmup 2] [--only id|group,…] [--database-url URL]
 *  [--report BENCHMARKS.md] [--results-dir bench/results]` — the benchmark harness.
 * `pnpm bench --render bench/results/latest.json` re-renders the report from a results file.
 *
 * 1. Dataset (dataset.ts) in `BENCH_DATABASE_URL` (default postgres://postgres@127.0.0.1:5432/bench), reused
 *    when the scale matches; for the flatness scenarios a second database `<name>_flat` with the big event only.
 * 2. Servers as separate processes (servers.ts): ours, PostgREST, raw; ours on the flat database; the
 *    ordering service for the shop, with the payment simulator as its provider (as `pnpm start` runs it). The Node servers run compiled under `node` (`pnpm build`), or from
 *    the sources under tsx with `--tsx`.
 * 3. A check per read scenario and server (one request: status, bytes, punch ids, total); all servers of a
 *    scenario must return the same ids in the same order.
 * 4. Warm-up, then interleaved rounds (the server order rotates each round) driven by one load
 *    process (load-worker.ts); before each measurement the databases must be quiet (no statement left
 *    running from the previous load); uploads last in a round, their punches deleted after it.
 * 5. Medians, targets, BENCHMARKS.md and a JSON results file.
 * Exit code 1 when a check failed (different punches) or a punch server could not be started.
 */
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { measureMail } from './mail';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { cleanUploads, connect, countUploads, ensureDataset, uploadKey, uploadModem, UPLOAD_MODEMS_PER_USER, UPLOAD_USERS, type DatasetInfo } from './dataset';
import { WRITER_CARD, type LoadReply, type LoadResult, type LoadSpec } from './load-worker';
import {
  evaluateTargets,
  renderMarkdown,
  summarize,
  type BenchResults,
  type Check,
  type Measurement,
  type RunOptions,
  type Unavailable,
  type Versions,
} from './report';
import { selectScenarios, type InstanceName, type RequestShape, type Scenario } from './scenarios';
import { cpuSeconds, postgrestVersion, prepareRunMode, ROOT, sampleRss, startOurs, startPostgrest, startRaw, startShop, type RunningServer } from './servers';

/** Default database of the benchmark (never the tests' database). */
const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/bench';

/** Options of {@link runBench}. */
export interface BenchOptions extends RunOptions {
  /** Where BENCHMARKS.md goes (null: not written). */
  reportPath: string | null;
  /** Directory of the JSON results (null: not written). */
  resultsDir: string | null;
  log?: (msg: string) => void;
}

function usage(): string {
  return 'usage: pnpm bench [--scale 1] [--duration 8] [--rounds 3] [--warmup 2] [--only id|group,…] [--database-url URL] [--tsx] [--report FILE] [--results-dir DIR] | --render RESULTS.json [--report FILE]';
}

/** Parses the command line (see the module comment). Throws with a usage line on bad input. */
export function parseArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): BenchOptions {
  const o: BenchOptions = {
    scale: 1,
    durationSeconds: 8,
    rounds: 3,
    warmupSeconds: 2,
    only: [],
    databaseUrl: env.BENCH_DATABASE_URL ?? DEFAULT_DATABASE_URL,
    runMode: 'compiled',
    reportPath: path.join(ROOT, 'BENCHMARKS.md'),
    resultsDir: path.join(ROOT, 'bench/results'),
  };
  const num = (name: string, v: string | undefined, min: number): number => {
    const n = Number(v);
    if (v === undefined || !Number.isFinite(n) || n < min) throw new Error(`${name} needs a number ≥ ${min}\n${usage()}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    switch (flag) {
      case '--scale':
        o.scale = num(flag, value(), 0.00001);
        break;
      case '--duration':
        o.durationSeconds = num(flag, value(), 1);
        break;
      case '--rounds':
        o.rounds = Math.round(num(flag, value(), 1));
        break;
      case '--warmup':
        o.warmupSeconds = num(flag, value(), 0);
        break;
      case '--only':
        o.only = (value() ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        break;
      case '--database-url':
        o.databaseUrl = value() ?? '';
        break;
      case '--report':
        o.reportPath = path.resolve(value() ?? '');
        break;
      case '--results-dir':
        o.resultsDir = path.resolve(value() ?? '');
        break;
      case '--tsx':
        o.runMode = 'tsx';
        break;
      case '--':
        break;
      default:
        throw new Error(`unknown option ${argv[i]}\n${usage()}`);
    }
  }
  return o;
}

/** One long-lived load process (load-worker.ts); runs one spec at a time. */
class LoadGenerator {
  private readonly child: ChildProcess;
  private next = 1;
  private readonly pending = new Map<number, { resolve: (r: LoadResult) => void; reject: (e: Error) => void }>();

  constructor() {
    this.child = fork(path.join(__dirname, 'load-worker.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (msg: LoadReply) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.ok) p.resolve(msg.result);
      else p.reject(new Error(msg.error));
    });
    this.child.on('exit', (code) => {
      for (const p of this.pending.values()) p.reject(new Error(`load generator exited (${code})`));
      this.pending.clear();
    });
  }

  run(spec: LoadSpec): Promise<LoadResult> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ id, spec });
    });
  }

  stop(): void {
    if (this.child.connected) this.child.disconnect();
  }
}

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function request(baseUrl: string, shape: RequestShape): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${baseUrl}${shape.path}`, { method: shape.method, headers: shape.headers, timeout: 120_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(shape.body);
  });
}

/** Punch ids of a JSON array, a CSV body (first column after the header) or ROC text (first field of each CRLF line). */
export function punchIds(text: string, format: 'json' | 'csv' | 'roc'): number[] {
  if (format === 'json') return (JSON.parse(text) as { id: number }[]).map((p) => Number(p.id));
  if (format === 'roc') {
    return text
      .split('\r\n')
      .filter((l) => l.length > 0)
      .map((l) => Number(l.split(';', 1)[0]));
  }
  return text
    .split('\n')
    .slice(1)
    .filter((l) => l.length > 0)
    .map((l) => Number(l.split(',', 1)[0]));
}

function totalOf(headers: http.IncomingHttpHeaders): number | null {
  const x = headers['x-total-count'];
  if (typeof x === 'string') return Number(x);
  const range = headers['content-range'];
  if (typeof range === 'string') {
    const t = range.split('/')[1];
    return t && t !== '*' ? Number(t) : null;
  }
  return null;
}

function sameArray(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** A scenario's request with a live client's `{afterId}` placeholder set to the big event's tail. */
function requestAt(sc: Scenario, instance: InstanceName, ds: DatasetInfo): RequestShape {
  const shape = sc.request(instance, ds);
  return sc.follow ? { ...shape, path: shape.path.replace('{afterId}', String(ds.tailAfterId)) } : shape;
}

async function checkRead(sc: Scenario, instance: InstanceName, server: RunningServer, ds: DatasetInfo): Promise<Check> {
  const shape = requestAt(sc, instance, ds);
  try {
    const res = await request(server.baseUrl, shape);
    const encoding = res.headers['content-encoding'] ?? null;
    const text = (encoding === 'gzip' ? zlib.gunzipSync(res.body) : res.body).toString('utf8');
    // PostgREST answers a counted partial result with 206 Partial Content.
    if (res.status !== 200 && res.status !== 206)
      return {
        scenario: sc.id,
        instance,
        status: res.status,
        bodyBytes: res.body.length,
        contentEncoding: encoding,
        error: `${shape.path}: ${text.slice(0, 300)}`,
      };
    const ids = punchIds(text, sc.format ?? 'json');
    return {
      scenario: sc.id,
      instance,
      status: res.status,
      bodyBytes: res.body.length,
      contentEncoding: encoding,
      ids,
      idCount: ids.length,
      firstId: ids[0] ?? null,
      lastId: ids[ids.length - 1] ?? null,
      total: totalOf(res.headers),
    };
  } catch (err) {
    return { scenario: sc.id, instance, status: 0, bodyBytes: 0, contentEncoding: null, error: (err as Error).message };
  }
}

function uploadUsers(): { key: string; modems: string[] }[] {
  return Array.from({ length: UPLOAD_USERS }, (_, u) => ({
    key: uploadKey(u + 1),
    modems: Array.from({ length: UPLOAD_MODEMS_PER_USER }, (_, m) => uploadModem(u + 1, m + 1)),
  }));
}

async function checkUpload(sc: Scenario, instance: InstanceName, server: RunningServer, ds: DatasetInfo): Promise<Check> {
  const shape = sc.request(instance, ds);
  const t = Date.now();
  const body = JSON.stringify([
    { card: '1234567', time: t, code: 31, type: 'Control', modem: uploadModem(1, 1) },
    { card: '1234567', time: t + 1, code: 32, type: 'Control', modem: uploadModem(1, 2) },
  ]);
  try {
    const res = await request(server.baseUrl, { ...shape, headers: { apikey: uploadKey(1), 'content-type': 'application/json' }, body });
    const text = res.body.toString('utf8');
    const stored = res.status === 200 ? (JSON.parse(text) as { stored: number }).stored : -1;
    return {
      scenario: sc.id,
      instance,
      status: res.status,
      bodyBytes: res.body.length,
      contentEncoding: null,
      ...(stored === 2 ? {} : { error: `expected 200 with stored=2, got ${res.status}: ${text.slice(0, 300)}` }),
    };
  } catch (err) {
    return { scenario: sc.id, instance, status: 0, bodyBytes: 0, contentEncoding: null, error: (err as Error).message };
  }
}

async function probeShop(sc: Scenario, server: RunningServer, ds: DatasetInfo): Promise<{ check: Check; unavailable?: string }> {
  const base = sc.request('ordering', ds);
  const shape = sc.uniqueHeader ? { ...base, headers: { ...base.headers, [sc.uniqueHeader]: `bench-probe-${process.pid}-${Date.now()}` } } : base;
  try {
    const res = await request(server.baseUrl, shape);
    const text = res.body.toString('utf8');
    const check: Check = {
      scenario: sc.id,
      instance: 'ordering',
      status: res.status,
      bodyBytes: res.body.length,
      contentEncoding: (res.headers['content-encoding'] as string) ?? null,
    };
    if (res.status === 200) return { check };
    const operation = `\`${shape.method} ${shape.path.split('?')[0]}\``;
    if (res.status === 501) return { check, unavailable: `not available yet: ${operation} answers 501 (no handler in the ordering service)` };
    if (sc.id === 'shop-orders') {
      // The spec validator answers 400 before dispatch, so an unimplemented operation looks like a bad body.
      if (!orderingHandlerExists('createShopOrder')) {
        return {
          check,
          unavailable: `not available yet: the ordering service has no \`createShopOrder\` handler (services/ordering/src/http); ${operation} answers ${res.status} to the probe`,
        };
      }
      return { check, unavailable: `not measured: ${operation} answered ${res.status} to the probe order: ${text.slice(0, 300)}` };
    }
    return { check, unavailable: `not measured: the probe answered ${res.status}: ${text.slice(0, 200)}` };
  } catch (err) {
    return {
      check: { scenario: sc.id, instance: 'ordering', status: 0, bodyBytes: 0, contentEncoding: null, error: (err as Error).message },
      unavailable: (err as Error).message,
    };
  }
}

/** Whether any handler file of the ordering service defines `operationId` (a source check, no import). */
function orderingHandlerExists(operationId: string): boolean {
  const dir = path.join(ROOT, 'services/ordering/src/http');
  try {
    return readdirSync(dir).some((f) => f.endsWith('.ts') && new RegExp(`\\b${operationId}\\s*[(:]`).test(readFileSync(path.join(dir, f), 'utf8')));
  } catch {
    return false;
  }
}

function commitId(): string {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).trim().length > 0;
    return dirty ? `${sha} (working tree with uncommitted changes)` : sha;
  } catch {
    return 'unknown';
  }
}

async function versions(databaseUrl: string, withPostgrest: boolean): Promise<Versions> {
  const client = await connect(databaseUrl);
  const { rows } = await client.query<{ v: string }>('select version() as v');
  await client.end();
  const autocannonPkg = JSON.parse(readFileSync(require.resolve('autocannon/package.json', { paths: [__dirname] }), 'utf8')) as { version: string };
  return {
    node: process.version,
    postgres: rows[0].v.split(' on ')[0],
    postgrest: withPostgrest ? await postgrestVersion() : 'not used',
    autocannon: autocannonPkg.version,
    commit: commitId(),
  };
}

function flatUrl(url: string): string {
  const u = new URL(url);
  u.pathname = `${u.pathname.replace(/\/$/, '')}_flat`;
  return u.toString();
}

/** Longest wait for the databases to fall quiet before a measurement (ms). */
const SETTLE_MAX_MS = 60_000;

/**
 * Waits until no other session runs a statement on the benchmark databases (at most {@link SETTLE_MAX_MS}):
 * a server keeps executing the statements of a load that autocannon has already ended (a PostgREST or raw
 * exact count of a million punches runs for seconds), which would otherwise slow down whichever server is
 * measured next. Returns the time waited (ms).
 */
async function settle(urls: string[]): Promise<number> {
  const started = Date.now();
  const deadline = started + SETTLE_MAX_MS;
  for (const url of urls) {
    const client = await connect(url);
    try {
      for (;;) {
        const { rows } = await client.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity
           where datname = current_database() and state = 'active' and pid <> pg_backend_pid() and backend_type = 'client backend'
             and query not ilike 'listen %'`,
        );
        if (rows[0].n === 0 || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await client.end();
    }
  }
  return Date.now() - started;
}

/**
 * CPU seconds (user + system, from `/proc`) used so far by each backend of the benchmark databases (the
 * databases of `urls`), by pid, the probe's own backend left out. Backends of the same PostgreSQL serving
 * other databases (other work on the machine) are not counted.
 */
async function backendCpu(client: Awaited<ReturnType<typeof connect>>, urls: string[]): Promise<Map<number, number>> {
  const names = urls.map((u) => decodeURIComponent(new URL(u).pathname.slice(1)));
  // The popular scenarios' writer is the same for every server: left out.
  const { rows } = await client.query<{ pid: number }>(
    "select pid from pg_stat_activity where datname = any($1::text[]) and pid <> pg_backend_pid() and application_name <> 'bench-writer'",
    [names],
  );
  const out = new Map<number, number>();
  for (const { pid } of rows) {
    const s = cpuSeconds(pid);
    if (s !== null) out.set(pid, s);
  }
  return out;
}

/** CPU seconds the backends used between two {@link backendCpu} samples (a backend new since `before` counts from 0). */
function backendCpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, s] of after) sum += s - (before.get(pid) ?? 0);
  return sum;
}

/**
 * Drops the ordering service's schema of the benchmark database (the service migrates a new one at its
 * start): the payment simulator starts from its seed ids on every run, so orders of an earlier run would
 * already hold the paylink ids it hands out, and every run starts from the same empty order tables.
 */
async function resetShopSchema(url: string): Promise<void> {
  const client = await connect(url);
  try {
    await client.query('drop schema if exists ordering cascade');
  } finally {
    await client.end();
  }
}

/** Id of a user of the dataset (the popular scenarios' writer uploads as an admin in its name). */
async function firstUserId(url: string): Promise<number> {
  const client = await connect(url);
  try {
    const { rows } = await client.query<{ id: number }>('select min(id)::int as id from timing.users');
    return rows[0].id ?? 1;
  } finally {
    await client.end();
  }
}

/**
 * The popular scenarios' gap-free check: every live client's punches (count and id sum of what it received
 * after the id it started from, in ascending order) must be exactly the big event's punches in that id range
 * as stored once the run ended. Returns the clients checked and those whose punches differ or came out of order.
 */
async function checkFollowed(url: string, modems: string[], load: LoadResult): Promise<{ clients: number; violations: number; received: number }> {
  const followed = load.followed ?? [];
  if (followed.length === 0) return { clients: 0, violations: 0, received: 0 };
  const client = await connect(url);
  try {
    const { rows } = await client.query<{ n: string; s: string }>(
      `select count(p.id)::text as n, coalesce(sum(p.id), 0)::text as s
         from unnest($1::int8[], $2::int8[]) with ordinality c(lo, hi, i)
         left join timing.punches p on p.id > c.lo and p.id <= c.hi and p.modem = any($3::text[])
        group by c.i order by c.i`,
      [followed.map((f) => f.start), followed.map((f) => f.last), modems],
    );
    let violations = 0;
    followed.forEach((f, i) => {
      if (f.outOfOrder > 0 || Number(rows[i].n) !== f.count || Number(rows[i].s) !== f.sum) violations++;
    });
    return { clients: followed.length, violations, received: followed.reduce((a, f) => a + f.count, 0) };
  } finally {
    await client.end();
  }
}

/** Deletes the punches the popular scenarios' writer stored (its card) and folds the counters. */
async function removeWritten(url: string): Promise<void> {
  const client = await connect(url);
  try {
    // The counter triggers name their tables unqualified.
    await client.query('set search_path = timing, public');
    await client.query(`delete from punches where card = '${WRITER_CARD}'`);
    await client.query('select compact_punch_counts()');
  } finally {
    await client.end();
  }
}

/** Runs the harness; writes the report and results when paths are given. */
export async function runBench(opts: BenchOptions): Promise<BenchResults> {
  const log = opts.log ?? ((msg: string) => process.stdout.write(`[bench] ${msg}\n`));
  // `mail` is not an HTTP scenario: the mail dispatch measurement (src/mail.ts) runs when selected or when nothing is.
  const mailSelected = opts.only.length === 0 || opts.only.includes('mail');
  const httpOnly = opts.only.filter((o) => o !== 'mail');
  const scenarios = httpOnly.length === 0 && opts.only.length > 0 ? [] : selectScenarios(httpOnly);
  const startedAt = new Date().toISOString();
  const loadAvgBefore = os.loadavg();
  log(`load average before: ${loadAvgBefore.map((x) => x.toFixed(2)).join(' ')}`);

  const main = await ensureDataset({ url: opts.databaseUrl, scale: opts.scale, log });
  const needs = (i: InstanceName) => scenarios.some((s) => s.instances.includes(i));
  const flat = needs('ours-1m') ? await ensureDataset({ url: flatUrl(opts.databaseUrl), scale: opts.scale, variant: 'bigOnly', log }) : undefined;
  if (scenarios.some((s) => s.upload)) await cleanUploads(main.url);

  const servers = new Map<InstanceName, RunningServer>();
  // The ordering service's payment provider (started with it, stopped after everything else).
  let paymentSimulator: RunningServer | undefined;
  const unavailable: Unavailable[] = [];
  const fatal: string[] = [];
  const start = async (name: InstanceName, fn: () => Promise<RunningServer>) => {
    if (!needs(name)) return;
    log(`starting ${name}`);
    try {
      servers.set(name, await fn());
    } catch (err) {
      const reason = `could not start: ${(err as Error).message}`;
      for (const s of scenarios.filter((x) => x.instances.includes(name))) unavailable.push({ scenario: s.id, instance: name, reason });
      if (name !== 'ordering') fatal.push(`${name} ${reason}`);
      log(`${name} ${reason}`);
    }
  };
  const dsOf = (i: InstanceName): DatasetInfo => (i === 'ours-1m' && flat ? flat : main);
  await prepareRunMode(opts.runMode ?? 'compiled', log);
  const loader = new LoadGenerator();
  const checks: Check[] = [];
  const measurements: Measurement[] = [];
  try {
    await start('ours', () => startOurs(main.url));
    await start('ours-shared', () => startOurs(main.url, { shared: true }));
    await start('postgrest', () => startPostgrest(main.url));
    await start('raw', () => startRaw(main.url));
    if (flat) await start('ours-1m', () => startOurs(flat.url));
    const writerUser = await firstUserId(main.url);
    await start('ordering', async () => {
      await resetShopSchema(main.url);
      const shop = await startShop(main.url);
      paymentSimulator = shop.paymentSimulator;
      return shop.ordering;
    });

    // Checks: the same punches from every server before any load.
    const runnable = new Map<string, InstanceName[]>();
    for (const sc of scenarios) {
      const ok: InstanceName[] = [];
      for (const inst of sc.instances) {
        const server = servers.get(inst);
        if (!server) continue;
        if (sc.group === 'shop') {
          const probe = await probeShop(sc, server, main);
          checks.push(probe.check);
          if (probe.unavailable) unavailable.push({ scenario: sc.id, instance: inst, reason: probe.unavailable });
          else ok.push(inst);
          continue;
        }
        if (sc.streams) {
          // A stream never ends: checked by the gap-free check after each run instead.
          ok.push(inst);
          continue;
        }
        const check = sc.upload ? await checkUpload(sc, inst, server, main) : await checkRead(sc, inst, server, dsOf(inst));
        checks.push(check);
        if (check.error) {
          unavailable.push({ scenario: sc.id, instance: inst, reason: `check failed: HTTP ${check.status} ${check.error}` });
          fatal.push(`${sc.id}/${inst}: HTTP ${check.status} ${check.error}`);
        } else ok.push(inst);
      }
      if (!sc.upload && sc.group !== 'shop') {
        const scChecks = checks.filter((c) => c.scenario === sc.id && c.ids);
        const first = scChecks[0];
        for (const c of scChecks) {
          c.sameIds = sc.group === 'flat' ? c.idCount === first.idCount : sameArray(c.ids ?? [], first.ids ?? []);
          if (!c.sameIds)
            fatal.push(
              `${sc.id}: ${c.instance} returned other punches than ${first.instance} (${c.idCount} ids ${c.firstId}…${c.lastId} vs ${first.idCount} ids ${first.firstId}…${first.lastId})`,
            );
        }
      }
      runnable.set(sc.id, ok);
    }
    if (scenarios.some((s) => s.upload)) await cleanUploads(main.url);

    const specFor = (sc: Scenario, inst: InstanceName, seconds: number): LoadSpec => {
      const shape = requestAt(sc, inst, dsOf(inst));
      const template = sc.request(inst, dsOf(inst)).path;
      return {
        ...(sc.follow
          ? {
              ...(sc.streams
                ? { streams: { startAfterId: main.tailAfterId } }
                : { follow: { template, format: sc.format === 'csv' ? 'csv' : 'json', startAfterId: main.tailAfterId } }),
              writer: { databaseUrl: main.url, modems: main.bigEventModems, ratePerSecond: sc.follow.writesPerSecond, maxBatch: 3, userId: writerUser },
            }
          : {}),
        url: `${servers.get(inst)!.baseUrl}${shape.path}`,
        method: shape.method,
        headers: shape.headers,
        connections: sc.connections,
        durationSeconds: seconds,
        ...(sc.overallRate ? { overallRate: sc.overallRate } : {}),
        ...(sc.upload ? { upload: { ...sc.upload, users: uploadUsers() } } : {}),
        ...(shape.body !== undefined && !sc.upload ? { body: shape.body } : {}),
        ...(sc.uniqueHeader ? { uniqueHeader: sc.uniqueHeader } : {}),
      };
    };

    if (opts.warmupSeconds > 0) {
      log(`warm-up: ${opts.warmupSeconds} s per server and scenario`);
      for (const sc of scenarios) {
        for (const inst of runnable.get(sc.id) ?? []) {
          await loader.run(specFor(sc, inst, opts.warmupSeconds));
          if (sc.follow) await removeWritten(main.url);
        }
      }
      if (scenarios.some((s) => s.upload)) await cleanUploads(main.url);
    }

    const counterUrls = flat ? [main.url, flat.url] : [main.url];
    const counter = scenarios.some((s) => s.upload) ? await connect(main.url) : undefined;
    const cpuProbe = await connect(main.url);
    try {
      for (let round = 1; round <= opts.rounds; round++) {
        log(
          `round ${round}/${opts.rounds} (load average ${os
            .loadavg()
            .map((x) => x.toFixed(2))
            .join(' ')})`,
        );
        for (const sc of scenarios) {
          const list = runnable.get(sc.id) ?? [];
          const shift = (round - 1) % Math.max(1, list.length);
          const order = [...list.slice(shift), ...list.slice(0, shift)];
          for (const inst of order) {
            const server = servers.get(inst)!;
            const rss = inst === 'postgrest' ? undefined : sampleRss(server.pid);
            const sidecar = inst === 'ordering' && paymentSimulator ? paymentSimulator : undefined;
            const sidecarRss = sidecar ? sampleRss(sidecar.pid) : undefined;
            const before = counter ? await countUploads(counter) : 0;
            const settled = await settle(counterUrls);
            if (settled > 1_000) log(`  (waited ${(settled / 1000).toFixed(1)} s for the database to fall quiet)`);
            const loadAvgBefore = os.loadavg();
            const cpuBefore = {
              server: cpuSeconds(server.pid),
              sidecar: sidecar ? cpuSeconds(sidecar.pid) : null,
              backends: await backendCpu(cpuProbe, counterUrls),
            };
            const load = await loader.run(specFor(sc, inst, opts.durationSeconds));
            const cpuAfter = {
              server: cpuSeconds(server.pid),
              sidecar: sidecar ? cpuSeconds(sidecar.pid) : null,
              backends: await backendCpu(cpuProbe, counterUrls),
            };
            const loadAvgAfter = os.loadavg();
            const m: Measurement = { scenario: sc.id, instance: inst, round, load, loadAvgBefore, loadAvgAfter };
            if (rss) m.rssPeak = rss.stop();
            if (cpuBefore.server !== null && cpuAfter.server !== null) m.cpuSeconds = cpuAfter.server - cpuBefore.server;
            m.databaseCpuSeconds = backendCpuBetween(cpuBefore.backends, cpuAfter.backends);
            if (sidecar && sidecarRss) {
              m.paymentSimulator = {
                cpuSeconds: cpuBefore.sidecar !== null && cpuAfter.sidecar !== null ? cpuAfter.sidecar - cpuBefore.sidecar : null,
                rssPeak: sidecarRss.stop(),
              };
            }
            if (sc.upload && counter) m.punchesPerSecond = ((await countUploads(counter)) - before) / load.durationSeconds;
            if (sc.follow) {
              m.gapFree = await checkFollowed(main.url, main.bigEventModems, load);
              await removeWritten(main.url);
            }
            measurements.push(m);
            const perRequest = (s: number | null | undefined) =>
              typeof s === 'number' && load.requests > 0 ? `${((s * 1000) / load.requests).toFixed(2)}` : '–';
            log(
              `  ${sc.id.padEnd(14)} ${inst.padEnd(11)} ${load.rps.toFixed(0).padStart(6)} req/s  p50 ${load.p50.toFixed(1)} ms  p99 ${load.p99.toFixed(1)} ms` +
                `  CPU ms/req: server ${perRequest(m.cpuSeconds)}, PostgreSQL ${perRequest(m.databaseCpuSeconds)}${m.paymentSimulator ? `, payment simulator ${perRequest(m.paymentSimulator.cpuSeconds)}` : ''}` +
                `${m.punchesPerSecond !== undefined ? `  ${m.punchesPerSecond.toFixed(0)} punches/s` : ''}${m.gapFree ? `  live clients ${m.gapFree.clients}, punches written ${load.written ?? 0}, violations ${m.gapFree.violations}` : ''}${load.non2xx ? `  non-2xx ${load.non2xx}` : ''}${load.errors ? `  errors ${load.errors}` : ''}`,
            );
          }
        }
        if (scenarios.some((s) => s.upload)) {
          const removed = await cleanUploads(main.url);
          log(`  removed ${removed} uploaded punches`);
        }
      }
    } finally {
      await counter?.end();
      await cpuProbe.end();
    }
  } finally {
    loader.stop();
    for (const s of servers.values()) await s.stop();
    await paymentSimulator?.stop();
  }

  // 1,000 messages per round from scale 0.01 up (a few seconds each), fewer for the tiny harness test.
  const mail = mailSelected
    ? await measureMail({ messages: Math.max(100, Math.round(1_000 * Math.min(1, opts.scale * 100))), rounds: opts.rounds, log })
    : undefined;

  const loadAvgAfter = os.loadavg();
  log(`load average after: ${loadAvgAfter.map((x) => x.toFixed(2)).join(' ')}`);
  const summaries = summarize(measurements, checks);
  const results: BenchResults = {
    startedAt,
    finishedAt: new Date().toISOString(),
    options: {
      scale: opts.scale,
      durationSeconds: opts.durationSeconds,
      rounds: opts.rounds,
      warmupSeconds: opts.warmupSeconds,
      only: opts.only,
      databaseUrl: opts.databaseUrl,
      runMode: opts.runMode ?? 'compiled',
    },
    machine: {
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      cores: os.cpus().length,
      memoryBytes: os.totalmem(),
      loadAvgBefore,
      loadAvgAfter,
      platform: `${os.type()} ${os.release()}`,
    },
    versions: await versions(main.url, needs('postgrest')),
    datasets: { main, ...(flat ? { flat } : {}) },
    scenarios: scenarios.map(({ id, group, title, description, instances, connections, overallRate }) => ({
      id,
      group,
      title,
      description,
      instances,
      connections,
      overallRate,
    })),
    checks,
    measurements,
    summaries,
    unavailable,
    targets: evaluateTargets(summaries, scenarios, unavailable),
    ...(mail ? { mail } : {}),
  };
  if (opts.reportPath) {
    writeFileSync(opts.reportPath, renderMarkdown(results, scenarios));
    log(`wrote ${path.relative(process.cwd(), opts.reportPath) || opts.reportPath}`);
  }
  if (opts.resultsDir) {
    mkdirSync(opts.resultsDir, { recursive: true });
    // Per-client records of the popular scenarios are summed into gapFree; the file keeps the sums only.
    const stored = measurements.map((m) => ({ ...m, load: { ...m.load, followed: undefined } }));
    const file = JSON.stringify({ ...results, measurements: stored, checks: checks.map(({ ids: _ids, ...c }) => c) }, null, 2);
    writeFileSync(path.join(opts.resultsDir, `${startedAt.replace(/[:.]/g, '-')}.json`), file);
    writeFileSync(path.join(opts.resultsDir, 'latest.json'), file);
  }
  if (fatal.length) {
    const err = new Error(`benchmark problems:\n- ${fatal.join('\n- ')}`);
    (err as Error & { results?: BenchResults }).results = results;
    throw err;
  }
  return results;
}

/** Re-renders BENCHMARKS.md from a results file (`--render bench/results/latest.json [--report FILE]`). */
function renderOnly(resultsFile: string, reportPath: string): void {
  const results = JSON.parse(readFileSync(resultsFile, 'utf8')) as BenchResults;
  const scenarios = selectScenarios(results.options.only);
  results.targets = evaluateTargets(results.summaries, scenarios, results.unavailable);
  writeFileSync(reportPath, renderMarkdown(results, scenarios));
  writeFileSync(resultsFile, JSON.stringify(results, null, 2));
}

if (require.main === module) {
  const renderAt = process.argv.indexOf('--render');
  if (renderAt >= 0) {
    const rest = process.argv.slice(2).filter((_, i) => i + 2 !== renderAt && i + 2 !== renderAt + 1);
    renderOnly(path.resolve(process.argv[renderAt + 1] ?? ''), parseArgs(rest).reportPath ?? path.join(ROOT, 'BENCHMARKS.md'));
    process.exit(0);
  }
  let opts: BenchOptions;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
  runBench(opts).then(
    () => process.exit(0),
    (err: Error) => {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    },
  );
}
