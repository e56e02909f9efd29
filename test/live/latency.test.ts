/**
 * Live latency proof in CI: a slice of the real VeNotte 2020 event (19:00–19:05, 475 punches from
 * 27 controls — its busiest stretch) replayed at 60× by `punches replay` against the timing service running as
 * a process, with `punches tail` following the same modems beside it. Every punch is delivered, none twice,
 * and the time from upload acknowledgement to tail output is measured and reported, never asserted: the suite
 * must pass on a busy machine (that wake-ups come from notifications is proved in services/timing/test/live.test.ts,
 * the latency itself by the soak script `test/soak/live-latency.soak.ts` and the benchmark harness). The figure
 * is printed and written to `$DATA_DIR/live-latency-ci.json` (default `.data/`).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase, type TestDatabase, testNote } from '@sports-timing/shared/src/testing';
import { ROOT, startServiceProcess, type ServiceProcess } from '../support/service-process';
import { formatReport, measureLiveLatency } from './latency';
import { testTime } from '@sports-timing/shared/src/test-time';

jest.setTimeout(testTime(180_000));

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

test('replay at 60x with tail beside it: all delivered, none repeated, the latency from ack to tail reported', async () => {
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
});
