/**
 * `pnpm topology`: the production topology on this machine (test/topology/topology.ts) under the load scenarios
 * of test/topology/*-scenarios.ts, rolling-restart.ts and throughput.ts, written to SCALING.md at the repository root (figures of this run, then the
 * capacity model). Exits 1 when a scenario found a violation (the file is written anyway).
 *
 * Ports: `TOPOLOGY_BASE_PORT` (default 9510) and the 39 after it. Needs HAProxy, PostgreSQL 15 binaries and
 * Redis on 127.0.0.1:6379 (see the library's header). `TOPOLOGY_QUICK=1` shortens every phase (smoke run).
 */
import os from 'node:os';
import path from 'node:path';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { maintenanceAndCaches, orderDelivery, sharedRateLimit } from '../test/topology/order-scenarios';
import { cachedPolls } from '../test/topology/cache-scenarios';
import { liveResume, punchDelivery, replicaLag } from '../test/topology/punch-scenarios';
import { preparePreviousRelease } from '../test/topology/release';
import { NGINX_BIN } from '../test/support/nginx';
import { rollingRestart } from '../test/topology/rolling-restart';
import { rollingUpgrade } from '../test/topology/rolling-upgrade';
import { throughput, type ThroughputResult } from '../test/topology/throughput';
import { runSettings, startTopology } from '../test/topology/topology';
import { renderScaling, type Figures } from '../test/topology/report';

const { basePort: BASE, quick: QUICK } = runSettings();
const scale = (ms: number) => (QUICK ? Math.round(ms / 3) : ms);
const log = (line: string) => process.stdout.write(`[topology] ${line}\n`);

/** The topology running now, stopped on Ctrl-C or SIGTERM so that no server outlives the run. */
let current: { stop(): Promise<void> } | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping the topology`);
    void (current?.stop() ?? Promise.resolve()).then(() => process.exit(130));
  });
}

async function main(): Promise<number> {
  const started = new Date();
  const loadAverage = os.loadavg()[0];
  const f: Partial<Figures> = {};
  log('topology: 3 timing + 2 ordering instances, primary + standby');
  // nginx (optional: section (i) says so when it is missing) caches the read path in front of the balancer.
  const withCache = existsSync(NGINX_BIN);
  const t = await startTopology({ basePort: BASE, timing: 3, ordering: 2, replica: true, cache: withCache, log });
  current = t;
  try {
    log('(a) 32 uploaders + 8 pollers');
    f.punches = await punchDelivery(t, { uploaders: 32, pollers: 8, durationMs: scale(15_000), tag: 'a1' });
    log('(a) again while timing2 is SIGKILLed and restarted');
    f.punchesKill = await punchDelivery(t, {
      uploaders: 32,
      pollers: 8,
      durationMs: scale(15_000),
      tag: 'a2',
      disruption: { mode: 'kill', instance: t.timing[1], atMs: scale(4_000), downMs: scale(3_000) },
    });
    log('(b) SSE and long-poll clients while timing3 is SIGKILLed');
    f.live = await liveResume(t, {
      streams: 8,
      longPolls: 8,
      uploaders: 8,
      durationMs: scale(10_000),
      tag: 'b',
      disruption: { mode: 'kill', instance: t.timing[2], atMs: scale(3_000), downMs: scale(2_000) },
    });
    log('(c) orders while ordering1 is SIGKILLed');
    f.orders = await orderDelivery(t, {
      clients: 8,
      orders: QUICK ? 100 : 400,
      firstCard: 8_300_000,
      tag: 'c',
      disruption: { mode: 'kill', instance: t.ordering[0], atMs: scale(3_000), downMs: scale(2_000) },
      stalledOrders: 2,
    });
    f.maintenance = await maintenanceAndCaches(t);
    log('(d) shared rate limit');
    f.rateLimit = await sharedRateLimit(t, { limitPerMinute: 120, requests: 300, callerIp: `198.51.100.${1 + (process.pid % 250)}` });
    log('(e) replica lag');
    f.replica = await replicaLag(t, { uploaders: 16, samples: QUICK ? 50 : 200, tag: 'e' });
    log('(f) rolling restart under load');
    f.rolling = await rollingRestart(t, { clients: 16, tag: 'f', firstCard: 8_600_000 });
    if (withCache) {
      log('(i) pollers through the nginx cache');
      f.cache = await cachedPolls(t, { uploaders: 16, pollers: 32, durationMs: scale(10_000), tag: 'i' });
    }
  } finally {
    await t.stop();
  }
  log('(h) rolling upgrade from the previous release');
  const release = preparePreviousRelease(log);
  const tu = await startTopology({ basePort: BASE, timing: 2, ordering: 2, codeRoot: release.root, log });
  current = tu;
  try {
    f.upgrade = await rollingUpgrade(tu, { release, durationMs: scale(10_000), mixedMs: scale(3_000), tag: 'h', firstCard: 8_800_000 });
  } finally {
    await tu.stop();
  }
  f.throughput = [] as ThroughputResult[];
  for (const n of [1, 2, 3]) {
    log(`(g) throughput with ${n} timing instance(s)`);
    const tt = await startTopology({ basePort: BASE, timing: n, ordering: 0, log });
    current = tt;
    try {
      f.throughput.push(
        await throughput(tt, { uploaders: 32, pollers: 32, phaseMs: scale(10_000), tag: `g${n}`, processes: () => ({ ...tt.pids(), loadGenerator: [] }) }),
      );
    } finally {
      await tt.stop();
    }
  }
  const figures = f as Figures;
  const md = renderScaling(figures, {
    date: started.toISOString(),
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? '?',
    node: process.version,
    quick: QUICK,
    loadAverage,
  });
  const target = path.join(__dirname, '..', 'SCALING.md');
  writeFileSync(target, md + keptSection(target));
  const violations = (Object.entries(figures) as [string, Figures[keyof Figures]][]).flatMap(([k, v]) =>
    (v === undefined ? [] : Array.isArray(v) ? v.flatMap((x) => x.violations) : v.violations).map((x) => `${k}: ${x}`),
  );
  for (const v of violations) log(`VIOLATION ${v}`);
  log(`SCALING.md written; ${violations.length} violations`);
  return violations.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);

/**
 * The section of SCALING.md measured by another script (bench/src/stream-fanout.ts, between the markers
 * `<!-- stream-fanout:begin -->` and `<!-- stream-fanout:end -->`), kept as it is: this run does not measure it.
 */
function keptSection(file: string): string {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const m = /\n<!-- stream-fanout:begin -->[\s\S]*<!-- stream-fanout:end -->\n/.exec(text);
  return m ? m[0] : '';
}
