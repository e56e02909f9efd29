/**
 * Every variable of the README's configuration table, with a bad value, stops whatever reads it with one line
 * naming the variable (README "Configuration"). The table is read from the README (as readme-config.test.ts
 * does), so a new row without a case here fails: each row either has a bad value and the readers that must
 * refuse it, or says why no value is bad (a free-form name or token, or a variable only tests read).
 *
 * The services' and the CLI's readers are called in-process (for ordering, its configuration and the start-up
 * checks of domain rules that server.ts runs next; their process entry points print the error's
 * message and exit 1: config-errors.test.ts and startup-reachability.test.ts start the real processes); the
 * simulators, whose checks sit in their entry points, are started as processes.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { defaultOrderingUrl, defaultTimingUrl } from '../packages/cli/src/main';
import { liveDemoSpeed } from '../packages/launcher/src/live-demo';
import { devSecret } from '@sports-timing/shared';
import { loadOrderingConfig } from '../services/ordering/src/config';
import { checkDomainSettings } from '../services/ordering/src/startup-checks';
import { loadTimingConfig } from '../services/timing/src/config';
import { testTime } from '@sports-timing/shared/src/test-time';

const root = path.join(__dirname, '..');
type Env = Record<string, string | undefined>;

/** Who reads a variable, called with an environment holding only the bad value. */
const ordering = (env: Env) => checkDomainSettings(loadOrderingConfig(env));
const timing = (env: Env) => loadTimingConfig(env);
const cli = (env: Env) => [defaultTimingUrl(env), defaultOrderingUrl(env)];
const launcher = (env: Env) => liveDemoSpeed(env.DEMO_LIVE);
/** What both services do with DATA_DIR first when no key is configured (ordering's server.ts, the JWT key). */
const developmentKeys = (env: Env) => devSecret(path.join(loadOrderingConfig(env).dataDir, 'keys'), 'jwt-ed25519.pem', undefined);
type Reader = (env: Env) => unknown;
const SIMULATORS = { erpSim: 'packages/erp-simulator/src/main.ts', paymentSim: 'packages/payment-simulator/src/main.ts' } as const;
type Simulator = keyof typeof SIMULATORS;

type Case = { bad: string; readers?: Reader[]; simulators?: Simulator[] } | { free: string };

const TEST_ONLY = 'read by the test suites and benchmarks only, never by a service an operator runs';
const FREE_TEXT = 'free text: any value is a name or a token (a wrong token is refused by whoever checks it)';

