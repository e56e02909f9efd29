/**
 * Every configuration mistake names its variable (README "Configuration"): each service process (and the
 * launcher) started as an operator starts it, with one bad variable, must exit non-zero with one line that
 * names the variable — no stack trace, no "NaN" — and an unreachable database must be named by the variable
 * that points there, with what failed (its password masked).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { testTime } from '@sports-timing/shared/src/test-time';

const root = path.join(__dirname, '..');
const SERVERS = { timing: 'services/timing/src/server.ts', ordering: 'services/ordering/src/server.ts' } as const;

/** A working database for the cases that must fail on something else first. */
const GOOD_DB = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

function run(cmd: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; lines: string[] }> {
  const full: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: GOOD_DB,
    TIMING_PORT: '0',
    ORDERING_PORT: '0',
    DEMO_DATA: 'false',
    ...env,
  };
  for (const name of ['LOG_LEVEL', 'HTTP_LOG', 'SHUTDOWN_ACCEPT_MS', 'BUILD_TIME', 'GIT_COMMIT', 'JEST_WORKER_ID']) if (!(name in env)) delete full[name];
  const child = spawn(cmd, args, { cwd: root, env: full, stdio: ['ignore', 'pipe', 'pipe'], timeout: testTime(60_000) });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, lines: out.split('\n').filter((l) => l.trim() !== '') })));
}

const server = (svc: keyof typeof SERVERS, env: Record<string, string>) => run(process.execPath, ['--import', 'tsx', SERVERS[svc]], env);

const cases: { name: string; svc: keyof typeof SERVERS; env: Record<string, string>; line: RegExp }[] = [
  {
    name: 'LOG_LEVEL=loud',
    svc: 'timing',
    env: { LOG_LEVEL: 'loud' },
    line: /^Invalid configuration: LOG_LEVEL="loud" \(expected one of fatal, error, warn, info, debug, trace, silent\)$/,
  },
  {
    name: 'HTTP_LOG=maybe',
    svc: 'ordering',
    env: { HTTP_LOG: 'maybe' },
    line: /^Invalid configuration: HTTP_LOG="maybe" \(expected true or false\)$/,
  },
  {
    name: 'SHUTDOWN_ACCEPT_MS=soon',
    svc: 'timing',
    env: { SHUTDOWN_ACCEPT_MS: 'soon' },
    line: /^Invalid configuration: SHUTDOWN_ACCEPT_MS="soon"/,
  },
  {
    name: 'BUILD_TIME=yesterday',
    svc: 'ordering',
    env: { BUILD_TIME: 'yesterday' },
    line: /^Invalid configuration: BUILD_TIME="yesterday"/,
  },
  {
    name: 'PASSWORD_HASH_COST_LN=99',
    svc: 'ordering',
    env: { PASSWORD_HASH_COST_LN: '99' },
    line: /^Invalid configuration: PASSWORD_HASH_COST_LN="99"/,
  },
  {
    name: 'EMBEDDED_PG_PORT=abc (no database URL)',
    svc: 'timing',
    env: { DATABASE_URL: '', EMBEDDED_PG_PORT: 'abc' },
    line: /^Invalid configuration: EMBEDDED_PG_PORT="abc" \(expected an integer between 1 and 65535\)$/,
  },
  {
    name: 'an unreachable DATABASE_URL (timing)',
    svc: 'timing',
    env: { DATABASE_URL: 'postgres://app:s3cret@127.0.0.1:1/app' },
    line: /^Configuration: DATABASE_URL \(postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/app\): cannot reach it: connect ECONNREFUSED 127\.0\.0\.1:1$/,
  },
  {
    name: 'an unreachable ORDERING_DATABASE_URL beside a good DATABASE_URL',
    svc: 'ordering',
    env: { ORDERING_DATABASE_URL: 'postgres://app:s3cret@127.0.0.1:1/app' },
    line: /^Configuration: ORDERING_DATABASE_URL \(postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/app\): cannot reach it: connect ECONNREFUSED/,
  },
];

describe.each(cases)('$name', ({ svc, env, line }) => {
  it(
    'exits 1 with one line naming the variable (no stack, no secret)',
    async () => {
      const r = await server(svc, env);
      expect(r.lines).toHaveLength(1);
      expect(r.lines[0]).toMatch(line);
      expect(r.lines[0]).not.toMatch(/s3cret|NaN|undefined|\bat \w/);
      expect(r.code).toBe(1);
    },
    testTime(90_000),
  );
});

it(
  'the launcher names a bad port variable before starting anything',
  async () => {
    const r = await run('pnpm', ['-s', 'start'], { EMBEDDED_PG_PORT: 'abc', DATABASE_URL: '' });
    expect(r.code).toBe(1);
    expect(r.lines).toEqual(['[start] Invalid configuration: EMBEDDED_PG_PORT="abc" (expected an integer between 1 and 65535)']);
  },
  testTime(60_000),
);
