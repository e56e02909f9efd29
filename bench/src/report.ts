/**
 * The BENCHMARKS.md text of a run's results (results.ts) and its targets (targets.ts).
 */
import { median, type BenchResults } from './results';
import type { InstanceName, Scenario } from './scenarios';
import { fmt } from './targets';

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

/** The championship evening's figures per server and round (bench/src/championship.ts). */
function championshipLines(r: BenchResults): string[] {
  const ms = r.measurements.filter((m) => m.championship);
  if (ms.length === 0) return [];
  const L = [
    '',
    `Through nginx (infra/nginx/timing-cache.conf), per server and round; ${ms[0].championship!.spectators.toLocaleString('en')} spectators, ${ms[0].championship!.modems} modems.`,
    '',
  ];
  L.push(
    '| Server | round | polls served (MeOS / live / ROC) | origin requests | of them polls (per poll served) | streams, deliveries | punches uploaded | upload → spectator p50 / p99 ms | upload → visible p50 / p99 ms (mass start) | upload → stream p50 / p99 ms | gap-free violations | incomplete | CPU s: server / PostgreSQL | RSS peak |',
  );
  L.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const m of ms) {
    const c = m.championship!;
    const served = c.polls.meos + c.polls.live + c.polls.roc;
    const cpu = (s: number | undefined) => (s === undefined ? '–' : fmt(s, 1));
    L.push(
      `| ${INSTANCE_LABEL[m.instance]}${c.notes.length ? ` (${c.notes.join('; ')})` : ''} | ${m.round} | ${served.toLocaleString('en')} (${c.polls.meos} / ${c.polls.live} / ${c.polls.roc})${c.pollErrors ? `, ${c.pollErrors} errors` : ''} | ${c.originRequests.toLocaleString('en')} (${served ? fmt((100 * c.originRequests) / (served + c.uploaded), 0) : '–'} %) | ${c.originPolls === undefined ? '–' : `${c.originPolls.toLocaleString('en')} (${served ? fmt((100 * c.originPolls) / served, 1) : '–'} %)`} | ${c.streams ? `${c.streams}, ${c.streamDeliveries.toLocaleString('en')}` : '–'} | ${c.uploaded}${c.uploadErrors ? ` (${c.uploadErrors} failed)` : ''} | ${fmt(c.delivery.p50, 0)} / ${fmt(c.delivery.p99, 0)} | ${c.visible ? `${fmt(c.visible.p50, 0)} / ${fmt(c.visible.p99, 0)}${c.visibleBurst ? ` (${fmt(c.visibleBurst.p50, 0)} / ${fmt(c.visibleBurst.p99, 0)})` : ''}` : '–'} | ${c.streams ? `${fmt(c.streamDelivery.p50, 0)} / ${fmt(c.streamDelivery.p99, 0)}` : '–'} | ${c.gapFreeViolations === 0 ? '0' : `**${c.gapFreeViolations}**`} | ${c.incomplete === 0 ? '0' : `**${c.incomplete}**`} | ${cpu(m.cpuSeconds)} / ${cpu(m.databaseCpuSeconds)} | ${typeof m.rssPeak === 'number' ? `${(m.rssPeak / 1048576).toFixed(0)} MiB` : '–'} |`,
    );
  }
  L.push('');
  for (const m of ms) {
    const statuses = Object.entries(m.championship!.cacheStatuses ?? {}).map(([k, v]) => `${k} ${v.toLocaleString('en')}`);
    const { loadProcessDelay: d, modemThreadDelay: md, upload: u, uploadBurst: ub } = m.championship!;
    const delay = (x: { p50: number; p99: number; max: number }) => `${fmt(x.p50, 0)} / ${fmt(x.p99, 0)} / ${fmt(x.max, 0)} ms`;
    L.push(
      `- nginx cache status, ${INSTANCE_LABEL[m.instance]}, round ${m.round}: ${statuses.join(', ') || '–'}${u ? `; upload round trip p50 / p99 ${fmt(u.p50, 0)} / ${fmt(u.p99, 0)} ms${ub ? ` (mass start ${fmt(ub.p50, 0)} / ${fmt(ub.p99, 0)} ms)` : ''}` : ''}${d ? `; event-loop delay p50 / p99 / max of the spectators' thread ${delay(d)}` : ''}${md ? `, of the modems' and probes' thread ${delay(md)}` : ''}`,
    );
  }
  L.push('');
  L.push(
    'Origin requests: lines of the access log of nginx with an upstream status (background cache updates included), as a share of polls + uploads; of them polls: the GET and HEAD requests but streams, as a share of the polls served (the uploads of PostgREST go to the raw server, not through nginx). Upload → spectator: from sending a punch to its arrival at each spectator (polls wait for their interval and, through the cache, up to its `max-age` and a background update); upload → visible: the same at one freshness probe per spectator request polling every 100 ms, i.e. how late a punch can be seen through the cache (each spectator adds its own interval), the punches of the mass start in parentheses; upload → stream: the same on the SSE streams. Gap-free: every client (spectator or stream) received each punch of the event after its start exactly once, ascending (checked against the database); incomplete: clients without the newest punch when the catch-up time after the modems stopped ran out. Both must be 0.',
  );
  return L;
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
      for (const x of rows.filter((row) => row.outbox)) {
        const o = x.outbox!;
        sidecars.push(
          `- Outbox: ${Math.round(o.backlogAtEnd).toLocaleString('en')} jobs were not yet done when the load ended (median), all done ${fmt(o.drainSeconds, 1)} s later${o.left ? `, **${o.left} left undone**` : ''}; sustained rate with every order's e-mails written: **${Math.round(o.sustainedRps)} orders/s** (answers ÷ (load + drain time)). The CPU figures include the drain.`,
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
    if (sc.championship) L.push(...championshipLines(r));
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
  L.push('  Each order run ends once the outbox is empty again (both e-mails of every order written by the file mailer');
  L.push('  of `pnpm start`); its CPU figures include that drain, and the target is judged on the sustained rate.');
  L.push("- CPU ms/req: the server process's and the benchmark databases' PostgreSQL backends' CPU time (`/proc`) during");
  L.push('  the measurement, divided by its requests (PostgreSQL also counts background work such as outbox dispatch).');
  L.push('- Before each measurement the harness waits until no statement of the previous load is still running on the');
  L.push('  databases (PostgREST and the raw server keep executing their multi-second counts after a load ends).');
  L.push('- The load generator, the servers and PostgreSQL share the same cores, so absolute rates are lower than on');
  L.push('  separate machines.');
  L.push('');
  return L.join('\n');
}