/** One entry per variable of the README table. */
const CASES: Record<string, Case> = {
  HOST: { bad: '999.1.1.1', readers: [ordering, timing], simulators: ['erpSim', 'paymentSim'] },
  ORDERING_PORT: { bad: 'abc', readers: [ordering, cli] },
  TIMING_PORT: { bad: '70000', readers: [timing, cli] },
  DATABASE_URL: { bad: 'mysql://db/app', readers: [ordering, timing] },
  ORDERING_DATABASE_URL: { bad: 'db:5432', readers: [ordering] },
  TIMING_DATABASE_URL: { bad: 'db:5432', readers: [timing] },
  DATA_DIR: { bad: path.join(__dirname, '..', 'README.md'), readers: [developmentKeys] },
  APP_ENV: { bad: 'prod', readers: [ordering, timing] },
  METRICS_TOKEN: { free: FREE_TEXT },
  SIM_CONTROL_TOKEN: { bad: 'short', simulators: ['erpSim', 'paymentSim'] },
  DEMO_DATA: { bad: 'maybe', readers: [ordering, timing] },
  DEMO_LIVE: { bad: 'fast', readers: [launcher] },
  LOG_LEVEL: { bad: 'loud', readers: [ordering, timing] },
  HTTP_LOG: { bad: 'maybe', readers: [ordering, timing] },
  LOG_FORMAT: { bad: 'fancy', readers: [ordering, timing] },
  TRUSTED_PROXIES: { bad: '10.0.0.1,proxy', readers: [ordering, timing] },
  CORS_ORIGINS: { bad: 'shop.example.com', readers: [ordering, timing] },
  BOOTSTRAP_ADMIN_PASSWORD: { bad: 'admin', readers: [ordering] },
  JWT_PRIVATE_KEY: { bad: 'not a key', readers: [ordering] },
  JWT_PREVIOUS_PUBLIC_KEYS: { bad: 'not a key', readers: [ordering] },
  JWT_ISSUER: { free: FREE_TEXT },
  JWT_AUDIENCE: { free: FREE_TEXT },
  ACCESS_TOKEN_TTL_SECONDS: { bad: '5', readers: [ordering] },
  LOGIN_MAX_FAILURES_PER_ACCOUNT: { bad: '0', readers: [ordering] },
  LOGIN_MAX_FAILURES_PER_IP: { bad: 'many', readers: [ordering] },
  LOGIN_MAX_FAILURES_PER_ACCOUNT_ALL_SOURCES: { bad: '-1', readers: [ordering] },
  PASSWORD_HASH_CONCURRENCY: { bad: '0', readers: [ordering] },
  PASSWORD_HASH_QUEUE: { bad: '1.5', readers: [ordering] },
  PASSWORD_HASH_COST_LN: { bad: '99', readers: [ordering] },
  REDIS_URL: { bad: 'http://redis:6379', readers: [ordering, timing] },
  RATE_LIMIT_ORDERS_PER_MINUTE: { bad: '-1', readers: [ordering] },
  RATE_LIMIT_DISCOUNT_VALIDATIONS_PER_MINUTE: { bad: 'x', readers: [ordering] },
  ORDER_MAX_CARDS_PUBLIC: { bad: '0', readers: [ordering] },
  ORDER_PUBLIC_ORDERS_PER_CALLER_PER_HOUR: { bad: 'x', readers: [ordering] },
  ORDER_PUBLIC_CARDS_PER_CALLER_PER_HOUR: { bad: 'x', readers: [ordering] },
  ORDER_CLIENT_ORDERS_PER_HOUR: { bad: 'x', readers: [ordering] },
  ORDER_CLIENT_CARDS_PER_HOUR: { bad: 'x', readers: [ordering] },
  ORDER_MAILS_PER_RECIPIENT_PER_HOUR: { bad: 'x', readers: [ordering] },
  RATE_LIMIT_BATTERY_LOOKUPS_PER_MINUTE: { bad: 'x', readers: [ordering] },
  RATE_LIMIT_PAYMENT_WEBHOOKS_PER_MINUTE: { bad: 'x', readers: [ordering] },
  PAYMENT_DELIVERY_RETENTION_DAYS: { bad: '0', readers: [ordering] },
  ORDER_PAYMENT_EXPIRY_MINUTES: { bad: '0', readers: [ordering] },
  ORDER_EXPIRY_SWEEP_SECONDS: { bad: '0', readers: [ordering] },
  DISCOUNT_HOLD_MINUTES: { bad: 'an hour', readers: [ordering] },
  PAYMENT_MODE: { bad: 'live', readers: [ordering] },
  RATE_LIMIT_KEY_PREFIX: { free: FREE_TEXT },
  LICENSE_SIGNING_KEY: { bad: 'not a key', readers: [ordering] },
  LICENSE_SECRET_KEY: { bad: 'too short', readers: [ordering] },
  SMTP_URL: { bad: 'mail.example.com:25', readers: [ordering] },
  MAIL_FROM: { bad: 'Shop', readers: [ordering] },
  ENCRYPTION_KEYS: { bad: '1:abc', readers: [ordering] },
  MAINTENANCE_RETRY_AFTER_SECONDS: { bad: '0', readers: [ordering] },
  ERP_BASE_URL_WECLAPP: { bad: 'tenant.weclapp.com', readers: [ordering] },
  ERP_BASE_URL_WECLAPP_SANDBOX: { bad: 'ftp://tenant/', readers: [ordering] },
  ERP_API_TOKEN_WECLAPP: { free: FREE_TEXT },
  ERP_API_TOKEN_WECLAPP_SANDBOX: { free: FREE_TEXT },
  ERP_TIMEOUT_MS: { bad: '10', readers: [ordering] },
  ERP_CREATE_SETTLE_MS: { bad: 'x', readers: [ordering] },
  ERP_SHIPPING_ARTICLE_NUMBER: { free: 'free text: an article number (a missing article is reported by the hand-off)' },
  ERP_SALES_ORDER_POLL_SECONDS: { bad: '1', readers: [ordering] },
  ERP_WEBHOOK_SECRET: { bad: 'short', readers: [ordering] },
  PAYMENT_BASE_URL: { bad: 'api.payrexx.com', readers: [ordering] },
  PAYMENT_INSTANCE: { free: FREE_TEXT },
  PAYMENT_API_KEY: { free: FREE_TEXT },
  PUBLIC_BASE_URL: { bad: 'shop.example.com', readers: [ordering] },
  PAYMENT_UNKNOWN_REFETCHES_PER_MINUTE: { bad: 'many', readers: [ordering] },
  TIMING_BOOTSTRAP_API_KEY: { bad: 'tk_short', readers: [timing] },
  TIMING_MAX_LIVE_CONNECTIONS: { bad: '0', readers: [timing] },
  TIMING_MAX_LIVE_CONNECTIONS_PER_CLIENT: { bad: 'x', readers: [timing] },
  TIMING_READ_DATABASE_URL: { bad: 'replica:5432', readers: [timing] },
  TIMING_RATE_LIMIT_KEY_READS_PER_MINUTE: { bad: '-1', readers: [timing] },
  TIMING_ANONYMOUS_ROC_READS_PER_MINUTE: { bad: '-1', readers: [timing] },
  TIMING_ANONYMOUS_DOWNLOADS_PER_MINUTE: { bad: 'x', readers: [timing] },
  TIMING_STREAM_MAX_SECONDS: { bad: '0', readers: [timing] },
  TIMING_STREAM_SEND_TIMEOUT_MS: { bad: '50', readers: [timing] },
  TIMING_MAX_BACKLOG_READS: { bad: '0', readers: [timing] },
  TIMING_READ_CACHE_MB: { bad: 'x', readers: [timing] },
  TIMING_PUNCH_MAX_AGE_SECONDS: { bad: '3601', readers: [timing] },
  TIMING_QUOTA_EVENTS_PER_USER: { bad: '0', readers: [timing] },
  TIMING_QUOTA_KEYS_PER_USER: { bad: '0', readers: [timing] },
  TIMING_QUOTA_PUNCHES_PER_DAY: { bad: '0', readers: [timing] },
  TIMING_FAST_LANE: { bad: 'maybe', readers: [timing] },
  SHUTDOWN_ACCEPT_MS: { bad: 'soon', readers: [ordering, timing] },
  HTTP_KEEP_ALIVE_TIMEOUT_MS: { bad: '500', readers: [ordering, timing] },
  HTTP_BODY_IDLE_TIMEOUT_MS: { bad: 'long', readers: [ordering, timing] },
  HTTP_BODY_MIN_BYTES_PER_SECOND: { bad: '0', readers: [ordering, timing] },
  DATABASE_LOCK_TIMEOUT_MS: { bad: '-5', readers: [ordering, timing] },
  DATABASE_STATEMENT_TIMEOUT_MS: { bad: '30s', readers: [ordering, timing] },
  DATABASE_POOL_MAX_LIFETIME_SECONDS: { bad: '999999', readers: [ordering, timing] },
  DATABASE_CONNECT_TIMEOUT_MS: { bad: '50', readers: [ordering, timing] },
  EMBEDDED_PG_PORT: { bad: 'abc', readers: [ordering, timing] },
  GIT_COMMIT: { free: 'free text: shown as given' },
  BUILD_TIME: { bad: 'yesterday', readers: [ordering, timing] },
  ERP_SIMULATOR_PORT: { bad: 'abc', readers: [ordering], simulators: ['erpSim'] },
  PAYMENT_SIMULATOR_PORT: { bad: 'abc', readers: [ordering], simulators: ['paymentSim'] },
  ERP_SIMULATOR_TOKEN: { free: FREE_TEXT },
  ERP_SIMULATOR_SANDBOX_TOKEN: { free: FREE_TEXT },
  ERP_SIMULATOR_WEBHOOK_URLS: { bad: 'ordering/webhook', simulators: ['erpSim'] },
  ERP_SIMULATOR_SANDBOX_WEBHOOK_URLS: { bad: 'ordering/webhook', simulators: ['erpSim'] },
  PAYMENT_SIMULATOR_WEBHOOK_URLS: { bad: 'ordering/webhook', simulators: ['paymentSim'] },
  PAYMENT_SIMULATOR_WEBHOOK_ATTEMPTS: { bad: '0', simulators: ['paymentSim'] },
  PAYMENT_SIMULATOR_WEBHOOK_BACKOFF_MS: { bad: 'x', simulators: ['paymentSim'] },
  TIMING_URL: { bad: 'timing.example.com', readers: [cli] },
  ORDERING_URL: { bad: 'ftp://ordering', readers: [cli] },
  TIMING_API_KEY: { free: FREE_TEXT },
  ...Object.fromEntries(
    [
      'TEST_EMBEDDED_PG_PORT',
      'TEST_TIME_SCALE',
      'CHROMIUM_PATH',
      'TEST_REDIS_URL',
      'HAPROXY_BIN',
      'NGINX_BIN',
      'TOPOLOGY_PREVIOUS_RELEASE',
      'PG_BIN',
      'TOPOLOGY_BASE_PORT',
      'TOPOLOGY_TEST_BASE_PORT',
      'COMPOSE_CMD',
      'TOPOLOGY_QUICK',
      'FAULT_PG_PORT',
      'FAULT_PG_DIR',
      'FAULT_ORDERS',
      'FAULT_PUNCH_BATCHES',
      'CARD_RESERVATIONS',
      'P99_BOUND_MS',
      'SPEED',
      'FILE',
      'SHOW_PLAN',
      'FUZZ_SEED',
      'FUZZ_RUNS',
      'BENCH_DATABASE_URL',
      'BENCH_NODE_ARGS',
      'RAW_DATABASE_URL',
      'RAW_PORT',
    ].map((name) => [name, { free: TEST_ONLY }]),
  ),
};

