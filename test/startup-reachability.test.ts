/**
 * Third parties at start (README "Configuration", docs/decisions.md §3 "Third parties at start"): the ordering
 * service started as an operator starts it, with `SMTP_URL`, an ERP base URL or `PAYMENT_BASE_URL` pointing where
 * nothing usable answers, exits 1 with one line naming the variable, its value (password masked) and what
 * failed. In staging and production a refused connection only warns (the service keeps serving, the outbox
 * retries), while a value that cannot work (a name that does not resolve) still stops it.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SMTPServer } from 'smtp-server';
import { deploymentSecrets } from './support/deployment-secrets';
import { ROOT, startServiceProcess } from './support/service-process';
import { testTime } from '@sports-timing/shared/src/test-time';

const GOOD_DB = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ENTRY = 'services/ordering/src/server.ts';

/** A loopback port nothing listens on (taken from the kernel, then released). */
async function closedPort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

let dataDir: string;
let refused: number;
let smtpNoLogin: SMTPServer;
let smtpOpen: SMTPServer;
let http: Server;
const port = (s: { address(): unknown }) => (s.address() as AddressInfo).port;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'startup-reachability-'));
  refused = await closedPort();
  // A relay that refuses every login, and one that needs none (the positive control).
  smtpNoLogin = new SMTPServer({
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth: (_a, _s, cb) => cb(new Error('Invalid login')),
  });
  smtpOpen = new SMTPServer({ authOptional: true, disabledCommands: ['STARTTLS'], logger: false });
  await new Promise<void>((r) => smtpNoLogin.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => smtpOpen.listen(0, '127.0.0.1', r));
  // Any HTTP answer counts: an ERP or payment provider that says 404 to a bare GET is there.
  http = createServer((_req, res) => res.writeHead(404).end());
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
});

afterAll(async () => {
  await new Promise<void>((r) => smtpNoLogin.close(() => r()));
  await new Promise<void>((r) => smtpOpen.close(() => r()));
  await new Promise((r) => http.close(r));
  rmSync(dataDir, { recursive: true, force: true });
});

/** Runs the ordering service to its exit (or 60 s) with `env` on top of a working base. */
function run(env: Record<string, string>): Promise<{ code: number | null; lines: string[] }> {
  const full: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: GOOD_DB, ORDERING_PORT: '0', DEMO_DATA: 'false', DATA_DIR: dataDir, ...env };
  for (const name of ['LOG_LEVEL', 'HTTP_LOG', 'LOG_FORMAT', 'JEST_WORKER_ID', 'APP_ENV']) if (!(name in env)) delete full[name];
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, ENTRY)], {
    cwd: ROOT,
    env: full,
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: testTime(60_000),
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, lines: out.split('\n').filter((l) => l.trim() !== '') })));
}

const NOT_RESOLVED = /(unusable: getaddrinfo ENOTFOUND|cannot reach it: getaddrinfo EAI_AGAIN) [\w.]+\.invalid$/;

