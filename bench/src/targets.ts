/**
 * The performance targets that BENCHMARKS.md reports: each evaluated on a run's summaries as met, not met or
 * not measured, with the figures it was decided on.
 */
import type { Summary, TargetResult, Unavailable } from './results';
import type { InstanceName, Scenario } from './scenarios';

/** The summary of `scenario` on `instance`, if it ran. */
function find(summaries: Summary[], scenario: string, instance: InstanceName): Summary | undefined {
  return summaries.find((s) => s.scenario === scenario && s.instance === instance);
}

/** " (N non-2xx)" when a run had failed responses (their requests do not count in req/s). */
function failed(...xs: Summary[]): string {
  const n = xs.reduce((a, x) => a + x.non2xx + x.errors, 0);
  return n ? `; ${n} non-2xx/errors` : '';
}

/** A number with `digits` decimals, "–" when it is not finite. */
export const fmt = (v: number, digits = 2) => (Number.isFinite(v) ? v.toFixed(digits) : '–');

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
    const label = 'Single-punch POST ≥ 0.8× the raw insert rate';
    t.push(
      o && r && o.punchesPerSecond !== undefined && r.punchesPerSecond !== undefined
        ? {
            target: label,
            measured: `${fmt(o.punchesPerSecond / r.punchesPerSecond)}× (${Math.round(o.punchesPerSecond)} vs ${Math.round(r.punchesPerSecond)} punches/s)`,
            status: o.punchesPerSecond / r.punchesPerSecond >= 0.8 ? 'met' : 'not met',
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
        ? o.outbox
          ? {
              target: label,
              measured: `${Math.round(o.outbox.sustainedRps)} orders/s with their e-mails sent (${Math.round(o.rps)}/s answered)`,
              status: o.outbox.sustainedRps >= 300 && o.outbox.left === 0 ? 'met' : 'not met',
            }
          : { target: label, measured: `${Math.round(o.rps)} orders/s`, status: o.rps >= 300 ? 'met' : 'not met' }
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