/** The variable names of the README table's first column (readme-config.test.ts reads them the same way). */
function tableVariables(): string[] {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  const start = readme.indexOf('## Configuration');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 5));
  const firstCells = [...section.matchAll(/^\|([^|\n]*)\|/gm)].map((m) => m[1]);
  return [...new Set(firstCells.flatMap((cell) => [...cell.matchAll(/`([A-Z][A-Z0-9_]{2,})`/g)].map((m) => m[1])))];
}

/** The message a reader throws for `env`, or undefined when it accepts it. */
function refusal(reader: Reader, env: Env): string | undefined {
  try {
    reader(env);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** Runs a simulator to its exit (it must not start listening); every line it printed, and its exit code. */
function runSimulator(sim: Simulator, env: Env): Promise<{ code: number | null; lines: string[] }> {
  const full: NodeJS.ProcessEnv = { PATH: process.env.PATH, ERP_SIMULATOR_PORT: '0', PAYMENT_SIMULATOR_PORT: '0', ...env };
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, SIMULATORS[sim])], {
    cwd: root,
    env: full,
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: testTime(30_000),
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, lines: out.split('\n').filter((l) => l.trim() !== '') })));
}

/** One line, naming the variable, with none of the signs of an unchecked value. */
function expectOneLineNaming(name: string, message: string | undefined): void {
  expect(message).toBeDefined();
  expect(message!.split('\n')).toHaveLength(1);
  expect(message).toContain(name);
  expect(message).not.toMatch(/\bNaN\b|\bundefined\b|\bat \w+ \(/);
}

describe('README configuration table: a bad value of each variable', () => {
  it('every row has a case here, and every case a row (a new variable needs its bad value)', () => {
    expect(tableVariables().filter((name) => !(name in CASES))).toEqual([]);
    expect(Object.keys(CASES).filter((name) => !tableVariables().includes(name))).toEqual([]);
  });

  const checked = Object.entries(CASES).flatMap(([name, c]) => ('bad' in c ? [{ name, ...c }] : []));

  it.each(checked.filter((c) => c.readers?.length))('$name=$bad: every reader refuses it with one line naming it', ({ name, bad, readers }) => {
    for (const reader of readers!) expectOneLineNaming(name, refusal(reader, { [name]: bad }));
  });

  it('the readers accept an empty environment (the negative control: the refusals above are the bad values)', () => {
    for (const reader of [ordering, timing, cli, launcher]) expect(refusal(reader, {})).toBeUndefined();
  });

  const simCases = checked.flatMap((c) => (c.simulators ?? []).map((sim) => ({ ...c, sim })));
  it.each(simCases)(
    '$name=$bad: the $sim process exits 1 with one line naming it',
    async ({ name, bad, sim }) => {
      const r = await runSimulator(sim, { [name]: bad });
      expect(r.lines).toHaveLength(1);
      expectOneLineNaming(name, r.lines[0]);
      expect(r.code).toBe(1);
    },
    40_000,
  );
});
