/**
 * `pnpm bench [--scale 1] [--duration 8] [--rounds 3] [--warmup 2] [--only id|group,…] [--database-url URL]
 *  [--report BENCHMARKS.md] [--results-dir bench/results]` — the benchmark harness.
 * `pnpm bench --render bench/results/latest.json` re-renders the report from a results file.
 *
 * 1. Dataset (dataset.ts) in `BENCH_DATABASE_URL` (default postgres://postgres@127.0.0.1:5432/bench), reused
 *    when the scale matches; for the flatness scenarios a second database `<name>_flat` with the big event only.
 * 2. Servers as separate processes (servers.ts): ours, PostgREST, raw; ours on the flat database; the
 *    ordering service for the shop, with the payment simulator as its provider (as `pnpm start` runs it). The Node servers run compiled under `node` (`pnpm build`), or from
 *    the sources under tsx with `--tsx`.
 * 3. A check per read scenario and server (one request: status, bytes, punch ids, total); all servers of a
 *    scenario must return the same ids in the same order.
 * 4. Warm-up, then interleaved rounds (the server order rotates each round) driven by one load
 *    process (load-worker.ts); before each measurement the databases must be quiet (no statement left
 *    running from the previous load); uploads last in a round, their punches deleted after it.
 * 5. Medians, targets, BENCHMARKS.md and a JSON results file.
 * Exit code 1 when a check failed (different punches) or a punch server could not be started.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { championshipLog, championshipPlan, prepareChampionship, removeChampionship, runChampionship } from './championship';
import { checkRead, checkUpload, probeShop, requestAt, sameArray, uploadUsers } from './checks';
import { backendCpu, backendCpuBetween, checkFollowed, drainOutbox, firstUserId, removeWritten, resetShopSchema, settle } from './database-probes';
import { cleanUploads, connect, countUploads, ensureDataset, type DatasetInfo } from './dataset';
import { LoadGenerator } from './load-generator';
import type { LoadSpec } from './load-spec';
import { measureMail } from './mail';
import { parseArgs, type BenchOptions } from './options';
import { renderMarkdown } from './report';
import { summarize, type BenchResults, type Check, type Measurement, type Unavailable, type Versions } from './results';
import { evaluateTargets } from './targets';
import { selectScenarios, type InstanceName, type Scenario } from './scenarios';
import { cpuSeconds, postgrestVersion, prepareRunMode, ROOT, sampleRss, startOurs, startPostgrest, startRaw, startShop, type RunningServer } from './servers';

/** The checked-out commit (short), marked when the working tree has uncommitted changes. */
function commitId(): string {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).trim().length > 0;
    return dirty ? `${sha} (working tree with uncommitted changes)` : sha;
  } catch {
    return 'unknown';
  }
}

/** Versions of what was measured, for the report. */
async function versions(databaseUrl: string, withPostgrest: boolean): Promise<Versions> {
  const client = await connect(databaseUrl);
  const { rows } = await client.query<{ v: string; sb: string }>("select version() as v, current_setting('shared_buffers') as sb");
  await client.end();
  const autocannonPkg = JSON.parse(readFileSync(require.resolve('autocannon/package.json', { paths: [__dirname] }), 'utf8')) as { version: string };
  return {
    node: process.version,
    postgres: `${rows[0].v.split(' on ')[0]}, shared_buffers ${rows[0].sb}`,
    postgrest: withPostgrest ? await postgrestVersion() : 'not used',
    autocannon: autocannonPkg.version,
    commit: commitId(),
  };
}

/** The flat database's URL: the main one's database name with `_flat` appended. */
function flatUrl(url: string): string {
  const u = new URL(url);
  u.pathname = `${u.pathname.replace(/\/$/, '')}_flat`;
  return u.toString();
}

