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
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { appEnvironmentFromEnv, ConfigError, DEV_ERP_WEBHOOK_SECRET, envReader, isDeployment } from '@sports-timing/shared';
import { liveDemoSpeed, startLiveDemo } from './live-demo';

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

/** Starts the embedded PostgreSQL in its own process group (embedded-pg.ts); resolves with its URL and process. */
function startDatabase(prod: boolean, dir: string, port: number): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [...serviceArgs('packages/launcher/src/embedded-pg.ts', prod), dir, String(port), 'sports_timing'], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (m: { url: string }) => resolve({ url: m.url, child }));
    child.once('exit', (code) => reject(new Error(`the embedded PostgreSQL did not start (exit code ${code})`)));
  });
}

/**
 * Resolves once something accepts connections on 127.0.0.1:`port`, or after `timeoutMs` (then the ordering
 * service's own start-up check names the address it cannot reach, README "Configuration").
 */
async function listening(port: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function main(): Promise<void> {
  const prod = process.argv.includes('--prod');
  const liveSpeed = liveDemoSpeed(process.env.DEMO_LIVE);
  if (liveSpeed !== undefined && prod) throw new Error('DEMO_LIVE: the live demo replay runs with `pnpm start` (development) only');
  const args = new Map(SERVICES.map((s) => [s.name, serviceArgs(s.entry, prod)]));
  const env = { ...process.env };
  // NODE_ENV=production without APP_ENV stops here with one line naming APP_ENV, before anything starts.
  const environment = appEnvironmentFromEnv(env);
  // The ports the launcher itself uses or derives addresses from: a bad one is named here, before anything starts.
  const e = envReader(env);
  const ports = {
    pg: e.int('EMBEDDED_PG_PORT', 5433, 1, 65535),
    ordering: e.int('ORDERING_PORT', 8080, 1, 65535),
    timing: e.int('TIMING_PORT', 8081, 1, 65535),
    erp: e.int('ERP_SIMULATOR_PORT', 8090, 1, 65535),
    payment: e.int('PAYMENT_SIMULATOR_PORT', 8091, 1, 65535),
  };
  // Readable logs for a person at a terminal; JSON when the output goes to a file or a collector.
  if (process.stdout.isTTY && environment === 'development') env.LOG_FORMAT ??= 'pretty';
  const dataDir = path.resolve(env.DATA_DIR ?? path.join(root, '.data'));
  env.DATA_DIR = dataDir;
  let database: ChildProcess | undefined;
  if (!env.DATABASE_URL) {
    const port = ports.pg;
    console.log(`[start] no DATABASE_URL: starting embedded PostgreSQL in ${path.join(dataDir, 'pg')} (127.0.0.1:${port}, user postgres, password postgres)`);
    const started = await startDatabase(prod, path.join(dataDir, 'pg'), port);
    database = started.child;
    env.DATABASE_URL = started.url;
  }
  // Point the ordering service at the simulators when they run on other than their default ports.
  const erpSimulator = `http://127.0.0.1:${ports.erp}`;
  env.ERP_BASE_URL_WECLAPP ??= `${erpSimulator}/webapp/api/v1`;
  env.ERP_BASE_URL_WECLAPP_SANDBOX ??= `${erpSimulator}/sandbox/webapp/api/v1`;
  env.PAYMENT_BASE_URL ??= `http://127.0.0.1:${ports.payment}/api/v1`;
  // The payment simulator delivers its status webhooks to the ordering service (a real provider is configured in its dashboard).
  env.PAYMENT_SIMULATOR_WEBHOOK_URLS ??= `${env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${ports.ordering}`}/api/rest/v1/payment-provider/status`;
  // The ERP simulator delivers its webhooks (article/customer/sales order changes) to the ordering service with the
  // webhook secret in the URL, as a real weclapp webhook subscription would; ERP_WEBHOOK_SECRET must match on both sides.
  // The development secret (it is in the source) only in development and test: staging and production use their
  // own or none (the ordering service refuses the development one there, README "What production changes").
  if (!isDeployment(environment)) env.ERP_WEBHOOK_SECRET ??= DEV_ERP_WEBHOOK_SECRET;
  const erpWebhookUrl = (system: string, secret: string) =>
    `${env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${ports.ordering}`}/api/rest/v1/erp/webhook?erpSystem=${system}&secret=${encodeURIComponent(secret)}`;
  if (env.ERP_WEBHOOK_SECRET) {
    env.ERP_SIMULATOR_WEBHOOK_URLS ??= erpWebhookUrl('weclapp', env.ERP_WEBHOOK_SECRET);
    env.ERP_SIMULATOR_SANDBOX_WEBHOOK_URLS ??= erpWebhookUrl('weclappSandbox', env.ERP_WEBHOOK_SECRET);
  }
  const children = new Map<string, ChildProcess>();
  let stopping = false;
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
      database.send('stop');
      await exited(database);
    }
    console.log('[start] stopped');
    process.exit(code);
  };
  for (const s of SERVICES) {
    // The ordering service checks its ERP and payment addresses at start: the simulators listen first.
    if (s.name === 'ordering') await Promise.all([listening(ports.erp), listening(ports.payment)]);
    if (stopping) break;
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
  if (liveSpeed !== undefined) {
    const timingUrl = `http://127.0.0.1:${ports.timing}`;
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
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stopAll(0));
  // A parent that goes away without a signal reaching us (a supervisor killed hard): stop as well.
  const parent = process.ppid;
  setInterval(() => process.ppid !== parent && void stopAll(0), 500);
}

main().catch((err: unknown) => {
  // A configuration mistake is one line naming its variable; anything else keeps its stack.
  console.error(err instanceof ConfigError || (err instanceof Error && /^[A-Z][A-Z0-9_]+: /.test(err.message)) ? `[start] ${err.message}` : err);
  process.exit(1);
});
