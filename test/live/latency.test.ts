/**
 * Live latency proof in CI: a slice of the real VeNotte 2020 event (19:00–19:05, 475 punches from
 * 27 controls — its busiest stretch) replayed at 60× by `punches replay` against the timing service running as
 * a process, with `punches tail` following the same modems beside it. Every punch is delivered, none twice,
 * and the time from upload acknowledgement to tail output stays low: p99 under LIVE_P99_BOUND_MS. The default,
 * 2000 ms, is loose on purpose: CI runs this beside other test files on a shared 2-core machine, where p99 was
 * seen between 110 ms and 1.4 s for the same code; the bound still fails a fall-back to the 5 s safety re-read
 * or to plain polling. Set LIVE_P99_BOUND_MS=100 on an idle machine for the figure (the soak script
 * `test/soak/live-latency.soak.ts` does the whole event with 100 ms by default). The figure is printed and
 * written to `$DATA_DIR/live-latency-ci.json` (default `.data/`).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase, type TestDatabase, testNote } from '@sports-timing/shared/src/testing';
import { ROOT, startServiceProcess, type ServiceProcess } from '../support/service-process';
import { formatReport, measureLiveLatency } from './latency';

jest.setTimeout(180_000);

const API_KEY = 'tk_live_latency_test_key_0123456789abcdefghijklmnop';
const SLICE = path.join(__dirname, 'fixtures/venotte2020-1900-1905.csv');
let db: TestDatabase;
let timing: ServiceProcess;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'live-latency-svc-'));

beforeAll(async () => {
  db = await createTestDatabase('live_latency');
  timing = await startServiceProcess({
    entry: 'services/timing/src/server.ts',
    env: { TIMING_PORT: '0', DATABASE_URL: db.url, DATA_DIR: dataDir, DEMO_DATA: 'false', TIMING_BOOTSTRAP_API_KEY: API_KEY },
  });
});

afterAll(async () => {
  await timing?.stop();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('replay at 60x with tail beside it: all delivered, none repeated, p99 from ack to tail within the bound', async () => {
  const report = await measureLiveLatency({ file: SLICE, baseUrl: timing.baseUrl, apiKey: API_KEY, speed: 60 });
  const line = formatReport(report);

  testNote(`live latency (slice 19:00-19:05 at 60x): ${line}\nslowest: ${JSON.stringify(report.worst)}`);
  const out = path.resolve(process.env.DATA_DIR ?? path.join(ROOT, '.data'));
  mkdirSync(out, { recursive: true });
  writeFileSync(
    path.join(out, 'live-latency-ci.json'),
    `${JSON.stringify({ at: new Date().toISOString(), slice: path.basename(SLICE), speed: 60, ...report }, null, 2)}\n`,
  );

  expect(report.punches).toBe(475);
  expect(report.missing).toBe(0);
  expect(report.repeated).toBe(0);
  expect(report.unexpected).toBe(0);
  expect(report.delivered).toBe(report.expected);
  expect(report.p99).toBeLessThan(Number(process.env.LIVE_P99_BOUND_MS ?? 2000));
});