/** Runs the harness; writes the report and results when paths are given. */
export async function runBench(opts: BenchOptions): Promise<BenchResults> {
  const log = opts.log ?? ((msg: string) => process.stdout.write(`[bench] ${msg}\n`));
  // `mail` is not an HTTP scenario: the mail dispatch measurement (src/mail.ts) runs when selected or when nothing is.
  const mailSelected = opts.only.length === 0 || opts.only.includes('mail');
  const httpOnly = opts.only.filter((o) => o !== 'mail');
  const scenarios = httpOnly.length === 0 && opts.only.length > 0 ? [] : selectScenarios(httpOnly);
  const startedAt = new Date().toISOString();
  const loadAvgBefore = os.loadavg();
  log(`load average before: ${loadAvgBefore.map((x) => x.toFixed(2)).join(' ')}`);

  const main = await ensureDataset({ url: opts.databaseUrl, scale: opts.scale, log });
  const needs = (i: InstanceName) => scenarios.some((s) => s.instances.includes(i));
  const flat = needs('ours-1m') ? await ensureDataset({ url: flatUrl(opts.databaseUrl), scale: opts.scale, variant: 'bigOnly', log }) : undefined;
  if (scenarios.some((s) => s.upload)) await cleanUploads(main.url);
  // Before the servers start, so that none has the championship event cached as unknown.
  const championship = scenarios.some((s) => s.championship) ? await prepareChampionship(main.url, championshipPlan(opts.scale)) : undefined;

  const servers = new Map<InstanceName, RunningServer>();
  // The ordering service's payment provider (started with it, stopped after everything else).
  let paymentSimulator: RunningServer | undefined;
  const unavailable: Unavailable[] = [];
  const fatal: string[] = [];
  const start = async (name: InstanceName, fn: () => Promise<RunningServer>) => {
    if (!needs(name)) return;
    log(`starting ${name}`);
    try {
      servers.set(name, await fn());
    } catch (err) {
      const reason = `could not start: ${(err as Error).message}`;
      for (const s of scenarios.filter((x) => x.instances.includes(name))) unavailable.push({ scenario: s.id, instance: name, reason });
      if (name !== 'ordering') fatal.push(`${name} ${reason}`);
      log(`${name} ${reason}`);
    }
  };
  const dsOf = (i: InstanceName): DatasetInfo => (i === 'ours-1m' && flat ? flat : main);
  await prepareRunMode(opts.runMode ?? 'compiled', log);
  const loader = new LoadGenerator();
  const checks: Check[] = [];
  const measurements: Measurement[] = [];
  try {
    await start('ours', () => startOurs(main.url));
    await start('ours-shared', () => startOurs(main.url, { shared: true }));
    await start('postgrest', () => startPostgrest(main.url));
    await start('raw', () => startRaw(main.url));
    if (flat) await start('ours-1m', () => startOurs(flat.url));
    const writerUser = await firstUserId(main.url);
    await start('ordering', async () => {
      await resetShopSchema(main.url);
      const shop = await startShop(main.url);
      paymentSimulator = shop.paymentSimulator;
      return shop.ordering;
    });

    // Checks: the same punches from every server before any load.
    const runnable = new Map<string, InstanceName[]>();
    for (const sc of scenarios) {
      const ok: InstanceName[] = [];
      for (const inst of sc.instances) {
        const server = servers.get(inst);
        if (!server || (opts.servers?.length && !opts.servers.includes(inst))) continue;
        if (sc.group === 'shop') {
          const probe = await probeShop(sc, server, main);
          checks.push(probe.check);
          if (probe.unavailable) unavailable.push({ scenario: sc.id, instance: inst, reason: probe.unavailable });
          else ok.push(inst);
          continue;
        }
        if (sc.streams || sc.championship) {
          // A stream never ends: checked by the gap-free check after each run instead.
          ok.push(inst);
          continue;
        }
        const check = sc.upload ? await checkUpload(sc, inst, server, main) : await checkRead(sc, inst, server, dsOf(inst));
        checks.push(check);
        if (check.error) {
          unavailable.push({ scenario: sc.id, instance: inst, reason: `check failed: HTTP ${check.status} ${check.error}` });
          fatal.push(`${sc.id}/${inst}: HTTP ${check.status} ${check.error}`);
        } else ok.push(inst);
      }
      if (!sc.upload && sc.group !== 'shop') {
        const scChecks = checks.filter((c) => c.scenario === sc.id && c.ids);
        const first = scChecks[0];
        for (const c of scChecks) {
          c.sameIds = sc.group === 'flat' ? c.idCount === first.idCount : sameArray(c.ids ?? [], first.ids ?? []);
          if (!c.sameIds)
            fatal.push(
              `${sc.id}: ${c.instance} returned other punches than ${first.instance} (${c.idCount} ids ${c.firstId}…${c.lastId} vs ${first.idCount} ids ${first.firstId}…${first.lastId})`,
            );
        }
      }
      runnable.set(sc.id, ok);
    }
    if (scenarios.some((s) => s.upload)) await cleanUploads(main.url);

    const specFor = (sc: Scenario, inst: InstanceName, seconds: number): LoadSpec => {
      const shape = requestAt(sc, inst, dsOf(inst));
      const template = sc.request(inst, dsOf(inst)).path;
      return {
        ...(sc.follow
          ? {
              ...(sc.streams
                ? { streams: { startAfterId: main.tailAfterId } }
                : { follow: { template, format: sc.format === 'csv' ? 'csv' : 'json', startAfterId: main.tailAfterId } }),
              writer: { databaseUrl: main.url, modems: main.bigEventModems, ratePerSecond: sc.follow.writesPerSecond, maxBatch: 3, userId: writerUser },
            }
          : {}),
        url: `${servers.get(inst)!.baseUrl}${shape.path}`,
        method: shape.method,
        headers: shape.headers,
        connections: sc.connections,
        durationSeconds: seconds,
        ...(sc.overallRate ? { overallRate: sc.overallRate } : {}),
        ...(sc.upload ? { upload: { ...sc.upload, users: uploadUsers() } } : {}),
        ...(shape.body !== undefined && !sc.upload ? { body: shape.body } : {}),
        ...(sc.uniqueHeader ? { uniqueHeader: sc.uniqueHeader } : {}),
      };
    };

    if (opts.warmupSeconds > 0) {
      log(`warm-up: ${opts.warmupSeconds} s per server and scenario`);
      for (const sc of scenarios.filter((s) => !s.championship)) {
        for (const inst of runnable.get(sc.id) ?? []) {
          await loader.run(specFor(sc, inst, opts.warmupSeconds));
          if (sc.follow) await removeWritten(main.url);
          if (sc.drainsOutbox) await drainOutbox(main.url);
        }
      }
      if (scenarios.some((s) => s.upload)) await cleanUploads(main.url);
    }

    const counterUrls = flat ? [main.url, flat.url] : [main.url];
    const counter = scenarios.some((s) => s.upload) ? await connect(main.url) : undefined;
    const cpuProbe = await connect(main.url);
    try {
      for (let round = 1; round <= opts.rounds; round++) {
        log(
          `round ${round}/${opts.rounds} (load average ${os
            .loadavg()
            .map((x) => x.toFixed(2))
            .join(' ')})`,
        );
        for (const sc of scenarios) {
          const list = runnable.get(sc.id) ?? [];
          const shift = (round - 1) % Math.max(1, list.length);
          const order = [...list.slice(shift), ...list.slice(0, shift)];
          for (const inst of order) {
            const server = servers.get(inst)!;
            const rss = inst === 'postgrest' && !sc.championship ? undefined : sampleRss(server.pid);
            const sidecar = inst === 'ordering' && paymentSimulator ? paymentSimulator : undefined;
            const sidecarRss = sidecar ? sampleRss(sidecar.pid) : undefined;
            const before = counter ? await countUploads(counter) : 0;
            const settled = await settle(counterUrls);
            if (settled > 1_000) log(`  (waited ${(settled / 1000).toFixed(1)} s for the database to fall quiet)`);
            const loadAvgBefore = os.loadavg();
            const cpuBefore = {
              server: cpuSeconds(server.pid),
              sidecar: sidecar ? cpuSeconds(sidecar.pid) : null,
              backends: await backendCpu(cpuProbe, counterUrls),
            };
            const evening =
              sc.championship && championship
                ? await runChampionship(loader, {
                    instance: inst,
                    server,
                    raw: servers.get('raw'),
                    setup: championship,
                    databaseUrl: main.url,
                    durationSeconds: opts.durationSeconds,
                  })
                : undefined;
            const load = evening?.load ?? (await loader.run(specFor(sc, inst, opts.durationSeconds)));
            // The orders' e-mails and jobs are part of their cost: the CPU figures and the sustained rate include the drain.
            const drain = sc.drainsOutbox ? await drainOutbox(main.url) : undefined;
            const cpuAfter = {
              server: cpuSeconds(server.pid),
              sidecar: sidecar ? cpuSeconds(sidecar.pid) : null,
              backends: await backendCpu(cpuProbe, counterUrls),
            };
            const loadAvgAfter = os.loadavg();
            const m: Measurement = { scenario: sc.id, instance: inst, round, load, loadAvgBefore, loadAvgAfter };
            if (rss) m.rssPeak = rss.stop();
            if (cpuBefore.server !== null && cpuAfter.server !== null) m.cpuSeconds = cpuAfter.server - cpuBefore.server;
            m.databaseCpuSeconds = backendCpuBetween(cpuBefore.backends, cpuAfter.backends);
            if (sidecar && sidecarRss) {
              m.paymentSimulator = {
                cpuSeconds: cpuBefore.sidecar !== null && cpuAfter.sidecar !== null ? cpuAfter.sidecar - cpuBefore.sidecar : null,
                rssPeak: sidecarRss.stop(),
              };
            }
            if (drain) m.outbox = { ...drain, sustainedRps: (load.requests - load.non2xx) / (load.durationSeconds + drain.drainSeconds) };
            if (sc.upload && counter) m.punchesPerSecond = ((await countUploads(counter)) - before) / load.durationSeconds;
            if (evening) {
              m.championship = await evening.finish();
              for (const line of championshipLog(inst, m.championship, load)) log(line);
              m.gapFree = {
                clients: load.followed?.length ?? 0,
                violations: m.championship.gapFreeViolations,
                received: (load.followed ?? []).reduce((a, f) => a + f.count, 0),
              };
            }
            if (sc.follow) {
              m.gapFree = await checkFollowed(main.url, main.bigEventModems, load);
              await removeWritten(main.url);
            }
            measurements.push(m);
            const perRequest = (s: number | null | undefined) =>
              typeof s === 'number' && load.requests > 0 ? `${((s * 1000) / load.requests).toFixed(2)}` : '–';
            log(
              `  ${sc.id.padEnd(14)} ${inst.padEnd(11)} ${load.rps.toFixed(0).padStart(6)} req/s  p50 ${load.p50.toFixed(1)} ms  p99 ${load.p99.toFixed(1)} ms` +
                `  CPU ms/req: server ${perRequest(m.cpuSeconds)}, PostgreSQL ${perRequest(m.databaseCpuSeconds)}${m.paymentSimulator ? `, payment simulator ${perRequest(m.paymentSimulator.cpuSeconds)}` : ''}` +
                `${m.punchesPerSecond !== undefined ? `  ${m.punchesPerSecond.toFixed(0)} punches/s` : ''}${m.outbox ? `  outbox ${m.outbox.backlogAtEnd} jobs at the end, drained in ${m.outbox.drainSeconds.toFixed(1)} s${m.outbox.left ? ` (${m.outbox.left} left)` : ''}, sustained ${m.outbox.sustainedRps.toFixed(0)} req/s` : ''}${m.gapFree ? `  live clients ${m.gapFree.clients}, punches written ${load.written ?? 0}, violations ${m.gapFree.violations}` : ''}${load.non2xx ? `  non-2xx ${load.non2xx}` : ''}${load.errors ? `  errors ${load.errors}` : ''}`,
            );
          }
        }
        if (scenarios.some((s) => s.upload)) {
          const removed = await cleanUploads(main.url);
          log(`  removed ${removed} uploaded punches`);
        }
      }
    } finally {
      await counter?.end();
      await cpuProbe.end();
    }
  } finally {
    loader.stop();
    for (const s of servers.values()) await s.stop();
    await paymentSimulator?.stop();
    if (championship) await removeChampionship(main.url);
  }

  // 1,000 messages per round from scale 0.01 up (a few seconds each), fewer for the tiny harness test.
  const mail = mailSelected
    ? await measureMail({ messages: Math.max(100, Math.round(1_000 * Math.min(1, opts.scale * 100))), rounds: opts.rounds, log })
    : undefined;

  const loadAvgAfter = os.loadavg();
  log(`load average after: ${loadAvgAfter.map((x) => x.toFixed(2)).join(' ')}`);
  const summaries = summarize(measurements, checks);
  const results: BenchResults = {
    startedAt,
    finishedAt: new Date().toISOString(),
    options: {
      scale: opts.scale,
      durationSeconds: opts.durationSeconds,
      rounds: opts.rounds,
      warmupSeconds: opts.warmupSeconds,
      only: opts.only,
      databaseUrl: opts.databaseUrl,
      runMode: opts.runMode ?? 'compiled',
    },
    machine: {
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      cores: os.cpus().length,
      memoryBytes: os.totalmem(),
      loadAvgBefore,
      loadAvgAfter,
      platform: `${os.type()} ${os.release()}`,
    },
    versions: await versions(main.url, needs('postgrest')),
    datasets: { main, ...(flat ? { flat } : {}) },
    scenarios: scenarios.map(({ id, group, title, description, instances, connections, overallRate }) => ({
      id,
      group,
      title,
      description,
      instances,
      connections,
      overallRate,
    })),
    checks,
    measurements,
    summaries,
    unavailable,
    targets: evaluateTargets(summaries, scenarios, unavailable),
    ...(mail ? { mail } : {}),
  };
  // The results first: an unwritable report must not lose a run's measurements.
  if (opts.resultsDir) {
    mkdirSync(opts.resultsDir, { recursive: true });
    // Per-client records of the popular scenarios are summed into gapFree; the file keeps the sums only.
    const stored = measurements.map((m) => ({ ...m, load: { ...m.load, followed: undefined } }));
    const file = JSON.stringify({ ...results, measurements: stored, checks: checks.map(({ ids: _ids, ...c }) => c) }, null, 2);
    writeFileSync(path.join(opts.resultsDir, `${startedAt.replace(/[:.]/g, '-')}.json`), file);
    writeFileSync(path.join(opts.resultsDir, 'latest.json'), file);
  }
  if (opts.reportPath) {
    mkdirSync(path.dirname(opts.reportPath), { recursive: true });
    writeFileSync(opts.reportPath, renderMarkdown(results, scenarios));
    log(`wrote ${path.relative(process.cwd(), opts.reportPath) || opts.reportPath}`);
  }
  if (fatal.length) {
    const err = new Error(`benchmark problems:\n- ${fatal.join('\n- ')}`);
    (err as Error & { results?: BenchResults }).results = results;
    throw err;
  }
  return results;
}

/** Re-renders BENCHMARKS.md from a results file (`--render bench/results/latest.json [--report FILE]`). */
function renderOnly(resultsFile: string, reportPath: string): void {
  const results = JSON.parse(readFileSync(resultsFile, 'utf8')) as BenchResults;
  const scenarios = selectScenarios(results.options.only);
  results.targets = evaluateTargets(results.summaries, scenarios, results.unavailable);
  writeFileSync(reportPath, renderMarkdown(results, scenarios));
  writeFileSync(resultsFile, JSON.stringify(results, null, 2));
}

if (require.main === module) {
  const renderAt = process.argv.indexOf('--render');
  if (renderAt >= 0) {
    const rest = process.argv.slice(2).filter((_, i) => i + 2 !== renderAt && i + 2 !== renderAt + 1);
    renderOnly(path.resolve(process.argv[renderAt + 1] ?? ''), parseArgs(rest).reportPath ?? path.join(ROOT, 'BENCHMARKS.md'));
    process.exit(0);
  }
  let opts: BenchOptions;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
  runBench(opts).then(
    () => process.exit(0),
    (err: Error) => {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    },
  );
}
