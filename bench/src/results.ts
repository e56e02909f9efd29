/**
 * A run's results as stored in bench/results/*.json: what was measured per scenario, server and round, the
 * checks before the load, and the per-scenario summaries (medians over rounds) computed from them.
 */
import type { ChampionshipFigures } from './championship';
import type { MailThroughput } from './mail';
import type { RunMode } from './servers';
import type { DatasetInfo } from './dataset';
import type { OutboxDrain } from './database-probes';
import type { LoadResult } from './load-spec';
import type { InstanceName, Scenario } from './scenarios';

/** One load run of one instance in one round. */
export interface Measurement {
  scenario: string;
  instance: InstanceName;
  round: number;
  load: LoadResult;
  /** Uploads: punches stored per second (database count before/after ÷ duration). */
  punchesPerSecond?: number;
  /** Peak RSS of the server process during the run (bytes; Node servers only). */
  rssPeak?: number | null;
  /** CPU time of the server process during the run (s, user + system from `/proc`; not PostgREST's). */
  cpuSeconds?: number;
  /** CPU time of the benchmark databases' PostgreSQL backends during the run (s, from `/proc`). */
  databaseCpuSeconds?: number;
  /** Shop: the payment simulator (standing for the external provider) during the run: CPU s and peak RSS bytes. */
  paymentSimulator?: { cpuSeconds: number | null; rssPeak: number | null };
  /** Popular scenarios: live clients checked against the database afterwards, those that missed, repeated or reordered a punch, punches they received. */
  gapFree?: { clients: number; violations: number; received: number };
  /**
   * Scenarios that drain the outbox: what was left when the load ended and the drain, and the sustained rate
   * (2xx answers ÷ (load + drain seconds)); the CPU figures of such a run include the drain.
   */
  outbox?: OutboxDrain & { sustainedRps: number };
  /** The championship evening: its figures (championship.ts). */
  championship?: ChampionshipFigures;
  loadAvgBefore: number[];
  loadAvgAfter: number[];
}

/** The pre-load check of one instance in one scenario: one request, its status, size and punch ids. */
export interface Check {
  scenario: string;
  instance: InstanceName;
  status: number;
  /** Body bytes as sent (compressed when gzip). */
  bodyBytes: number;
  contentEncoding: string | null;
  /** Punch ids in response order (reads). Not written to the results file. */
  ids?: number[];
  idCount?: number;
  firstId?: number | null;
  lastId?: number | null;
  /** X-Total-Count, or the total of PostgREST's Content-Range. */
  total?: number | null;
  /** Same ids in the same order as the scenario's first instance. */
  sameIds?: boolean;
  error?: string;
}

/** A scenario × instance that was not measured, and why. */
export interface Unavailable {
  scenario: string;
  instance: InstanceName;
  reason: string;
}

/** Medians over rounds. */
export interface Summary {
  scenario: string;
  instance: InstanceName;
  rounds: number;
  rps: number;
  p50: number;
  p99: number;
  /** Body bytes per response from the check. */
  bytesPerResponse: number | null;
  punchesPerSecond?: number;
  rssPeak?: number | null;
  /** Median CPU of the server process per request (ms), see {@link Measurement.cpuSeconds}. */
  cpuMsPerRequest?: number;
  /** Median CPU of the PostgreSQL backends per request (ms). */
  databaseCpuMsPerRequest?: number;
  /** Shop: the payment simulator's median CPU per request (ms) and peak RSS (bytes). */
  paymentSimulator?: { cpuMsPerRequest?: number; rssPeak?: number };
  non2xx: number;
  errors: number;
  /** Popular scenarios, over all rounds: live clients checked, violations of the gap-free rule, punches received. */
  gapFree?: { clients: number; violations: number; received: number };
  /** Scenarios that drain the outbox: medians of the sustained rate (req/s), the backlog when the load ended and the drain (s); jobs left undone, all rounds. */
  outbox?: { sustainedRps: number; backlogAtEnd: number; drainSeconds: number; left: number };
}

/** Machine facts. */
interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryBytes: number;
  loadAvgBefore: number[];
  loadAvgAfter: number[];
  platform: string;
}

/** Versions of what ran. */
export interface Versions {
  node: string;
  postgres: string;
  postgrest: string;
  autocannon: string;
  commit: string;
}

/** A performance target and whether this run met it. */
export interface TargetResult {
  target: string;
  measured: string;
  status: 'met' | 'not met' | 'not measured';
  note?: string;
}

