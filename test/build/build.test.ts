/**
 * `pnpm build` produces runnable JavaScript: the compiled services start with plain node (no tsx), apply their
 * migrations, load their demo data (lazily imported modules included), answer /healthz, /readyz, /openapi.json and /metrics, and stop gracefully on SIGTERM; the
 * migration-only entry points migrate an empty database and exit 0; stack traces map back to TypeScript.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDatabase, createLogger } from '@sports-timing/shared';
import { createTestDatabase, type TestDatabase } from '@sports-timing/shared/src/testing';
import { ROOT, startServiceProcess, type ServiceProcess } from '../support/service-process';
import { testTime, testConnectTimeoutMs } from '@sports-timing/shared/src/test-time';

jest.setTimeout(testTime(180_000));

let db: TestDatabase;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'build-test-'));
const running: ServiceProcess[] = [];

beforeAll(async () => {
  // The real command (`pnpm build` = this script through tsx), so the test fails when the script does.
  execFileSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts/build.ts')], { cwd: ROOT, stdio: 'pipe' });
  db = await createTestDatabase('build');
});

afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()));
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('every package gets dist/*.js with source maps', () => {
  for (const file of [
    'packages/shared/dist/index.js',
    'packages/shared/dist/index.js.map',
    'packages/shared/dist/embedded.js',
    'services/timing/dist/server.js',
    'services/timing/dist/migrate.js',
    'services/ordering/dist/server.js',
    'services/ordering/dist/migrate.js',
    'packages/erp-simulator/dist/main.js',
    'packages/payment-simulator/dist/main.js',
    'services/timing/dist/web/console.js',
    'services/timing/dist/web/live.js',
    // The function texts the timing migrations read at run time (docs/database.md "Function texts").
    'services/timing/dist/db/functions/upload_punch_batch.v1.sql',
  ]) {
    expect(existsSync(path.join(ROOT, file))).toBe(true);
  }
});

test('the migration entry points migrate an empty database with plain node and exit 0', async () => {
  for (const svc of ['timing', 'ordering']) {
    execFileSync(process.execPath, ['--conditions=dist', '--enable-source-maps', path.join(ROOT, `services/${svc}/dist/migrate.js`)], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: db.url, LOG_LEVEL: 'warn' },
      stdio: 'pipe',
    });
  }
  const database = createDatabase<unknown>({
    connectTimeoutMs: testConnectTimeoutMs(),
    url: db.url,
    schema: 'public',
    logger: createLogger('build-test'),
    applicationName: 'build-test',
  });
  try {
    const { rows } = await database.pool.query<{ nspname: string }>(`select nspname from pg_namespace where nspname in ('timing', 'ordering') order by 1`);
    expect(rows.map((r) => r.nspname)).toEqual(['ordering', 'timing']);
  } finally {
    await database.close();
  }
});

test('a migration entry point without a database URL exits 1 naming the variable', () => {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  delete env.TIMING_DATABASE_URL;
  let failure: { status?: number; stderr?: Buffer } | undefined;
  try {
    execFileSync(process.execPath, ['--conditions=dist', path.join(ROOT, 'services/timing/dist/migrate.js')], { cwd: ROOT, env, stdio: 'pipe' });
  } catch (err) {
    failure = err as { status?: number; stderr?: Buffer };
  }
  expect(failure?.status).toBe(1);
  expect(String(failure?.stderr)).toMatch(/TIMING_DATABASE_URL or DATABASE_URL/);
});

test.each([
  ['timing', 'services/timing/dist/server.js', { TIMING_PORT: '0' }],
  ['ordering', 'services/ordering/dist/server.js', { ORDERING_PORT: '0' }],
])('the compiled %s service runs with plain node, answers its health, docs and metrics, and stops on SIGTERM', async (_name, entry, portEnv) => {
  const proc = await startServiceProcess({ entry, env: { DATABASE_URL: db.url, DATA_DIR: dataDir, ...portEnv } });
  running.push(proc);
  // No TypeScript was loaded: plain node 20 cannot run .ts, so reaching here proves the dist condition resolved.
  const health = await fetch(`${proc.baseUrl}/healthz`);
  expect(health.status).toBe(200);
  const ready = await fetch(`${proc.baseUrl}/readyz`);
  expect(ready.status).toBe(200);
  const spec = (await (await fetch(`${proc.baseUrl}/openapi.json`)).json()) as { openapi: string };
  expect(spec.openapi).toMatch(/^3\./);
  const metrics = await fetch(`${proc.baseUrl}/metrics`);
  expect(metrics.status).toBe(200);
  expect(await metrics.text()).toMatch(/process_cpu_user_seconds_total/);
  expect(await proc.stop()).toBe(0);
});

test('the compiled timing service serves the console and live page bundles that pnpm build wrote to dist/web', async () => {
  const proc = await startServiceProcess({ entry: 'services/timing/dist/server.js', env: { DATABASE_URL: db.url, DATA_DIR: dataDir, TIMING_PORT: '0' } });
  running.push(proc);
  for (const [url, file] of [
    ['/console/app.js', 'console.js'],
    ['/live/app.js', 'live.js'],
  ]) {
    const res = await fetch(`${proc.baseUrl}${url}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/javascript/);
    expect(await res.text()).toBe(readFileSync(path.join(ROOT, 'services/timing/dist/web', file), 'utf8'));
  }
  const page = await fetch(`${proc.baseUrl}/console`);
  expect(await page.text()).toMatch(/<script src="\/console\/app.js"><\/script>/);
  expect(await proc.stop()).toBe(0);
});
