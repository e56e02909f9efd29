/**
 * (g) Throughput of a running {@link Topology} per number of instances (SCALING.md): requests per second, where
 * the CPU went (services, PostgreSQL, HAProxy, the load generator) and what PostgreSQL sessions waited on.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { sleep, startUploaders } from './load-tools';
import type { Topology } from './topology';

// ─────────────────────────── (g) throughput per number of instances ───────────────────────────

/** CPU seconds used during a phase, by process group. */
export type CpuShare = Record<'services' | 'postgres' | 'haproxy' | 'loadGenerator', number>;

/** Figures of {@link throughput}. */
export interface ThroughputResult {
  instances: number;
  uploadsPerSecond: number;
  punchesPerSecond: number;
  pollsPerSecond: number;
  uploadSeconds: number;
  pollSeconds: number;
  uploadCpu: CpuShare;
  pollCpu: CpuShare;
  /** What PostgreSQL's active backends were doing, sampled every 100 ms: `CPU` or `<wait type>:<wait event>` → share of samples. */
  uploadWaits: Record<string, number>;
  pollWaits: Record<string, number>;
  /** The machine's 1-minute load average at the end of each phase (other work on the machine shows here). */
  loadAverage: [number, number];
  violations: string[];
}

/** Samples pg_stat_activity of the topology's database every 100 ms until stopped; answers shares per state. */
function sampleWaits(t: Topology): { stop(): Promise<Record<string, number>> } {
  const counts: Record<string, number> = {};
  let total = 0;
  let stopped = false;
  const run = (async () => {
    while (!stopped) {
      const { rows } = await t.primary.pool.query<{ w: string; n: string }>(
        `select coalesce(wait_event_type || ':' || wait_event, 'CPU') w, count(*) n from pg_stat_activity
          where datname = current_database() and state = 'active' and pid <> pg_backend_pid() and backend_type = 'client backend' group by 1`,
      );
      for (const r of rows) {
        counts[r.w] = (counts[r.w] ?? 0) + Number(r.n);
        total += Number(r.n);
      }
      await sleep(100);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await run;
      return Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, v / (total || 1)]));
    },
  };
}

/** CPU seconds (user + system) of the given pids from /proc, children of PostgreSQL's postmaster included. */
function cpuSeconds(pids: number[]): number {
  const tick = 100; // USER_HZ on Linux
  let total = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += (Number(f[11]) + Number(f[12])) / tick;
    } catch {
      // process gone
    }
  }
  return total;
}

/**
 * Upload throughput (`uploaders` clients, batches of 20) and then poll throughput (`pollers` clients, each
 * poll a page of up to 1000 punches of an 8-modem filter from a random afterId), each for `phaseMs`, through
 * the balancer; with the CPU each process group used, which names the bottleneck.
 */
export async function throughput(
  t: Topology,
  o: { uploaders: number; pollers: number; phaseMs: number; tag: string; processes: () => Record<keyof CpuShare, number[]> },
): Promise<ThroughputResult> {
  const violations: string[] = [];
  const modems = Array.from({ length: 8 }, (_, i) => `TOPO-${o.tag}-${i + 1}`);
  const cpu = () => {
    const p = o.processes();
    const self = process.cpuUsage();
    return {
      services: cpuSeconds(p.services),
      postgres: cpuSeconds(p.postgres),
      haproxy: cpuSeconds(p.haproxy),
      loadGenerator: (self.user + self.system) / 1e6,
    };
  };
  const diff = (a: CpuShare, b: CpuShare): CpuShare => ({
    services: b.services - a.services,
    postgres: b.postgres - a.postgres,
    haproxy: b.haproxy - a.haproxy,
    loadGenerator: b.loadGenerator - a.loadGenerator,
  });

  let c0 = cpu();
  let s0 = Date.now();
  let waits = sampleWaits(t);
  const up = startUploaders(t, { uploaders: o.uploaders, modems, batch: [20, 20], violations });
  await sleep(o.phaseMs);
  await up.stop();
  const uploadSeconds = (Date.now() - s0) / 1000;
  const uploadCpu = diff(c0, cpu());
  const uploadWaits = await waits.stop();
  const uploadLoad = os.loadavg()[0];
  const uploads = up.uploads;

  const { rows } = await t.primary.pool.query<{ max: string }>('select max(id) max from timing.punches where modem = any($1)', [modems]);
  const maxId = Number(rows[0].max ?? 0);
  let polls = 0;
  let stop = false;
  c0 = cpu();
  s0 = Date.now();
  waits = sampleWaits(t);
  const poller = async () => {
    while (!stop) {
      const afterId = Math.max(0, maxId - 1000 - Math.floor(Math.random() * 5000));
      try {
        const res = await fetch(`${t.timingUrl}/api/rest/v1/punches?modem=${modems.join(',')}&afterId=${afterId}`, { headers: { apikey: t.timingAdminKey } });
        await res.arrayBuffer();
        if (res.status === 200) polls++;
        else violations.push(`poll answered ${res.status}`);
      } catch (err) {
        violations.push(`poll failed: ${(err as Error).message}`);
      }
    }
  };
  const runs = Array.from({ length: o.pollers }, () => poller());
  await sleep(o.phaseMs);
  stop = true;
  await Promise.all(runs);
  const pollSeconds = (Date.now() - s0) / 1000;
  const pollCpu = diff(c0, cpu());
  const pollWaits = await waits.stop();
  return {
    instances: t.timing.length,
    uploadsPerSecond: uploads / uploadSeconds,
    punchesPerSecond: (uploads * 20) / uploadSeconds,
    pollsPerSecond: polls / pollSeconds,
    uploadSeconds,
    pollSeconds,
    uploadCpu,
    pollCpu,
    uploadWaits,
    pollWaits,
    loadAverage: [uploadLoad, os.loadavg()[0]],
    violations: [...new Set(violations)].slice(0, 10),
  };
}
