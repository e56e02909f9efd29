/**
 * README "What production changes", started for real: the services, the simulators and `pnpm start` run as an
 * operator runs them with `APP_ENV=production` (or `staging`) and no secrets, and each refusal is read from
 * their output. A shared deployment takes no development default: no key generated into `DATA_DIR/keys` (two
 * instances would refuse each other's tokens), no secret from the source or the simulators, no bootstrap admin
 * key written to the log; `NODE_ENV=production` alone selects nothing and says which variable does. Two
 * instances with the same configuration accept each other's access tokens.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createDatabase, createLogger, DEV_ERP_WEBHOOK_SECRET } from '@sports-timing/shared';
import { createTestDatabase, type TestDatabase, freePorts } from '@sports-timing/shared/src/testing';
import { deploymentSecrets } from '../support/deployment-secrets';
import { ROOT, startServiceProcess, type ServiceProcess } from '../support/service-process';
import { testTime, testConnectTimeoutMs } from '@sports-timing/shared/src/test-time';

jest.setTimeout(testTime(180_000));

const ORDERING = 'services/ordering/src/server.ts';
const TIMING = 'services/timing/src/server.ts';
const ERP_SIM = 'packages/erp-simulator/src/main.ts';

/** Variables of the test run that an operator's environment would not have (jest's lowered hash cost among them). */
const RUN_ONLY = ['LOG_LEVEL', 'HTTP_LOG', 'LOG_FORMAT', 'JEST_WORKER_ID', 'APP_ENV', 'NODE_ENV', 'PASSWORD_HASH_COST_LN', 'DATABASE_URL'];

/** The secrets a production start needs (every one refused when missing); none is in the base environment. */
const SECRETS = [
  'JWT_PRIVATE_KEY',
  'JWT_PREVIOUS_PUBLIC_KEYS',
  'ENCRYPTION_KEYS',
  'LICENSE_SIGNING_KEY',
  'LICENSE_SECRET_KEY',
  'PAYMENT_API_KEY',
  'ERP_API_TOKEN_WECLAPP',
  'ERP_API_TOKEN_WECLAPP_SANDBOX',
  'ERP_WEBHOOK_SECRET',
  'TIMING_BOOTSTRAP_API_KEY',
  'BOOTSTRAP_ADMIN_PASSWORD',
  'SIM_CONTROL_TOKEN',
];

let db: TestDatabase;
let dataDir: string;
beforeAll(async () => {
  db = await createTestDatabase('prodstart');
  dataDir = mkdtempSync(path.join(tmpdir(), 'production-start-'));
});
afterAll(async () => {
  rmSync(dataDir, { recursive: true, force: true });
  await db.drop();
});

/** An operator's environment: the run's variables removed, `DATA_DIR` fresh, `env` on top. */
function operatorEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const full: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [...RUN_ONLY, ...SECRETS]) delete full[name];
  return { ...full, DATABASE_URL: db.url, DATA_DIR: dataDir, DEMO_DATA: 'false', ORDERING_PORT: '0', TIMING_PORT: '0', ...env };
}

/** Runs `args` (node, or pnpm for the launcher) to its exit; every printed line and the exit code. */
function runToExit(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; lines: string[] }> {
  const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, lines: out.split('\n').filter((l) => l.trim() !== '') })));
}

const node = (entry: string, env: Record<string, string>) => runToExit(process.execPath, ['--import', 'tsx', path.join(ROOT, entry)], operatorEnv(env));

/** The refusal line of `name`: `Invalid configuration: NAME=…` naming the environment. */
const refusal = (name: string, environment = 'production') => new RegExp(`^Invalid configuration: ${name}="(\\*\\*\\*)?" \\(expected .*APP_ENV=${environment}`);

/** The variables the refusal lines name, in order. */
const named = (lines: string[]) => lines.map((l) => /^(?:\[\w+\] )?Invalid configuration: ([A-Z_]+)=/.exec(l)?.[1] ?? l);

const GENERATED = ['JWT_PRIVATE_KEY', 'ENCRYPTION_KEYS', 'LICENSE_SIGNING_KEY', 'LICENSE_SECRET_KEY'];

describe('the ordering service with APP_ENV=production and no secrets', () => {
  it('refuses every development default, one line naming each variable, and generates no key', async () => {
    const r = await node(ORDERING, { APP_ENV: 'production' });
    expect(named(r.lines)).toEqual([...GENERATED, 'PAYMENT_API_KEY']);
    for (const [i, name] of [...GENERATED, 'PAYMENT_API_KEY'].entries()) expect(r.lines[i]).toMatch(refusal(name));
    expect(r.code).toBe(1);
    expect(existsSync(path.join(dataDir, 'keys'))).toBe(false);
  });

  it("refuses the source's ERP webhook secret and the simulators' tokens, in staging too, without showing them", async () => {
    const r = await node(ORDERING, {
      ...deploymentSecrets(),
      APP_ENV: 'staging',
      ERP_WEBHOOK_SECRET: DEV_ERP_WEBHOOK_SECRET,
      ERP_API_TOKEN_WECLAPP: 'dev-erp-token-weclapp',
      ERP_API_TOKEN_WECLAPP_SANDBOX: 'dev-erp-token-weclapp-sandbox',
      PAYMENT_API_KEY: 'dev-payment-api-key',
    });
    const names = ['PAYMENT_API_KEY', 'ERP_API_TOKEN_WECLAPP', 'ERP_API_TOKEN_WECLAPP_SANDBOX', 'ERP_WEBHOOK_SECRET'];
    expect(named(r.lines)).toEqual(names);
    for (const [i, name] of names.entries()) expect(r.lines[i]).toMatch(refusal(name, 'staging'));
    expect(r.lines.join('\n')).not.toMatch(/dev-erp-token|dev-payment-api-key|dev-erp-webhook-secret/);
    expect(r.code).toBe(1);
  });
});

