/**
 * No secret is repeated by a configuration message (README "Configuration": secrets are shown as `***`). Every
 * secret-bearing variable of both services, the simulators and `pnpm start` gets a malformed value that holds a
 * marker secret; the process is started as an operator starts it and must stop with a line naming the
 * variable, and nothing it printed may contain the marker. A misspelt database URL (`postgress://…`) or one
 * without its scheme is masked as an unreachable one is.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../support/service-process';
import { testTime } from '@sports-timing/shared/src/test-time';
import { freePorts } from '@sports-timing/shared/src/testing';

jest.setTimeout(testTime(120_000));

const SECRET = 'S3cretPw-marker';
/** The part every value below carries, also the ones cut short to be malformed. */
const CORE = 'S3cretPw';
const GOOD_DB = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ENTRIES = {
  ordering: 'services/ordering/src/server.ts',
  timing: 'services/timing/src/server.ts',
  erpSim: 'packages/erp-simulator/src/main.ts',
  paymentSim: 'packages/payment-simulator/src/main.ts',
} as const;

/** Runs `cmd args` with `env` over a working base to its exit; everything printed and the exit code. */
function run(cmd: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const full: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: GOOD_DB,
    ORDERING_PORT: '0',
    TIMING_PORT: '0',
    DEMO_DATA: 'false',
    LOG_LEVEL: 'info',
    ...env,
  };
  delete full.JEST_WORKER_ID;
  const child = spawn(cmd, args, { cwd: ROOT, env: full, stdio: ['ignore', 'pipe', 'pipe'], timeout: 90_000 });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out })));
}

const url = (scheme: string) => `${scheme}://app:${SECRET}@db:5432/app`;

/** [process, variable, malformed value]: each value carries {@link SECRET}. */
const CASES: [keyof typeof ENTRIES, string, string][] = [
  ['ordering', 'DATABASE_URL', url('postgress')],
  ['ordering', 'DATABASE_URL', `app:${SECRET}@db:5432/app`],
  ['ordering', 'ORDERING_DATABASE_URL', `postgres//app:${SECRET}@db/app`],
  ['ordering', 'REDIS_URL', `redis//:${SECRET}@redis:6379`],
  ['ordering', 'SMTP_URL', `smtpp://shop:${SECRET}@mail.example.com:587`],
  ['ordering', 'ERP_BASE_URL_WECLAPP', `ftp://erp:${SECRET}@erp.example.com/webapp/api/v1`],
  ['ordering', 'PAYMENT_BASE_URL', `api.payrexx.com/v1.0?api_key=${SECRET}`],
  ['ordering', 'ENCRYPTION_KEYS', `1:${SECRET}`],
  ['ordering', 'JWT_PRIVATE_KEY', `-----BEGIN PRIVATE KEY-----${SECRET}-----END PRIVATE KEY-----`],
  ['ordering', 'JWT_PREVIOUS_PUBLIC_KEYS', `-----BEGIN PUBLIC KEY-----${SECRET}-----END PUBLIC KEY-----`],
  ['ordering', 'LICENSE_SIGNING_KEY', SECRET],
  ['ordering', 'LICENSE_SECRET_KEY', SECRET],
  ['ordering', 'BOOTSTRAP_ADMIN_PASSWORD', CORE],
  ['ordering', 'ERP_WEBHOOK_SECRET', CORE],
  ['timing', 'DATABASE_URL', url('postgress')],
  ['timing', 'TIMING_DATABASE_URL', url('postgress')],
  ['timing', 'TIMING_READ_DATABASE_URL', url('mysql')],
  ['timing', 'REDIS_URL', `http://:${SECRET}@redis:6379`],
  ['timing', 'TIMING_BOOTSTRAP_API_KEY', `tk_${SECRET}`],
  ['erpSim', 'SIM_CONTROL_TOKEN', CORE],
  ['erpSim', 'ERP_SIMULATOR_WEBHOOK_URLS', `127.0.0.1:8080/api/rest/v1/erp/webhook?erpSystem=weclapp&secret=${SECRET}`],
  ['paymentSim', 'PAYMENT_SIMULATOR_WEBHOOK_URLS', `ordering/status?token=${SECRET}`],
];

describe.each(CASES)('%s with a malformed %s', (svc, name, value) => {
  it('stops naming the variable and repeats no part of the secret', async () => {
    // A simulator listens on port 0 here (the ordering service takes a simulator's port only from 1).
    const ports: Record<string, string> = svc === 'erpSim' || svc === 'paymentSim' ? { ERP_SIMULATOR_PORT: '0', PAYMENT_SIMULATOR_PORT: '0' } : {};
    const r = await run(process.execPath, ['--import', 'tsx', path.join(ROOT, ENTRIES[svc])], { ...ports, [name]: value });
    expect(r.out).toContain(name);
    expect(value).toContain(CORE);
    expect(r.out).not.toContain(CORE);
    expect(r.code).toBe(1);
  });
});

it('pnpm start passes a misspelt DATABASE_URL on to the services, whose lines mask its password', async () => {
  const [ordering, timing, erp, payment] = await freePorts(4);
  const r = await run('pnpm', ['-s', 'start'], {
    DATABASE_URL: url('postgress'),
    ORDERING_PORT: String(ordering),
    TIMING_PORT: String(timing),
    ERP_SIMULATOR_PORT: String(erp),
    PAYMENT_SIMULATOR_PORT: String(payment),
    COREPACK_ENABLE_DOWNLOAD_PROMPT: '0',
  });
  expect(r.out).toMatch(/\] Invalid configuration: DATABASE_URL="postgress:\/\/app:\*\*\*@db:5432\/app"/);
  expect(r.out).not.toContain(SECRET);
  expect(r.code).toBe(1);
});
