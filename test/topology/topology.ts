/**
 * The production topology on one machine (SCALING.md): HAProxy in front of N timing and M ordering instances
 * of the compiled services (`pnpm build` output run with plain node), a private PostgreSQL primary with an
 * optional streaming hot standby (`pg_basebackup -R`), the machine's Redis for the shared rate limits (own key
 * prefix per run), both simulators and a real SMTP server (`smtp-server`), and optionally (`cache`) Debian's
 * nginx with infra/nginx/timing-cache.conf in front of the timing front end, the read path of result software
 * (test/support/nginx.ts; its port is a free one outside the block). `stop()` ends everything it started, also
 * after a failed start.
 *
 * Ports: everything lives in `basePort … basePort + 39` (see {@link PORTS}), so the CLI and the test run apart.
 * PostgreSQL (postgres-cluster.ts): `PG_BIN` (default Debian's `/usr/lib/postgresql/15/bin`); HAProxy (haproxy.ts): `HAPROXY_BIN`
 * (default `/usr/sbin/haproxy`); Redis: `TEST_REDIS_URL` (default `redis://127.0.0.1:6379`).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDatabase, createLogger, type Database } from '@sports-timing/shared';
import { ROOT, startServiceProcess, type ServiceProcess } from '../support/service-process';
import { HAPROXY_BIN, startHaproxy } from './haproxy';
import { startNginxCache, type NginxCache } from '../support/nginx';
import { startPostgres } from './postgres-cluster';
import { startTopologySmtp, type TopologySmtp } from './smtp';
import { testTime } from '@sports-timing/shared/src/test-time';

/** Settings of a `pnpm topology` run: `TOPOLOGY_BASE_PORT` (default 9510), `TOPOLOGY_QUICK=1` (phases a third as long). */
export function runSettings(): { basePort: number; quick: boolean } {
  return { basePort: Number(process.env.TOPOLOGY_BASE_PORT ?? 9510), quick: process.env.TOPOLOGY_QUICK === '1' };
}

/** Offsets from `basePort` of every listener the topology opens. */
const PORTS = { primary: 0, replica: 1, timingFrontend: 2, orderingFrontend: 3, erp: 4, payment: 5, smtp: 6, stats: 7, timing: 10, ordering: 20 } as const;

/** Options of {@link startTopology}. */
export interface TopologyOptions {
  /** First port of the 40-port block this topology uses. */
  basePort: number;
  /** Timing instances (at most 10). */
  timing: number;
  /** Ordering instances (at most 10; 0 leaves out ordering, simulators and SMTP). */
  ordering: number;
  /** Also start a hot-standby replica of the primary. */
  replica?: boolean;
  /** With `replica`: timing instances send whole punch downloads there (`TIMING_READ_DATABASE_URL`). */
  readFromReplica?: boolean;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
  /** Extra environment of every service instance (e.g. rate limits of a scenario). */
  env?: Record<string, string>;
  /**
   * Checkout whose compiled services the instances run at first (default: this repository). A rolling upgrade
   * starts them from the previous release's (test/topology/release.ts) and restarts them on this one.
   */
  codeRoot?: string;
  /**
   * Also start Debian's nginx with infra/nginx/timing-cache.conf in front of the timing front end (the
   * read path of result software, infra/README.md "nginx cache"); `cacheUrl` then names it.
   */
  cache?: boolean;
}

/** One service instance behind the balancer: a fixed port, so a restart comes back under the same HAProxy server. */
export interface Instance {
  service: 'timing' | 'ordering';
  /** HAProxy server name (`timing1`, `ordering2`, …), also sent back as `X-Served-By`. */
  name: string;
  port: number;
  url: string;
  /** Running process, undefined while stopped or killed. */
  proc: ServiceProcess | undefined;
  /** Checkout whose code the instance runs (or ran last). */
  codeRoot: string;
  /** Everything every incarnation of this instance printed (pino JSON lines). */
  output(): string;
  /** SIGKILL (no drain), resolves once the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM (graceful drain); answers the exit code. */
  stop(): Promise<number | null>;
  /** Starts it again (same port and environment; `codeRoot` switches its code for this and later starts); resolves once it listens. */
  start(codeRoot?: string): Promise<void>;
}

/** A running topology. */
export interface Topology {
  /** Balancer front ends. */
  timingUrl: string;
  orderingUrl: string;
  /** With `cache`: nginx's cache in front of the timing front end (`http://127.0.0.1:<port>`). */
  cacheUrl: string | undefined;
  /** Database URLs of the primary and (with `replica`) the standby. */
  primaryUrl: string;
  replicaUrl: string | undefined;
  /** Admin API key of the timing service and admin password of the ordering service. */
  timingAdminKey: string;
  orderingAdminPassword: string;
  timing: Instance[];
  ordering: Instance[];
  smtp: TopologySmtp | undefined;
  /** A pool on the primary (schema-qualified SQL) and, with `replica`, on the standby. */
  primary: Database<unknown>;
  replica: Database<unknown> | undefined;
  /** Stops the standby (`pg_ctl stop -m fast`); the topology's stop() then skips it. */
  stopReplica(): void;
  /** HAProxy's view of a server: `UP`, `DOWN`, `MAINT`, … (`UP 1/2` while rising counts as not up). */
  serverStatus(name: string): Promise<string>;
  /** Resolves once HAProxy reports the server `UP` (throws after `timeoutMs`, default 15 s). */
  waitUp(name: string, timeoutMs?: number): Promise<void>;
  /** Process ids by group (service instances, PostgreSQL servers and their backends, HAProxy), for CPU accounting. */
  pids(): { services: number[]; postgres: number[]; haproxy: number[] };
  /** Stops everything started, in reverse order; never throws. */
  stop(): Promise<void>;
}