describe('an unusable third-party address stops the start with one line naming its variable', () => {
  const cases: { name: string; env: () => Record<string, string>; line: () => RegExp }[] = [
    {
      name: 'SMTP_URL refused',
      env: () => ({ SMTP_URL: `smtp://clerk:s3cret@127.0.0.1:${refused}` }),
      line: () =>
        new RegExp(
          `^Configuration: SMTP_URL \\(smtp://clerk:\\*\\*\\*@127\\.0\\.0\\.1:${refused}\\): cannot reach it: connect ECONNREFUSED 127\\.0\\.0\\.1:${refused}$`,
        ),
    },
    {
      name: 'SMTP_URL whose login the relay refuses',
      env: () => ({ SMTP_URL: `smtp://clerk:s3cret@127.0.0.1:${port(smtpNoLogin.server)}` }),
      line: () => /^Configuration: SMTP_URL \(smtp:\/\/clerk:\*\*\*@127\.0\.0\.1:\d+\): unusable: Invalid login: .*Invalid login/,
    },
    {
      name: 'ERP_BASE_URL_WECLAPP refused',
      env: () => ({ ERP_BASE_URL_WECLAPP: `http://127.0.0.1:${refused}/webapp/api/v1` }),
      line: () =>
        new RegExp(`^Configuration: ERP_BASE_URL_WECLAPP \\(http://127\\.0\\.0\\.1:${refused}/webapp/api/v1\\): cannot reach it: connect ECONNREFUSED`),
    },
    {
      name: 'ERP_BASE_URL_WECLAPP_SANDBOX not resolvable',
      env: () => ({ ERP_BASE_URL_WECLAPP_SANDBOX: 'http://erp.invalid/sandbox/webapp/api/v1' }),
      line: () => new RegExp(`^Configuration: ERP_BASE_URL_WECLAPP_SANDBOX \\(http://erp\\.invalid/sandbox/webapp/api/v1\\): ${NOT_RESOLVED.source}`),
    },
    {
      name: 'PAYMENT_BASE_URL refused',
      env: () => ({ PAYMENT_BASE_URL: `http://127.0.0.1:${refused}/api/v1` }),
      line: () => new RegExp(`^Configuration: PAYMENT_BASE_URL \\(http://127\\.0\\.0\\.1:${refused}/api/v1\\): cannot reach it: connect ECONNREFUSED`),
    },
    {
      name: 'PAYMENT_BASE_URL not resolvable, in staging too',
      env: () => ({ ...deploymentSecrets(), APP_ENV: 'staging', PAYMENT_BASE_URL: 'https://payments.invalid/v1.0' }),
      line: () => new RegExp(`^Configuration: PAYMENT_BASE_URL \\(https://payments\\.invalid/v1\\.0\\): ${NOT_RESOLVED.source}`),
    },
  ];

  it.each(cases)(
    '$name: exit 1, one line, no secret',
    async ({ env, line }) => {
      const r = await run(env());
      expect(r.lines).toHaveLength(1);
      expect(r.lines[0]).toMatch(line());
      expect(r.lines[0]).not.toMatch(/s3cret|\bat \w/);
      expect(r.code).toBe(1);
    },
    60_000,
  );
});

describe('reachable third parties, and a refused one in staging', () => {
  it(
    'starts without a warning when every configured address answers (the positive control)',
    async () => {
      const svc = await startServiceProcess({
        entry: ENTRY,
        env: {
          DATABASE_URL: GOOD_DB,
          ORDERING_PORT: '0',
          DEMO_DATA: 'false',
          DATA_DIR: dataDir,
          SMTP_URL: `smtp://127.0.0.1:${port(smtpOpen.server)}`,
          ERP_BASE_URL_WECLAPP: `http://127.0.0.1:${port(http)}/webapp/api/v1`,
          PAYMENT_BASE_URL: `http://127.0.0.1:${port(http)}/api/v1`,
        },
      });
      try {
        expect(svc.output()).not.toMatch(/Configuration:/);
      } finally {
        // The output comes with a failure: a slow stop names what it waited for.
        expect({ code: await svc.stop(), output: svc.output().slice(-2000) }).toMatchObject({ code: 0 });
      }
    },
    testTime(60_000),
  );

  it(
    'in staging a refused PAYMENT_BASE_URL is one warning line and the service serves',
    async () => {
      const svc = await startServiceProcess({
        entry: ENTRY,
        env: {
          DATABASE_URL: GOOD_DB,
          ORDERING_PORT: '0',
          DEMO_DATA: 'false',
          DATA_DIR: dataDir,
          ...deploymentSecrets(),
          APP_ENV: 'staging',
          PAYMENT_BASE_URL: `http://127.0.0.1:${refused}/api/v1`,
        },
      });
      try {
        const warnings = svc
          .output()
          .split('\n')
          .filter((l) => l.includes('PAYMENT_BASE_URL'));
        expect(warnings).toHaveLength(1);
        expect(JSON.parse(warnings[0])).toMatchObject({
          level: 40,
          msg: expect.stringMatching(
            /^Configuration: PAYMENT_BASE_URL \(http:\/\/127\.0\.0\.1:\d+\/api\/v1\): cannot reach it: connect ECONNREFUSED .*; serving anyway/,
          ),
        });
        expect((await fetch(`${svc.baseUrl}/healthz`)).status).toBe(200);
      } finally {
        // The output comes with a failure: a slow stop names what it waited for.
        expect({ code: await svc.stop(), output: svc.output().slice(-2000) }).toMatchObject({ code: 0 });
      }
    },
    testTime(60_000),
  );
});