/** The options a run was made with. */
export interface RunOptions {
  scale: number;
  durationSeconds: number;
  rounds: number;
  warmupSeconds: number;
  only: string[];
  /** Servers measured (`--servers`; empty: every server a scenario lists). */
  servers?: string[];
  databaseUrl: string;
  /** How the Node servers ran: compiled JavaScript under `node` (default) or TypeScript under tsx (`--tsx`). */
  runMode?: RunMode;
}

/** Everything a run produced. */
export interface BenchResults {
  startedAt: string;
  finishedAt: string;
  options: RunOptions;
  machine: MachineInfo;
  versions: Versions;
  datasets: { main: DatasetInfo; flat?: DatasetInfo };
  scenarios: Pick<Scenario, 'id' | 'group' | 'title' | 'description' | 'instances' | 'connections' | 'overallRate'>[];
  checks: Check[];
  measurements: Measurement[];
  summaries: Summary[];
  unavailable: Unavailable[];
  targets: TargetResult[];
  /** Mail dispatch throughput (src/mail.ts), when measured. */
  mail?: MailThroughput;
}

/** Median of numbers (mean of the middle two for even counts). */
export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Per scenario × instance medians over rounds. */
export function summarize(measurements: Measurement[], checks: Check[]): Summary[] {
  const groups = new Map<string, Measurement[]>();
  for (const m of measurements) {
    const k = `${m.scenario}\u0000${m.instance}`;
    groups.set(k, [...(groups.get(k) ?? []), m]);
  }
  return [...groups.values()].map((ms) => {
    const { scenario, instance } = ms[0];
    const check = checks.find((c) => c.scenario === scenario && c.instance === instance);
    const peaks = ms.map((m) => m.rssPeak).filter((v): v is number => typeof v === 'number');
    const pps = ms.map((m) => m.punchesPerSecond).filter((v): v is number => typeof v === 'number');
    const perRequest = (pick: (m: Measurement) => number | null | undefined): number[] =>
      ms.flatMap((m) => {
        const s = pick(m);
        return typeof s === 'number' && m.load.requests > 0 ? [(s * 1000) / m.load.requests] : [];
      });
    const cpu = perRequest((m) => m.cpuSeconds);
    const dbCpu = perRequest((m) => m.databaseCpuSeconds);
    const simCpu = perRequest((m) => m.paymentSimulator?.cpuSeconds);
    const simPeaks = ms.map((m) => m.paymentSimulator?.rssPeak).filter((v): v is number => typeof v === 'number');
    return {
      scenario,
      instance,
      rounds: ms.length,
      rps: median(ms.map((m) => m.load.rps)),
      p50: median(ms.map((m) => m.load.p50)),
      p99: median(ms.map((m) => m.load.p99)),
      bytesPerResponse: check ? check.bodyBytes : null,
      ...(pps.length ? { punchesPerSecond: median(pps) } : {}),
      ...(peaks.length ? { rssPeak: Math.max(...peaks) } : {}),
      ...(cpu.length ? { cpuMsPerRequest: median(cpu) } : {}),
      ...(dbCpu.length ? { databaseCpuMsPerRequest: median(dbCpu) } : {}),
      ...(ms.some((m) => m.paymentSimulator)
        ? {
            paymentSimulator: { ...(simCpu.length ? { cpuMsPerRequest: median(simCpu) } : {}), ...(simPeaks.length ? { rssPeak: Math.max(...simPeaks) } : {}) },
          }
        : {}),
      ...(ms.some((m) => m.outbox)
        ? {
            outbox: {
              sustainedRps: median(ms.flatMap((m) => (m.outbox ? [m.outbox.sustainedRps] : []))),
              backlogAtEnd: median(ms.flatMap((m) => (m.outbox ? [m.outbox.backlogAtEnd] : []))),
              drainSeconds: median(ms.flatMap((m) => (m.outbox ? [m.outbox.drainSeconds] : []))),
              left: ms.reduce((a, m) => a + (m.outbox?.left ?? 0), 0),
            },
          }
        : {}),
      non2xx: ms.reduce((a, m) => a + m.load.non2xx, 0),
      errors: ms.reduce((a, m) => a + m.load.errors + m.load.timeouts, 0),
      ...(ms.some((m) => m.gapFree)
        ? {
            gapFree: ms.reduce(
              (a, m) => ({
                clients: a.clients + (m.gapFree?.clients ?? 0),
                violations: a.violations + (m.gapFree?.violations ?? 0),
                received: a.received + (m.gapFree?.received ?? 0),
              }),
              {
                clients: 0,
                violations: 0,
                received: 0,
              },
            ),
          }
        : {}),
    };
  });
}