/** `pnpm build` when a compiled entry is missing or older than a source file of its package. */
function ensureBuilt(log: (line: string) => void = () => undefined): void {
  const newest = (dir: string): number => {
    let t = 0;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const f = path.join(dir, e.name);
      t = Math.max(t, e.isDirectory() ? newest(f) : statSync(f).mtimeMs);
    }
    return t;
  };
  const pkgs = ['services/timing', 'services/ordering', 'packages/shared', 'packages/erp-simulator', 'packages/payment-simulator'];
  const stale = pkgs.some((p) => {
    const dist = path.join(ROOT, p, 'dist');
    return !existsSync(dist) || newest(path.join(ROOT, p, 'src')) > statSync(dist).mtimeMs;
  });
  if (!stale) return;
  log('pnpm build');
  execFileSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts/build.ts')], { cwd: ROOT, stdio: 'pipe' });
}

/** Starts the topology; on any failure stops what already runs and rethrows. */
export async function startTopology(opts: TopologyOptions): Promise<Topology> {
  const log = opts.log ?? (() => undefined);
  const cleanups: (() => Promise<void> | void)[] = [];
  const base = opts.basePort;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'topology-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const stopAll = async () => {
    for (const c of cleanups.reverse()) {
      try {
        await c();
      } catch {
        // keep stopping the rest
      }
    }
    cleanups.length = 0;
  };
  try {
    if (!existsSync(HAPROXY_BIN)) throw new Error(`HAProxy not found at ${HAPROXY_BIN} (Debian: apt-get install haproxy)`);
    ensureBuilt(log);

    const cluster = await startPostgres(dir, {
      primaryPort: base + PORTS.primary,
      replicaPort: opts.replica ? base + PORTS.replica : undefined,
      log,
      onCleanup: (fn) => cleanups.push(fn),
    });
    const { primaryUrl, replicaUrl } = cluster;
    const primary = createDatabase<unknown>({
      url: primaryUrl,
      schema: 'public',
      logger: createLogger('topology', 'silent'),
      applicationName: 'topology',
      max: 4,
    });
    cleanups.push(() => primary.close());
    const replica = replicaUrl
      ? createDatabase<unknown>({ url: replicaUrl, schema: 'public', logger: createLogger('topology', 'silent'), applicationName: 'topology', max: 4 })
      : undefined;
    if (replica) cleanups.push(() => replica.close());

    const runId = `topo-${process.pid}-${Date.now().toString(36)}`;
    const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
    const timingAdminKey = `tk_${Buffer.from(`${runId}-timing-admin-key-0123456789abcdef`).toString('base64url')}`.slice(0, 60);
    const orderingAdminPassword = `Topo-admin-${runId}`;
    const dataDir = path.join(dir, 'data');
    mkdirSync(dataDir);

    let smtp: TopologySmtp | undefined;
    let erp: ServiceProcess | undefined;
    let payment: ServiceProcess | undefined;
    if (opts.ordering > 0) {
      smtp = await startTopologySmtp(base + PORTS.smtp);
      cleanups.push(() => smtp!.stop());
      log('simulators');
      [erp, payment] = await Promise.all([
        startServiceProcess({ entry: 'packages/erp-simulator/dist/main.js', env: { ERP_SIMULATOR_PORT: String(base + PORTS.erp) } }),
        startServiceProcess({ entry: 'packages/payment-simulator/dist/main.js', env: { PAYMENT_SIMULATOR_PORT: String(base + PORTS.payment) } }),
      ]);
      cleanups.push(async () => {
        await Promise.all([erp!.stop(2000), payment!.stop(2000)]);
      });
    }

    const common = {
      DATABASE_URL: primaryUrl,
      DATA_DIR: dataDir,
      REDIS_URL: redisUrl,
      TRUSTED_PROXIES: '127.0.0.1',
      HOST: '127.0.0.1',
      SHUTDOWN_ACCEPT_MS: '1000',
    };
    const timingEnv = (port: number) => ({
      ...common,
      TIMING_PORT: String(port),
      DEMO_DATA: 'false',
      TIMING_BOOTSTRAP_API_KEY: timingAdminKey,
      RATE_LIMIT_KEY_PREFIX: `${runId}:timing`,
      TIMING_MAX_LIVE_CONNECTIONS_PER_CLIENT: '1000',
      ...(opts.readFromReplica && replicaUrl ? { TIMING_READ_DATABASE_URL: replicaUrl } : {}),
      ...opts.env,
    });
    const orderingEnv = (port: number) => ({
      ...common,
      ORDERING_PORT: String(port),
      APP_ENV: 'test',
      BOOTSTRAP_ADMIN_PASSWORD: orderingAdminPassword,
      RATE_LIMIT_KEY_PREFIX: `${runId}:ordering`,
      SMTP_URL: smtp?.url,
      ERP_BASE_URL_WECLAPP: `http://127.0.0.1:${base + PORTS.erp}/webapp/api/v1`,
      ERP_BASE_URL_WECLAPP_SANDBOX: `http://127.0.0.1:${base + PORTS.erp}/sandbox/webapp/api/v1`,
      PAYMENT_BASE_URL: `http://127.0.0.1:${base + PORTS.payment}/api/v1`,
      PUBLIC_BASE_URL: `http://127.0.0.1:${base + PORTS.orderingFrontend}`,
      // Every load client shares the loopback address: the per-caller order budgets would stop the run,
      // not the topology (the shared limit is measured on its own in the rate-limit scenario).
      RATE_LIMIT_ORDERS_PER_MINUTE: '0',
      ORDER_PUBLIC_ORDERS_PER_CALLER_PER_HOUR: '0',
      ORDER_PUBLIC_CARDS_PER_CALLER_PER_HOUR: '0',
      ORDER_CLIENT_ORDERS_PER_HOUR: '0',
      ORDER_CLIENT_CARDS_PER_HOUR: '0',
      ORDER_MAILS_PER_RECIPIENT_PER_HOUR: '0',
      ...opts.env,
    });

    const makeInstance = (service: 'timing' | 'ordering', n: number): Instance => {
      const port = base + (service === 'timing' ? PORTS.timing : PORTS.ordering) + n;
      const entry = `services/${service}/dist/server.js`;
      const env = service === 'timing' ? timingEnv(port) : orderingEnv(port);
      let past = '';
      const inst: Instance = {
        service,
        name: `${service}${n + 1}`,
        port,
        url: `http://127.0.0.1:${port}`,
        proc: undefined,
        codeRoot: opts.codeRoot ?? ROOT,
        output: () => past + (inst.proc?.output() ?? ''),
        async kill() {
          const p = inst.proc;
          if (!p) return;
          inst.proc = undefined;
          past += p.output();
          if (p.child.exitCode === null && p.child.signalCode === null) {
            const gone = new Promise((r) => p.child.once('exit', r));
            p.child.kill('SIGKILL');
            await gone;
          }
        },
        async stop() {
          const p = inst.proc;
          if (!p) return null;
          const code = await p.stop(30_000);
          inst.proc = undefined;
          past += p.output();
          return code;
        },
        async start(codeRoot?: string) {
          if (codeRoot) inst.codeRoot = codeRoot;
          inst.proc = await startServiceProcess({ entry, env, timeoutMs: testTime(60_000), root: inst.codeRoot });
        },
      };
      return inst;
    };
    const timing = Array.from({ length: opts.timing }, (_, i) => makeInstance('timing', i));
    const ordering = Array.from({ length: opts.ordering }, (_, i) => makeInstance('ordering', i));
    cleanups.push(async () => {
      await Promise.all([...timing, ...ordering].map((i) => i.kill()));
    });
    // The first instance of each service migrates and writes the shared development keys alone; the others
    // then start together (migrations are serialized by an advisory lock anyway).
    log(`starting ${opts.timing} timing + ${opts.ordering} ordering instances`);
    await Promise.all([timing[0]?.start(), ordering[0]?.start()]);
    await Promise.all([...timing.slice(1), ...ordering.slice(1)].map((i) => i.start()));

    log('haproxy');
    const balancer = startHaproxy(dir, {
      timingPort: base + PORTS.timingFrontend,
      orderingPort: base + PORTS.orderingFrontend,
      statsPort: base + PORTS.stats,
      timing,
      ordering,
    });
    cleanups.push(() => balancer.stop());
    const { serverStatus, waitUp } = balancer;
    await Promise.all([...timing, ...ordering].map((i) => waitUp(i.name)));
    let cache: NginxCache | undefined;
    if (opts.cache) {
      log('nginx cache');
      cache = await startNginxCache(`127.0.0.1:${base + PORTS.timingFrontend}`);
      cleanups.push(() => cache!.stop());
    }
    log('topology up');

    return {
      timingUrl: `http://127.0.0.1:${base + PORTS.timingFrontend}`,
      orderingUrl: `http://127.0.0.1:${base + PORTS.orderingFrontend}`,
      cacheUrl: cache?.url,
      primaryUrl,
      replicaUrl,
      timingAdminKey,
      orderingAdminPassword,
      timing,
      ordering,
      smtp,
      primary,
      replica,
      serverStatus,
      waitUp,
      stopReplica: cluster.stopReplica,
      pids: () => {
        return {
          services: [...timing, ...ordering].map((i) => i.proc?.child.pid).filter((p): p is number => p !== undefined),
          postgres: cluster.pids(),
          haproxy: balancer.pid ? [balancer.pid] : [],
        };
      },
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
