/**
 * Live latency soak: the WHOLE real event (services/timing/demo/venotte2020-punches.csv,
 * 7,759 punches; about 3 minutes at 60×) replayed by `punches replay` while `punches tail` follows beside it;
 * every punch must arrive once, p99 from upload acknowledgement to tail output under P99_BOUND_MS (default
 * 100 ms, the figure; meant for an otherwise idle machine). Prints the report and writes it to
 * `.data/live-latency-soak.json`. Exit code 0 when it holds, 1 otherwise.
 *
 *   # against a running `pnpm start` (real event loaded; key from .data/keys/timing-admin-api-key):
 *   TIMING_URL=http://127.0.0.1:8081 TIMING_API_KEY=$(cat .data/keys/timing-admin-api-key) npx tsx test/soak/live-latency.soak.ts
 *   # or let it start its own timing service on a fresh database of this server:
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx test/soak/live-latency.soak.ts [--compiled]
 * Options by env: SPEED (60), FILE (the whole event), P99_BOUND_MS (100).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from '@sports-timing/shared/src/testing';
import { formatReport, measureLiveLatency } from '../live/latency';
import { ROOT, startServiceProcess, type ServiceProcess } from '../support/service-process';

async function main(): Promise<number> {
  const file = process.env.FILE ?? path.join(ROOT, 'services/timing/demo/venotte2020-punches.csv');
  const speed = Number(process.env.SPEED ?? 60);
  const bound = Number(process.env.P99_BOUND_MS ?? 100);
  let baseUrl = process.env.TIMING_URL;
  let apiKey = process.env.TIMING_API_KEY;
  let db: TestDatabase | undefined;
  let svc: ServiceProcess | undefined;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'live-soak-'));
  try {
    if (!baseUrl) {
      db = await createTestDatabase('live_soak');
      apiKey = 'tk_live_latency_soak_key_0123456789abcdefghijklmnop';
      const entry = process.argv.includes('--compiled') ? 'services/timing/dist/server.js' : 'services/timing/src/server.ts';
      svc = await startServiceProcess({ entry, env: { TIMING_PORT: '0', DATABASE_URL: db.url, DATA_DIR: dataDir, TIMING_BOOTSTRAP_API_KEY: apiKey } });
      baseUrl = svc.baseUrl;
      console.log(`started ${entry} at ${baseUrl} (real event loaded as demo data)`);
    }
    if (!apiKey) throw new Error('TIMING_API_KEY is needed with TIMING_URL');
    let lastProgress = 0;
    const report = await measureLiveLatency({
      file,
      baseUrl,
      apiKey,
      speed,
      log: (line) => {
        if (!line.startsWith('replay:') || Date.now() - lastProgress > 10_000) {
          lastProgress = Date.now();
          console.log(line);
        }
      },
    });
    console.log(`live latency (${path.basename(file)} at ${speed}x): ${formatReport(report)}`);
    console.log(`slowest: ${JSON.stringify(report.worst, null, 1)}`);
    mkdirSync(path.join(ROOT, '.data'), { recursive: true });
    writeFileSync(
      path.join(ROOT, '.data/live-latency-soak.json'),
      `${JSON.stringify({ at: new Date().toISOString(), file: path.basename(file), speed, bound, ...report }, null, 2)}\n`,
    );
    const ok = report.missing === 0 && report.repeated === 0 && report.unexpected === 0 && report.p99 < bound;
    console.log(ok ? `OK: all ${report.delivered} delivered once, p99 ${report.p99} ms < ${bound} ms` : `FAILED (p99 bound ${bound} ms)`);
    return ok ? 0 : 1;
  } finally {
    await svc?.stop();
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
