/**
 * Results of a run, their per-scenario summaries (medians over rounds), the performance targets evaluated
 * on them, and the BENCHMARKS.md text.
 */
import type { MailThroughput } from './mail';
import type { RunMode } from './servers';
import type { DatasetInfo } from './dataset';
import type { LoadResult } from './load-worker';
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
function median(values: number[]): number {
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

function find(summaries: Summary[], scenario: string, instance: InstanceName): Summary | undefined {
  return summaries.find((s) => s.scenario === scenario && s.instance === instance);
}

/** " (N non-2xx)" when a run had failed responses (their requests do not count in req/s). */
function failed(...xs: Summary[]): string {
  const n = xs.reduce((a, x) => a + x.non2xx + x.errors, 0);
  return n ? `; ${n} non-2xx/errors` : '';
}

const fmt = (v: number, digits = 2) => (Number.isFinite(v) ? v.toFixed(digits) : '–');

function ratioTarget(
  summaries: Summary[],
  label: string,
  scenario: string,
  alt: InstanceName,
  min: number,
  ours: InstanceName = 'ours',
  altScenario = scenario,
): TargetResult {
  const o = find(summaries, scenario, ours);
  const a = find(summaries, altScenario, alt);
  if (!o || !a) return { target: label, measured: '–', status: 'not measured' };
  const r = o.rps / a.rps;
  return { target: label, measured: `${fmt(r)}× (${fmt(o.rps, 1)} vs ${fmt(a.rps, 1)} req/s${failed(o, a)})`, status: r >= min ? 'met' : 'not met' };
}

function p99Target(summaries: Summary[], scenarios: Scenario[], scenario: string): TargetResult {
  const label = `${scenario}: p99 at ${scenarios.find((s) => s.id === scenario)?.overallRate ?? '?'} req/s ≤ 2× the raw server's p99`;
  const o = find(summaries, scenario, 'ours');
  const r = find(summaries, scenario, 'raw');
  const rate = scenarios.find((s) => s.id === scenario)?.overallRate;
  if (!o || !r || !rate) return { target: label, measured: '–', status: 'not measured' };
  const kept = o.rps >= rate * 0.95;
  const ok = kept && o.p99 <= 2 * r.p99;
  return {
    target: label,
    measured: `${fmt(o.p99, 1)} ms vs ${fmt(r.p99, 1)} ms (${fmt(o.p99 / r.p99)}×); ours served ${fmt(o.rps, 1)} req/s, raw ${fmt(r.rps, 1)}${failed(o, r)}`,
    status: ok ? 'met' : 'not met',
    ...(kept ? {} : { note: 'ours did not sustain the fixed rate' }),
  };
}

/** Evaluates the performance targets on the summaries (only those whose scenarios ran). */
export function evaluateTargets(summaries: Summary[], scenarios: Scenario[], unavailable: Unavailable[]): TargetResult[] {
  const t: TargetResult[] = [];
  t.push(ratioTarget(summaries, 'Full page JSON ≥ 1.1× PostgREST', 'page-json', 'postgrest', 1.1));
  t.push(ratioTarget(summaries, 'Full page JSON ≥ 0.8× raw', 'page-json', 'raw', 0.8));
  t.push(ratioTarget(summaries, 'Full page CSV ≥ 1.1× PostgREST', 'page-csv', 'postgrest', 1.1));
  t.push(ratioTarget(summaries, 'Full page CSV ≥ 0.8× raw', 'page-csv', 'raw', 0.8));
  for (const sc of ['popular-json', 'popular-csv']) {
    const o = find(summaries, sc, 'ours-shared');
    for (const [alt, min] of [
      ['postgrest', 5],
      ['raw', 2],
    ] as const) {
      const a = find(summaries, sc, alt);
      const label = `${sc}: polls/s ≥ ${min}× ${alt === 'raw' ? 'raw' : 'PostgREST'} with a p99 no higher`;
      if (!o || !a) t.push({ target: label, measured: '–', status: 'not measured' });
      else {
        const r = o.rps / a.rps;
        t.push({
          target: label,
          measured: `${fmt(r)}× (${fmt(o.rps, 0)} vs ${fmt(a.rps, 0)} polls/s; p99 ${fmt(o.p99, 0)} vs ${fmt(a.p99, 0)} ms${failed(o, a)})`,
          status: r >= min && o.p99 <= a.p99 ? 'met' : 'not met',
        });
      }
    }
    const p = find(summaries, sc, 'postgrest');
    const label = `${sc}: PostgreSQL CPU per poll ≥ 10× below PostgREST's`;
    if (!o || !p || o.databaseCpuMsPerRequest === undefined || p.databaseCpuMsPerRequest === undefined)
      t.push({ target: label, measured: '–', status: 'not measured' });
    else {
      const r = p.databaseCpuMsPerRequest / o.databaseCpuMsPerRequest;
      t.push({
        target: label,
        measured: `${fmt(r, 1)}× (${fmt(o.databaseCpuMsPerRequest, 3)} vs ${fmt(p.databaseCpuMsPerRequest, 3)} ms)`,
        status: r >= 10 ? 'met' : 'not met',
      });
    }
    const checked = summaries.filter((s) => s.scenario === sc && s.gapFree);
    if (checked.length) {
      const v = checked.reduce((a, s) => a + (s.gapFree?.violations ?? 0), 0);
      const n = checked.reduce((a, s) => a + (s.gapFree?.clients ?? 0), 0);
      t.push({
        target: `${sc}: every live client received every punch once, in order (all servers)`,
        measured: `${v} violations in ${n} client runs`,
        status: v === 0 ? 'met' : 'not met',
      });
    }
  }
  {
    const sse = find(summaries, 'popular-sse', 'ours-shared');
    if (sse?.gapFree) {
      t.push({
        target: 'popular-sse: every open live page received every punch once, in order',
        measured: `${sse.gapFree.violations} violations in ${sse.gapFree.clients} streams; ${fmt(sse.rps, 0)} punches delivered/s, commit → arrival p50 ${fmt(sse.p50, 0)} ms, p99 ${fmt(sse.p99, 0)} ms`,
        status: sse.gapFree.violations === 0 ? 'met' : 'not met',
      });
    }
  }
  t.push(ratioTarget(summaries, 'Small poll (tail) ≥ 2× PostgREST', 'tail-poll', 'postgrest', 2));
  t.push(ratioTarget(summaries, 'Small poll (tail) ≥ 0.6× raw', 'tail-poll', 'raw', 0.6));
  {
    const x = ratioTarget(
      summaries,
      'X-Total-Count on the 1 M event: poll with it ≥ 0.7× the same poll without it',
      'count-1m',
      'raw',
      0.7,
      'ours',
      'page-first',
    );
    x.note = 'ours always sends the count, so "without" is the raw server\'s same first page without a count';
    t.push(x);
  }
  for (const sc of ['flat-page', 'flat-count']) {
    const big = find(summaries, sc, 'ours');
    const small = find(summaries, sc, 'ours-1m');
    const label = `${sc}: flat from 1 M to 5 M punches (rps at 5 M ≥ 0.85× rps at 1 M)`;
    if (!big || !small) t.push({ target: label, measured: '–', status: 'not measured' });
    else {
      const r = big.rps / small.rps;
      t.push({
        target: label,
        measured: `${fmt(r)}× (${fmt(big.rps, 1)} at 5 M vs ${fmt(small.rps, 1)} req/s at 1 M${failed(big, small)})`,
        status: r >= 0.85 ? 'met' : 'not met',
      });
    }
  }
  t.push(p99Target(summaries, scenarios, 'p99-poll'));
  t.push(p99Target(summaries, scenarios, 'p99-page'));
  {
    const o = find(summaries, 'upload-single', 'ours');
    const r = find(summaries, 'upload-single', 'raw');
    const label = 'Single-punch POST ≥ 0.7× the raw insert rate';
    t.push(
      o && r && o.punchesPerSecond !== undefined && r.punchesPerSecond !== undefined
        ? {
            target: label,
            measured: `${fmt(o.punchesPerSecond / r.punchesPerSecond)}× (${Math.round(o.punchesPerSecond)} vs ${Math.round(r.punchesPerSecond)} punches/s)`,
            status: o.punchesPerSecond / r.punchesPerSecond >= 0.7 ? 'met' : 'not met',
          }
        : { target: label, measured: '–', status: 'not measured' },
    );
  }
  for (const sc of ['upload-batch', 'upload-gzip']) {
    const o = find(summaries, sc, 'ours');
    const label = `${sc}: batched uploads ≥ 100,000 punches/s (gap-free insert)`;
    t.push(
      o && o.punchesPerSecond !== undefined
        ? {
            target: label,
            measured: `${Math.round(o.punchesPerSecond).toLocaleString('en')} punches/s`,
            status: o.punchesPerSecond >= 100_000 ? 'met' : 'not met',
          }
        : { target: label, measured: '–', status: 'not measured' },
    );
  }
  {
    const a = find(summaries, 'shop-articles', 'ordering');
    const label = 'Shop article list p99 < 10 ms at 500 req/s';
    const why = unavailable.find((u) => u.scenario === 'shop-articles');
    t.push(
      a
        ? { target: label, measured: `p99 ${fmt(a.p99, 1)} ms at ${Math.round(a.rps)} req/s`, status: a.p99 < 10 && a.rps >= 475 ? 'met' : 'not met' }
        : { target: label, measured: '–', status: 'not measured', ...(why ? { note: why.reason } : {}) },
    );
  }
  {
    const o = find(summaries, 'shop-orders', 'ordering');
    const label = 'Shop: ≥ 300 orders/s sustained with the outbox';
    const why = unavailable.find((u) => u.scenario === 'shop-orders');
    t.push(
      o
        ? { target: label, measured: `${Math.round(o.rps)} orders/s`, status: o.rps >= 300 ? 'met' : 'not met' }
        : { target: label, measured: '–', status: 'not measured', ...(why ? { note: why.reason } : {}) },
    );
  }
  {
    const peaks = summaries.filter(
      (s) => s.instance === 'ours' && ['page-json', 'page-csv', 'page-gzip', 'p99-page'].includes(s.scenario) && typeof s.rssPeak === 'number',
    );
    const label = 'Memory: timing service under the full-page load < 256 MiB RSS';
    if (!peaks.length) t.push({ target: label, measured: '–', status: 'not measured' });
    else {
      const peak = Math.max(...peaks.map((p) => p.rssPeak as number));
      t.push({ target: label, measured: `peak ${fmt(peak / 1048576, 0)} MiB`, status: peak < 256 * 1048576 ? 'met' : 'not met' });
    }
  }
  return t;
}

const INSTANCE_LABEL: Record<InstanceName, string> = {
  ours: 'ours (timing service)',
  'ours-shared': 'ours, as deployed (shared answers)',
  postgrest: 'PostgREST',
  raw: 'raw node:http + pg',
  'ours-1m': 'ours, 1 M-punch table',
  ordering: 'ordering service',
};

function la(v: number[]): string {
  return v.map((x) => x.toFixed(2)).join(' / ');
}

function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '–';
  return n >= 10_240 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`;
}

/** The BENCHMARKS.md text. */
export function renderMarkdown(r: BenchResults, scenarios: Scenario[]): string {
  const L: string[] = [];
  const loaded = Math.max(...r.machine.loadAvgBefore.slice(0, 1), ...r.machine.loadAvgAfter.slice(0, 1)) > r.machine.cores * 0.5;
  L.push('# Benchmarks');
  L.push('');
  L.push('Written by `pnpm bench` (bench/src/run.ts). Our timing service, PostgREST and a raw `node:http` + `pg`');
  L.push('server run side by side on one generated dataset in one PostgreSQL; load comes from a separate process');
  L.push("(autocannon as fast as possible; fixed-rate scenarios open-loop, latency from each request's due time, see");
  L.push('bench/README.md); servers are measured in interleaved rounds (the order rotates each round) and every number');
  L.push('is the median over rounds. Ratios compare servers within this run only.');
  L.push('');
  L.push(
    loaded
      ? `> **Provisional**: measured while the machine was loaded by other work (load average ${la(r.machine.loadAvgBefore)} before, ${la(r.machine.loadAvgAfter)} after, on ${r.machine.cores} cores). Absolute numbers are low and noisy; the ratios are the meaningful part, and even they shift with the load.`
      : `> Load average ${la(r.machine.loadAvgBefore)} before and ${la(r.machine.loadAvgAfter)} after the run (${r.machine.cores} cores).`,
  );
  L.push('');
  L.push('Reproduce: `pnpm bench` (default scale 1: 5 M punches; the dataset is generated once and reused), or');
  L.push('`pnpm bench --scale 0.01 --duration 5 --rounds 1` for a quick look; `--only page-json,tail-poll` or a group');
  L.push('(`read`, `fixed-rate`, `flat`, `upload`, `shop`) to run a subset. Raw results: `bench/results/latest.json`.');
  L.push('');
  L.push('## Machine and versions');
  L.push('');
  L.push(`- CPU: ${r.machine.cpuModel}, ${r.machine.cores} cores; memory ${(r.machine.memoryBytes / 2 ** 30).toFixed(1)} GiB; ${r.machine.platform}`);
  L.push(`- Load average (1/5/15 min): before ${la(r.machine.loadAvgBefore)}, after ${la(r.machine.loadAvgAfter)}`);
  L.push(`- Node ${r.versions.node}; ${r.versions.postgres}; ${r.versions.postgrest}; autocannon ${r.versions.autocannon}; commit ${r.versions.commit}`);
  L.push(
    `- Run: ${r.startedAt} – ${r.finishedAt}; scale ${r.options.scale}, ${r.options.rounds} round(s) of ${r.options.durationSeconds} s per server and scenario, ${r.options.warmupSeconds} s warm-up each`,
  );
  L.push(
    r.options.runMode === 'tsx'
      ? '- Node servers ran from TypeScript under `node --import tsx` (`--tsx`)'
      : '- Node servers ran compiled: `pnpm build` output under `node --conditions=dist` (timing and ordering services), the raw server bundled by esbuild; no tsx at run time',
  );
  L.push('');
  L.push('## Dataset');
  L.push('');
  const d = r.datasets.main;
  L.push(
    `${d.totalPunches.toLocaleString('en')} punches (table with indexes ${(d.punchTableBytes / 2 ** 20).toFixed(0)} MiB), ${d.events} public events, ${d.modems} modems, generated by PostgreSQL from the shapes of the real VeNotte 2020 event (7-digit cards, Start + ~15 controls + Finish per runner over an evening, reception 1–5 s after the punch). ` +
      `Big event: ${d.bigEventPunches.toLocaleString('en')} punches on ${d.bigEventModems.length} modems, on the same evening as 20 other events (ids interleave). Small event: ${d.smallEventPunches} punches on ${d.smallEventModems.length} modems. ` +
      `Full pages start at the big event's middle id (${d.bigEventMidId}); the tail poll starts ${d.bigEventNewestId - d.tailAfterId > 0 ? '5 punches' : '0 punches'} below its newest id. ${d.reused ? 'Reused from an earlier run.' : `Generated in ${d.generatedSeconds.toFixed(0)} s.`}`,
  );
  if (r.datasets.flat) {
    const f = r.datasets.flat;
    L.push('');
    L.push(
      `Flatness baseline: a second database holding only the big event (${f.totalPunches.toLocaleString('en')} punches, ${(f.punchTableBytes / 2 ** 20).toFixed(0)} MiB).`,
    );
  }
  L.push('');
  L.push('All three punch servers expose the same rows: PostgREST reads the view `bench_api.punches` (the API columns,');
  L.push("`receptionTimeUtc` as a quoted alias) with the timing service's visibility condition");
  L.push("`txid < pg_snapshot_xmin(pg_current_snapshot())`; the raw server runs the timing service's own page statements");
  L.push('(imported from punches.repository.ts). Each answered every read scenario once before the load with the same');
  L.push('punch ids in the same order (column "same ids"). Pools: 10 connections for each server.');
  L.push('');
  L.push('## Performance targets');
  L.push('');
  L.push('| Target | Measured | Status |');
  L.push('|---|---|---|');
  for (const t of r.targets)
    L.push(
      `| ${t.target} | ${t.measured}${t.note ? ` — ${t.note}` : ''} | ${t.status === 'met' ? 'met' : t.status === 'not met' ? '**not met**' : 'not measured'} |`,
    );
  L.push('');
  L.push('## Scenarios');
  for (const sc of scenarios) {
    L.push('');
    L.push(`### ${sc.title} (\`${sc.id}\`)`);
    L.push('');
    L.push(
      `${sc.description[0].toUpperCase()}${sc.description.slice(1)}; ${sc.overallRate ? `fixed total rate ${sc.overallRate} req/s` : 'as fast as possible'}, ${sc.connections} connections.`,
    );
    const gone = r.unavailable.filter((u) => u.scenario === sc.id);
    const rows = r.summaries.filter((s) => s.scenario === sc.id);
    if (rows.length) {
      const ref = rows.find((x) => x.instance === 'ours') ?? rows.find((x) => x.instance === 'ours-shared');
      const isUpload = !!sc.upload;
      L.push('');
      L.push(
        `| Server | req/s | p50 ms | p99 ms | ${isUpload ? 'punches/s' : 'bytes/response'} | non-2xx | same ids | ours ÷ this | CPU ms/req: server / PostgreSQL |`,
      );
      L.push('|---|---:|---:|---:|---:|---:|---|---:|---:|');
      const sidecars: string[] = [];
      for (const x of rows) {
        const check = r.checks.find((c) => c.scenario === sc.id && c.instance === x.instance);
        const same = check?.sameIds === undefined ? (isUpload ? 'n/a' : '–') : check.sameIds ? `yes (${check.idCount})` : '**NO**';
        const ratio =
          ref && x !== ref ? (isUpload && ref.punchesPerSecond && x.punchesPerSecond ? ref.punchesPerSecond / x.punchesPerSecond : ref.rps / x.rps) : NaN;
        const rss = typeof x.rssPeak === 'number' ? ` (RSS peak ${(x.rssPeak / 1048576).toFixed(0)} MiB)` : '';
        if (x.paymentSimulator) {
          const sim = x.paymentSimulator;
          sidecars.push(
            `- Payment simulator (the ordering service's provider, standing for an external one; not in the service's numbers): ${sim.cpuMsPerRequest !== undefined ? `${fmt(sim.cpuMsPerRequest)} ms CPU per order` : 'CPU not measured'}${sim.rssPeak !== undefined ? `, RSS peak ${(sim.rssPeak / 1048576).toFixed(0)} MiB` : ''}.`,
          );
        }
        L.push(
          `| ${INSTANCE_LABEL[x.instance]}${rss} | ${x.rps < 10 ? fmt(x.rps, 1) : Math.round(x.rps)} | ${fmt(x.p50, 1)} | ${fmt(x.p99, 1)} | ${isUpload ? Math.round(x.punchesPerSecond ?? 0).toLocaleString('en') : bytes(x.bytesPerResponse)} | ${x.non2xx} | ${same} | ${Number.isFinite(ratio) ? `${fmt(ratio)}×` : ''} | ${x.cpuMsPerRequest !== undefined ? fmt(x.cpuMsPerRequest) : '–'} / ${x.databaseCpuMsPerRequest !== undefined ? fmt(x.databaseCpuMsPerRequest) : '–'} |`,
        );
      }
      if (sidecars.length) L.push('', ...sidecars);
      const live = rows.filter((x) => x.gapFree);
      if (live.length) {
        L.push('');
        L.push(
          `Gap-free check (each client's punches against the database after each run, all rounds): ${live.map((x) => `${INSTANCE_LABEL[x.instance]} ${x.gapFree!.violations} violations in ${x.gapFree!.clients} clients, ${x.gapFree!.received.toLocaleString('en')} punches received`).join('; ')}.`,
        );
      }
    }
    for (const g of gone) {
      L.push('');
      L.push(`- ${INSTANCE_LABEL[g.instance]}: **not measured** — ${g.reason}`);
    }
  }
  if (r.mail) {
    const pooled = median(r.mail.pooled);
    const single = median(r.mail.perMessage);
    L.push('');
    L.push('## Mail dispatch');
    L.push('');
    L.push(`The ordering service's SMTP mailer against a real SMTP server on loopback (\`smtp-server\`, accepting every message),`);
    L.push(`${r.mail.messagesPerRound} confirmation-sized messages per round, ${r.mail.concurrency} at a time (the mail lane's slots), interleaved rounds;`);
    L.push('median over rounds (bench/src/mail.ts).');
    L.push('');
    L.push('| transport | messages/s | per round |');
    L.push('|---|---:|---|');
    L.push(`| pooled (production: ${r.mail.concurrency} connections reused) | ${pooled.toFixed(0)} | ${r.mail.pooled.map((x) => x.toFixed(0)).join(', ')} |`);
    L.push(`| one connection per message | ${single.toFixed(0)} | ${r.mail.perMessage.map((x) => x.toFixed(0)).join(', ')} |`);
    L.push('');
    L.push(`Pooled / one per message: ${(pooled / single).toFixed(2)}×. Messages received: ${r.mail.received} (each sent once).`);
  }
  L.push('');
  L.push('## Notes');
  L.push('');
  L.push('- What the numbers mean for the timing service, what changed for them and what is still open:');
  L.push('  [bench/README.md](bench/README.md#findings).');
  L.push('- Our service is asked like result software asks it (`eventId`, `modem=a,b`); PostgREST and the raw server get');
  L.push("  the event's modem list. Our numbers therefore include the event lookup (cached per instance) and the access check.");
  L.push('- Ours always sends `X-Total-Count`, computed in the page statement: the page size when the page is not full,');
  L.push("  otherwise exact from per-modem bucket counters (timing migrations 0002/0003) plus the rest of afterId's");
  L.push('  1,024-id bucket (from the page itself when it reaches past it); PostgREST (`Prefer: count=exact`) and the raw');
  L.push('  server (`count(*)`) count every row.');
  L.push('- Ours and the raw server run the same page statements (prepared, one generic plan each): a primary-key walk at');
  L.push('  the live head or where the counters show the modems dense, else one (modem, id) index walk per modem. For JSON');
  L.push("  the raw server sends PostgreSQL's `row_to_json` text; ours slices PostgreSQL's CSV text into the same JSON");
  L.push('  (timing `punches/page-json.ts`, byte-identical). Ours serves plain reads and uploads before Express (fast lane).');
  L.push('- PostgREST compresses nothing itself (it is usually put behind a proxy), so in page-gzip it sends plain JSON.');
  L.push('- Uploads: the raw server runs one plain `INSERT … ON CONFLICT DO NOTHING` after a key lookup in the same');
  L.push('  statement (no gap-free section, no modem ownership; the counter triggers fire for both); ours runs the full');
  L.push('  path in one call (`upload_punch_batch_by_key`: key lookup, ownership check, gap-free id allocation, insert;');
  L.push('  then a coalesced NOTIFY). Every uploaded punch is unique; they are deleted after each round.');
  L.push('- Shop: the ordering service runs with its demo catalogue and `RATE_LIMIT_ORDERS_PER_MINUTE=0` (the per-caller');
  L.push('  order limit would cap one load generator at 20 orders/s; the hourly limits of anonymous orders per caller and per');
  L.push('  recipient address are off as well); each order is one BSF8 station with its own');
  L.push('  `Idempotency-Key`, so every request creates an order and its confirmation e-mail in the outbox. As under');
  L.push('  `pnpm start`, the payment simulator (`packages/payment-simulator`) is its provider: every order gets its');
  L.push("  paylink (created in the request) and a payment-link e-mail. The simulator's CPU and memory are given apart.");
  L.push("- CPU ms/req: the server process's and the benchmark databases' PostgreSQL backends' CPU time (`/proc`) during");
  L.push('  the measurement, divided by its requests (PostgreSQL also counts background work such as outbox dispatch).');
  L.push('- Before each measurement the harness waits until no statement of the previous load is still running on the');
  L.push('  databases (PostgREST and the raw server keep executing their multi-second counts after a load ends).');
  L.push('- The load generator, the servers and PostgreSQL share the same cores, so absolute rates are lower than on');
  L.push('  separate machines.');
  L.push('');
  return L.join('\n');
}