describe('NODE_ENV=production without APP_ENV', () => {
  const line =
    /^(\[start\] )?Configuration: APP_ENV \(unset\): NODE_ENV=production does not select the production posture, APP_ENV does: set APP_ENV=production/;
  it.each([
    ['ordering', ORDERING],
    ['timing', TIMING],
    ['erp simulator', ERP_SIM],
  ])('%s: stops with one line naming APP_ENV', async (_name, entry) => {
    const r = await node(entry, { NODE_ENV: 'production', ERP_SIMULATOR_PORT: '0' });
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(line);
    expect(r.code).toBe(1);
  });

  it('pnpm start: stops with that line before starting anything', async () => {
    const r = await runToExit('pnpm', ['-s', 'start'], operatorEnv({ NODE_ENV: 'production', COREPACK_ENABLE_DOWNLOAD_PROMPT: '0' }));
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(line);
    expect(r.code).toBe(1);
  });
});

describe('the timing service with APP_ENV=production and no TIMING_BOOTSTRAP_API_KEY', () => {
  it('creates no admin, writes no key to the log or DATA_DIR, and names the variable in one warning', async () => {
    const svc = await startServiceProcess({ entry: TIMING, env: operatorEnv({ APP_ENV: 'production', LOG_LEVEL: 'info' }) });
    try {
      const out = svc.output();
      expect(out).not.toMatch(/tk_|developmentApiKey/);
      const warnings = out.split('\n').filter((l) => l.includes('TIMING_BOOTSTRAP_API_KEY'));
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0])).toMatchObject({ level: 40 });
      expect(existsSync(path.join(dataDir, 'keys'))).toBe(false);
      const database = createDatabase<unknown>({
        connectTimeoutMs: testConnectTimeoutMs(),
        url: db.url,
        schema: 'timing',
        logger: createLogger('production-start-test', 'silent'),
      });
      try {
        expect((await database.pool.query('select count(*)::int as n from timing.users')).rows[0].n).toBe(0);
      } finally {
        await database.close();
      }
    } finally {
      expect(await svc.stop()).toBe(0);
    }
  });
});

it('pnpm start with APP_ENV=production puts no development ERP webhook secret in: the ordering refusals name only the missing keys', async () => {
  const [ordering, timing, erp, payment] = await freePorts(4);
  const r = await runToExit(
    'pnpm',
    ['-s', 'start'],
    operatorEnv({
      APP_ENV: 'production',
      SIM_CONTROL_TOKEN: 'control-token-0123456789',
      ORDERING_PORT: String(ordering),
      TIMING_PORT: String(timing),
      ERP_SIMULATOR_PORT: String(erp),
      PAYMENT_SIMULATOR_PORT: String(payment),
      COREPACK_ENABLE_DOWNLOAD_PROMPT: '0',
    }),
  );
  const refusals = r.lines.filter((l) => l.startsWith('[ordering] Invalid configuration:'));
  expect(named(refusals.map((l) => l.replace(/^\[ordering\] /, '')))).toEqual([...GENERATED, 'PAYMENT_API_KEY']);
  expect(r.lines.join('\n')).not.toContain(DEV_ERP_WEBHOOK_SECRET);
  expect(r.lines).toContain('[start] ordering exited with code 1; stopping everything');
  expect(r.code).toBe(1);
});

describe('two instances with the same configuration', () => {
  const started: ServiceProcess[] = [];
  afterAll(async () => {
    for (const s of started) await s.stop();
  });

  it("accept each other's access tokens; an instance with other keys refuses them (the control)", async () => {
    const password = `Pw-${randomBytes(12).toString('hex')}`;
    // The service refuses a lowered hash cost in production (startServiceProcess adds the run's environment back).
    const shared = { ...deploymentSecrets(), APP_ENV: 'production', BOOTSTRAP_ADMIN_PASSWORD: password, LOG_LEVEL: 'info', PASSWORD_HASH_COST_LN: '17' };
    const start = async (env: Record<string, string>, dir: string) => {
      const svc = await startServiceProcess({ entry: ORDERING, env: operatorEnv({ ...env, DATA_DIR: mkdtempSync(path.join(dataDir, dir)) }) });
      started.push(svc);
      return svc;
    };
    const a = await start(shared, 'a-');
    const b = await start(shared, 'b-');
    const other = await start({ ...shared, ...deploymentSecrets() }, 'c-');
    const token = async (svc: ServiceProcess) => {
      const res = await fetch(`${svc.baseUrl}/api/rest/v1/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'password', username: 'admin', password }),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { access_token: string }).access_token;
    };
    const userinfo = async (svc: ServiceProcess, t: string) =>
      (await fetch(`${svc.baseUrl}/api/rest/v1/auth/userinfo`, { headers: { Authorization: `Bearer ${t}` } })).status;
    const fromA = await token(a);
    const fromB = await token(b);
    expect([await userinfo(b, fromA), await userinfo(a, fromB), await userinfo(a, fromA)]).toEqual([200, 200, 200]);
    expect(await userinfo(other, fromA)).toBe(401);
  });
});
