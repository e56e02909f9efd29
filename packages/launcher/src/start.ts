/**
 * `pnpm start`: the whole product on one machine. `pnpm start:prod` (`--prod`) does the same with the compiled
 * JavaScript of `pnpm build` (`<package>/dist/…js`, run by plain node with the `dist` export condition and
 * source maps, this launcher included) instead of the TypeScript sources through tsx. Without DATABASE_URL it
 * starts one embedded PostgreSQL under `$DATA_DIR/pg` (both services use it, each in its own schema), then runs
 * every service as its own process with prefixed output.
 *
 * Stopping (SIGTERM from a supervisor, Ctrl-C, SIGHUP, or the parent going away): the services are asked to
 * stop (SIGTERM: each drains its requests), then the embedded PostgreSQL stops, then the launcher exits 0.
 * Every child runs in a process group of its own, so the terminal's Ctrl-C reaches only the launcher and the
 * order holds; `pnpm start` runs the launcher with `exec`, so pnpm forwards its signals to it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
// The config module alone (not the package's index, which loads the database and HTTP layers): the clash checks answer fast.
import { appEnvironmentFromEnv, checkHost, ConfigError, DEV_ERP_WEBHOOK_SECRET, envReader, isDeployment } from '@sports-timing/shared/src/config';
import { liveDemoSpeed, startLiveDemo } from './live-demo';
import { configurationTableNames, unknownVariableWarnings } from './unknown-variables';
import { duplicatePorts, localAddress, lockDataDir, serviceUrls, takenPorts, type PortUse } from './preflight';

const root = path.join(__dirname, '../../..');

/** Services started by `pnpm start`, in start order. */
const SERVICES: { name: string; entry: string }[] = [
  // entry: the TypeScript source; `--prod` runs its compiled twin (src/x.ts → dist/x.js).
  // Third-party simulators first, so the ordering service finds them (ports ERP_SIMULATOR_PORT 8090, PAYMENT_SIMULATOR_PORT 8091).
  { name: 'erp-sim', entry: 'packages/erp-simulator/src/main.ts' },
  { name: 'payment-sim', entry: 'packages/payment-simulator/src/main.ts' },
  { name: 'timing', entry: 'services/timing/src/server.ts' },
  { name: 'ordering', entry: 'services/ordering/src/server.ts' },
];

function prefixLines(name: string, stream: NodeJS.ReadableStream, out: NodeJS.WriteStream): void {
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buf += chunk;
    const lines = buf.split('\n');
    buf = lines.pop() ?? '';
    for (const line of lines) out.write(`[${name}] ${line}\n`);
  });
}

/** Node arguments running one entry point: its TypeScript source through tsx, or (`prod`) its compiled output. */
function serviceArgs(entry: string, prod: boolean): string[] {
  if (!prod) return ['--import', 'tsx', path.join(root, entry)];
  const compiled = path.join(root, entry.replace('/src/', '/dist/').replace(/\.ts$/, '.js'));
  if (!existsSync(compiled)) throw new Error(`${compiled} is missing: run \`pnpm build\` first`);
  return ['--conditions=dist', '--enable-source-maps', compiled];
}

/** A child process's exit (resolves at once when it has exited already). */
function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', () => r()));
}

/** The embedded PostgreSQL's process: its phases as it reports them (embedded-pg.ts) and its URL once it accepts connections. */
interface DatabaseProcess {
  child: ChildProcess;
  ready: Promise<string>;
  started: boolean;
}

/** Starts the embedded PostgreSQL in its own process group (embedded-pg.ts), printing each phase of its start. */
function startDatabase(prod: boolean, dir: string, port: number): DatabaseProcess {
  const child = spawn(process.execPath, [...serviceArgs('packages/launcher/src/embedded-pg.ts', prod), dir, String(port), 'sports_timing'], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const db: DatabaseProcess = { child, started: false, ready: Promise.resolve('') };
  db.ready = new Promise((resolve, reject) => {
    child.on('message', (m: { phase?: string; url?: string }) => {
      if (m.phase === 'initdb') console.log(`[start] initdb: creating the database cluster in ${dir} (first start)`);
      if (m.phase === 'starting') console.log(`[start] starting PostgreSQL on 127.0.0.1:${port}`);
      if (m.url) {
        db.started = true;
        console.log('[start] PostgreSQL accepts connections');
        resolve(m.url);
      }
    });
    child.once('exit', (code) => reject(new StartFailed(`the embedded PostgreSQL did not start (exit code ${code}); its reason is above`)));
  });
  return db;
}

/** A start-up failure already explained in one line (no stack trace). */
class StartFailed extends Error {}

/** Resolves once process group `pgid` has no process left (polled; after `timeoutMs` its members are killed). */
async function groupGone(pgid: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      process.kill(-pgid, 0);
    } catch {
      return; // ESRCH: nothing left
    }
    if (Date.now() > deadline) {
      process.kill(-pgid, 'SIGKILL');
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Whether something accepts connections on `host`:`port` now. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const socket = net.connect(port, host);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Resolves once something accepts connections on `host`:`port`, or after `timeoutMs` (then the ordering
 * service's own start-up check names the address it cannot reach, README "Configuration").
 */
async function listening(host: string, port: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !(await accepts(host, port))) await new Promise((r) => setTimeout(r, 200));
}

/** Resolves once `url` answers 2xx (a service's `/readyz`: migrated, demo data loaded, database reachable). */
async function answers(url: string, stillStarting: () => boolean): Promise<void> {
  while (stillStarting()) {
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(5_000) })).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function main(): Promise<void> {
  const startedAt = Date.now();
  const children = new Map<string, ChildProcess>();
  let database: DatabaseProcess | undefined;
  let stopping = false;
  /** Stops whatever has started so far, in order (services last started first, then the database), then exits. */
  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    console.log('[start] stopping: services first, then the database');
    // Last started, first stopped: the ordering service before the simulators it calls.
    for (const child of [...children.values()].reverse()) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited(child);
    }
    if (database) {
      const { child } = database;
      if (child.exitCode === null && child.signalCode === null) {
        // Started: it stops its server. Still in initdb or its server's start: the whole group (initdb, the server) is signalled.
        if (database.started && child.connected) child.send('stop');
        else process.kill(-child.pid!, 'SIGTERM');
        await exited(child);
      }
      await groupGone(child.pid!);
    }
    console.log('[start] stopped');
    process.exit(code);
  };
  // From the first moment: a Ctrl-C during initdb or a migration stops what has started, and nothing is left behind.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stopAll(0));
  // A parent that goes away without a signal reaching us (a supervisor killed hard): stop as well.
  const parent = process.ppid;
  setInterval(() => process.ppid !== parent && void stopAll(0), 500).unref();

  const prod = process.argv.includes('--prod');
  const liveSpeed = liveDemoSpeed(process.env.DEMO_LIVE);
  if (liveSpeed !== undefined && prod) throw new Error('DEMO_LIVE: the live demo replay runs with `pnpm start` (development) only');
  const args = new Map(SERVICES.map((s) => [s.name, serviceArgs(s.entry, prod)]));
  const env = { ...process.env };
  // NODE_ENV=production without APP_ENV stops here with one line naming APP_ENV, before anything starts.
  const environment = appEnvironmentFromEnv(env);
  // The ports the launcher itself uses or derives addresses from: a bad one is named here, before anything starts.
  const e = envReader(env);
  const host = checkHost('HOST', e.string('HOST', '127.0.0.1')!);
  const ports = {
    pg: e.int('EMBEDDED_PG_PORT', 5433, 1, 65535),
    ordering: e.int('ORDERING_PORT', 8080, 1, 65535),
    timing: e.int('TIMING_PORT', 8081, 1, 65535),
    erp: e.int('ERP_SIMULATOR_PORT', 8090, 1, 65535),
    payment: e.int('PAYMENT_SIMULATOR_PORT', 8091, 1, 65535),
  };
  const local = localAddress(host);
  // Misspelt or unknown settings are named (the README's table is the list), then the start goes on without them.
  const readme = path.join(root, 'README.md');
  if (existsSync(readme))
    for (const line of unknownVariableWarnings(process.env, configurationTableNames(readFileSync(readme, 'utf8')))) console.warn(`[start] ${line}`);
  // Readable logs for a person at a terminal; JSON when the output goes to a file or a collector.
  if (process.stdout.isTTY && environment === 'development') env.LOG_FORMAT ??= 'pretty';
  const dataDir = path.resolve(env.DATA_DIR ?? path.join(root, '.data'));
  env.DATA_DIR = dataDir;

  // Start-up clashes, each one line naming what to change, before anything starts (README "Start-up").
  const embedded = !env.DATABASE_URL;
  const uses: PortUse[] = [
    ...(embedded ? [{ variable: 'EMBEDDED_PG_PORT', host: '127.0.0.1', port: ports.pg }] : []),
    { variable: 'ORDERING_PORT', host, port: ports.ordering },
    { variable: 'TIMING_PORT', host, port: ports.timing },
    { variable: 'ERP_SIMULATOR_PORT', host, port: ports.erp },
    { variable: 'PAYMENT_SIMULATOR_PORT', host, port: ports.payment },
  ];
  const lock = lockDataDir(dataDir);
  const clashes = 'clash' in lock ? [lock.clash] : duplicatePorts(uses);
  if (clashes.length === 0) clashes.push(...(await takenPorts(uses)));
  if (clashes.length > 0) {
    if ('release' in lock) lock.release();
    for (const line of clashes) console.error(`[start] ${line}`);
    process.exit(1);
  }
  // Released on every exit (a stop, a failed start); a launcher killed hard leaves it, and the next start replaces it.
  if ('release' in lock) process.on('exit', lock.release);

  if (embedded) {
    const port = ports.pg;
    console.log(`[start] no DATABASE_URL: starting embedded PostgreSQL in ${path.join(dataDir, 'pg')} (127.0.0.1:${port}, user postgres, password postgres)`);
    database = startDatabase(prod, path.join(dataDir, 'pg'), port);
    try {
      env.DATABASE_URL = await database.ready;
    } catch (err) {
      if (stopping) return;
      throw err;
    }
  }
  // Point the ordering service at the simulators when they run on other than their default ports.
  const erpSimulator = `http://${local}:${ports.erp}`;
  env.ERP_BASE_URL_WECLAPP ??= `${erpSimulator}/webapp/api/v1`;
  env.ERP_BASE_URL_WECLAPP_SANDBOX ??= `${erpSimulator}/sandbox/webapp/api/v1`;
  env.PAYMENT_BASE_URL ??= `http://${local}:${ports.payment}/api/v1`;
  // The payment simulator delivers its status webhooks to the ordering service (a real provider is configured in its dashboard).
  env.PAYMENT_SIMULATOR_WEBHOOK_URLS ??= `${env.PUBLIC_BASE_URL ?? `http://${local}:${ports.ordering}`}/api/rest/v1/payment-provider/status`;
  // The ERP simulator delivers its webhooks (article/customer/sales order changes) to the ordering service with the
  // webhook secret in the URL, as a real weclapp webhook subscription would; ERP_WEBHOOK_SECRET must match on both sides.
  // The development secret (it is in the source) only in development and test: staging and production use their
  // own or none (the ordering service refuses the development one there, README "What production changes").
  if (!isDeployment(environment)) env.ERP_WEBHOOK_SECRET ??= DEV_ERP_WEBHOOK_SECRET;
  const erpWebhookUrl = (system: string, secret: string) =>
    `${env.PUBLIC_BASE_URL ?? `http://${local}:${ports.ordering}`}/api/rest/v1/erp/webhook?erpSystem=${system}&secret=${encodeURIComponent(secret)}`;
  if (env.ERP_WEBHOOK_SECRET) {
    env.ERP_SIMULATOR_WEBHOOK_URLS ??= erpWebhookUrl('weclapp', env.ERP_WEBHOOK_SECRET);
    env.ERP_SIMULATOR_SANDBOX_WEBHOOK_URLS ??= erpWebhookUrl('weclappSandbox', env.ERP_WEBHOOK_SECRET);
  }
  for (const s of SERVICES) {
    // The ordering service checks its ERP and payment addresses at start: the simulators listen first.
    if (s.name === 'ordering') await Promise.all([listening(local, ports.erp), listening(local, ports.payment)]);
    if (stopping) return;
    console.log(`[start] starting ${s.name}`);
    // Own process group (detached): a Ctrl-C in the terminal reaches the launcher only, which stops everything in order.
    const child = spawn(process.execPath, args.get(s.name)!, { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    prefixLines(s.name, child.stdout!, process.stdout);
    prefixLines(s.name, child.stderr!, process.stderr);
    child.on('exit', (code) => {
      if (!stopping) {
        console.error(`[start] ${s.name} exited with code ${code}; stopping everything`);
        void stopAll(1);
      }
    });
    children.set(s.name, child);
  }
  // Ready: the simulators accept connections, both services answer /readyz (migrated, demo data loaded).
  const serving = () => !stopping;
  await Promise.all([
    listening(local, ports.erp),
    listening(local, ports.payment),
    answers(`http://${local}:${ports.timing}/readyz`, serving),
    answers(`http://${local}:${ports.ordering}/readyz`, serving),
  ]);
  if (stopping) return;
  const width = Math.max(...SERVICES.map((s) => s.name.length));
  const servicePorts: Record<string, number> = { 'erp-sim': ports.erp, 'payment-sim': ports.payment, timing: ports.timing, ordering: ports.ordering };
  for (const s of SERVICES) console.log(`[start] ${s.name.padEnd(width)}  ${serviceUrls(host, servicePorts[s.name]).join('  ')}`);
  const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
  console.log(
    `[start] ready in ${seconds} s: timing ${serviceUrls(host, ports.timing)[0]}, ordering ${serviceUrls(host, ports.ordering)[0]}; Ctrl-C stops everything`,
  );
  if (liveSpeed !== undefined) {
    const timingUrl = `http://${local}:${ports.timing}`;
    startLiveDemo({ timingUrl, dataDir, speed: liveSpeed, env })
      .then(({ child, page }) => {
        console.log(`[start] DEMO_LIVE=${liveSpeed}: replaying VeNotte 2020 now at ${liveSpeed}x; live page ${page}`);
        prefixLines('live-demo', child.stdout!, process.stdout);
        prefixLines('live-demo', child.stderr!, process.stderr);
        // The replay ends by itself (the event is over); only a stop of everything ends it early.
        children.set('live-demo', child);
        child.on('exit', (code) => {
          children.delete('live-demo');
          if (!stopping) console.log(`[start] the live demo replay ended (exit code ${code})`);
        });
      })
      .catch((err: unknown) => console.error(`[start] live demo not started: ${err instanceof Error ? err.message : String(err)}`));
  }
}

main().catch((err: unknown) => {
  // A configuration mistake is one line naming its variable; anything else keeps its stack.
  console.error(
    err instanceof ConfigError || err instanceof StartFailed || (err instanceof Error && /^[A-Z][A-Z0-9_]+: /.test(err.message))
      ? `[start] ${err.message}`
      : err,
  );
  process.exit(1);
});
