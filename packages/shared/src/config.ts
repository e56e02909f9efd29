/**
 * Environment parsing with clear errors. Every service reads its configuration through these helpers
 * so that a bad value stops the process at start with a message naming the variable, never later.
 */
import { isIP } from 'node:net';
import type { components } from '@sports-timing/contracts/src/generated/ordering';
import { enumValues } from './spec-values';

/** Query parameters whose values are secrets in a configured URL (the ERP webhook URL carries `secret=`). */
const SECRET_PARAMETER = /([?&](?:secret|token|api_?key|key|password|access_token|client_secret)=)[^&\s,]*/gi;

/**
 * `text` with the secrets a configuration value can carry replaced by `***`, also in a value no URL parser
 * accepts (`postgress://app:pw@db/app`, `app:pw@db:5432/app`): in each comma- or space-separated part the
 * password of a `user:password@` (everything between the user name's colon and the last `@`), and the values of
 * secret query parameters.
 */
function maskConfigSecrets(text: string): string {
  return text
    .split(/([,\s]+)/)
    .map((part) => {
      const at = part.lastIndexOf('@');
      if (at < 0) return part;
      const slashes = part.indexOf('//');
      const start = slashes >= 0 && slashes < at ? slashes + 2 : 0;
      const colon = part.indexOf(':', start);
      return colon >= 0 && colon < at ? `${part.slice(0, colon + 1)}***${part.slice(at)}` : part;
    })
    .join('')
    .replace(SECRET_PARAMETER, '$1***');
}

/** Thrown when an environment variable holds a value that cannot be used. */
export class ConfigError extends Error {
  /**
   * `failure`, when given, replaces the "expected …" part (an address that is well-formed but does not answer).
   * The value is shown with its secrets masked ({@link maskConfigSecrets}); pass `***` for a value that is a
   * secret as a whole.
   */
  constructor(name: string, value: string, expected: string, failure?: string) {
    const shown = maskConfigSecrets(value);
    super(failure ? `Configuration: ${name} (${shown}): ${failure}` : `Invalid configuration: ${name}=${JSON.stringify(shown)} (expected ${expected})`);
    this.name = 'ConfigError';
  }
}

/**
 * Several configuration refusals at once, one {@link ConfigError} line each (the production start lists every
 * development default it refuses, not only the first; README "What production changes").
 */
export class ConfigErrors extends Error {
  constructor(readonly errors: ConfigError[]) {
    super(errors.map((e) => e.message).join('\n'));
    this.name = 'ConfigError';
  }
}

/**
 * The deployment environment (`APP_ENV`, default `development`); throws a {@link ConfigError} for an unknown
 * name. `NODE_ENV=production` without `APP_ENV` stops the start with one line naming `APP_ENV` (docs/decisions.md §3
 * "APP_ENV selects the posture"): Node's convention must not leave a deployment silently in the development
 * posture, and a tool setting it for speed (the bench) must not silently switch one into production either.
 */
export function appEnvironmentFromEnv(env: Env = process.env): AppEnvironment {
  const e = envReader(env);
  const environment = e.oneOf<AppEnvironment>('APP_ENV', APP_ENVIRONMENTS, 'development');
  if (e.string('APP_ENV') === undefined && e.string('NODE_ENV') === 'production')
    throw new ConfigError(
      'APP_ENV',
      'unset',
      '',
      'NODE_ENV=production does not select the production posture, APP_ENV does: set APP_ENV=production (or APP_ENV=development for the development defaults)',
    );
  return environment;
}

/** Whether `environment` is a shared deployment (`staging`, `production`): no development default is taken there. */
export function isDeployment(environment: AppEnvironment): boolean {
  return environment === 'staging' || environment === 'production';
}

/**
 * ERP webhook secret of development and test (README "Configuration"): the ordering service's
 * `ERP_WEBHOOK_SECRET` default there (never in staging or production) and the secret `pnpm start` puts into the
 * ERP simulator's webhook URLs, so both sides agree without the launcher reading service code.
 */
export const DEV_ERP_WEBHOOK_SECRET = 'dev-erp-webhook-secret-0123456789';

type Env = Record<string, string | undefined>;

/** Typed readers over an environment map (default `process.env`); empty strings count as unset. */
export function envReader(env: Env = process.env) {
  const raw = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  return {
    /** A string, or the fallback when unset. */
    string(name: string, fallback?: string): string | undefined {
      return raw(name) ?? fallback;
    },
    /** The first set variable among `names`, e.g. `TIMING_DATABASE_URL` then `DATABASE_URL`. */
    firstOf(...names: string[]): string | undefined {
      for (const n of names) {
        const v = raw(n);
        if (v !== undefined) return v;
      }
      return undefined;
    },
    /** An integer within [min, max]; throws ConfigError otherwise. */
    int(name: string, fallback: number, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): number {
      const v = raw(name);
      if (v === undefined) return fallback;
      if (!/^-?\d+$/.test(v)) throw new ConfigError(name, v, `an integer between ${min} and ${max}`);
      const n = Number(v);
      if (n < min || n > max) throw new ConfigError(name, v, `an integer between ${min} and ${max}`);
      return n;
    },
    /** A boolean written as true/false/1/0/yes/no. */
    bool(name: string, fallback: boolean): boolean {
      const v = raw(name);
      if (v === undefined) return fallback;
      if (/^(true|1|yes)$/i.test(v)) return true;
      if (/^(false|0|no)$/i.test(v)) return false;
      throw new ConfigError(name, v, 'true or false');
    },
    /** One of a closed list of values. */
    oneOf<T extends string>(name: string, values: readonly T[], fallback: T): T {
      const v = raw(name);
      if (v === undefined) return fallback;
      if (!(values as readonly string[]).includes(v)) throw new ConfigError(name, v, `one of ${values.join(', ')}`);
      return v as T;
    },
    /** A URL with one of the given protocols. */
    url(name: string, protocols: string[], fallback?: string): string | undefined {
      const v = raw(name) ?? fallback;
      if (v === undefined) return undefined;
      let u: URL;
      try {
        u = new URL(v);
      } catch {
        throw new ConfigError(name, v, `a URL (${protocols.join(', ')})`);
      }
      if (!protocols.includes(u.protocol.replace(/:$/, ''))) throw new ConfigError(name, v, `a URL (${protocols.join(', ')})`);
      return v;
    },
  };
}

/** Default `lock_timeout` of the services' database sessions, ms (README "Configuration", `DATABASE_LOCK_TIMEOUT_MS`). */
export const DEFAULT_LOCK_TIMEOUT_MS = 3_000;
/** Default `statement_timeout` of the services' database sessions, ms (`DATABASE_STATEMENT_TIMEOUT_MS`). */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
/** Default longest wait for a pooled database connection, ms (`DATABASE_CONNECT_TIMEOUT_MS`). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/** Default longest life of a pooled database session, s (`DATABASE_POOL_MAX_LIFETIME_SECONDS`). */
export const DEFAULT_POOL_MAX_LIFETIME_SECONDS = 1_800;

/** pino's levels, the values `LOG_LEVEL` takes. */
/** Deployment environments (`APP_ENV`), as the ordering spec's `DevEnvironment.environment` states them. */
export type AppEnvironment = components['schemas']['DevEnvironment']['environment'];
/** Every {@link AppEnvironment}, for reading `APP_ENV` in either service. */
const APP_ENVIRONMENTS = enumValues<AppEnvironment>({ development: true, test: true, staging: true, production: true });

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Settings every service process reads besides its own configuration (README "Configuration"). */
export interface ProcessConfig {
  /** `LOG_LEVEL`: pino level (default `info`). */
  logLevel: (typeof LOG_LEVELS)[number];
  /** `LOG_FORMAT`: `pretty` (one readable line per entry, never in production) or `json` (default); logging.ts `logFormat`. */
  logFormat: 'json' | 'pretty';
  /** `HTTP_LOG`: one log line per completed request (default true). */
  httpLog: boolean;
  /** `SHUTDOWN_ACCEPT_MS`: longest time a stop keeps accepting connections, ms (default 1000, 0–60,000). */
  shutdownAcceptMs: number;
  /** `HTTP_KEEP_ALIVE_TIMEOUT_MS`: how long an idle keep-alive connection stays open, ms (default 72,000, announced as `Keep-Alive: timeout=72`). */
  httpKeepAliveTimeoutMs: number;
  /** `HTTP_BODY_IDLE_TIMEOUT_MS`: longest pause while a request body arrives, ms (default 15,000); beyond it 408. */
  httpBodyIdleTimeoutMs: number;
  /** `HTTP_BODY_MIN_BYTES_PER_SECOND`: slowest average a body may arrive at (default 1000); the total bound of a body is the idle timeout plus its size at this rate. */
  httpBodyMinBytesPerSecond: number;
  /** `DATABASE_LOCK_TIMEOUT_MS`: `lock_timeout` of the pooled sessions, ms (0 = none; default 3000, at most 600,000). */
  databaseLockTimeoutMs: number;
  /** `DATABASE_STATEMENT_TIMEOUT_MS`: `statement_timeout` of the pooled sessions, ms (0 = none; default 30,000, at most 3,600,000). */
  databaseStatementTimeoutMs: number;
  /** `DATABASE_POOL_MAX_LIFETIME_SECONDS`: longest life of a pooled session, s (0 = unbounded; default 1800, at most 86,400). */
  databasePoolMaxLifetimeSeconds: number;
  /** `DATABASE_CONNECT_TIMEOUT_MS`: longest wait of a request for a pooled connection, ms (default 5000, 100–600,000); beyond it 503. */
  databaseConnectTimeoutMs: number;
  /** `GIT_COMMIT`: the build's commit, shown by the version operations (set by the image build). */
  gitCommit: string | undefined;
  /** `BUILD_TIME`: when the build was made (an ISO 8601 date-time), shown with the commit. */
  buildTime: string | undefined;
}

/**
 * Reads and checks the process-wide settings; each service calls it with its own configuration at start, so a
 * bad value stops it there with a {@link ConfigError} naming the variable. Throws ConfigError.
 */
export function loadProcessConfig(env: Env = process.env): ProcessConfig {
  const e = envReader(env);
  const buildTime = e.string('BUILD_TIME');
  if (buildTime !== undefined && Number.isNaN(Date.parse(buildTime)))
    throw new ConfigError('BUILD_TIME', buildTime, 'an ISO 8601 date-time such as 2026-01-31T12:00:00Z');
  return {
    logLevel: e.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    logFormat: e.oneOf('LOG_FORMAT', ['json', 'pretty'] as const, 'json'),
    httpLog: e.bool('HTTP_LOG', true),
    shutdownAcceptMs: e.int('SHUTDOWN_ACCEPT_MS', 1_000, 0, 60_000),
    httpKeepAliveTimeoutMs: e.int('HTTP_KEEP_ALIVE_TIMEOUT_MS', 72_000, 1_000, 600_000),
    httpBodyIdleTimeoutMs: e.int('HTTP_BODY_IDLE_TIMEOUT_MS', 15_000, 100, 600_000),
    httpBodyMinBytesPerSecond: e.int('HTTP_BODY_MIN_BYTES_PER_SECOND', 1_000, 1, 100_000_000),
    databaseLockTimeoutMs: e.int('DATABASE_LOCK_TIMEOUT_MS', DEFAULT_LOCK_TIMEOUT_MS, 0, 600_000),
    databaseStatementTimeoutMs: e.int('DATABASE_STATEMENT_TIMEOUT_MS', DEFAULT_STATEMENT_TIMEOUT_MS, 0, 3_600_000),
    databasePoolMaxLifetimeSeconds: e.int('DATABASE_POOL_MAX_LIFETIME_SECONDS', DEFAULT_POOL_MAX_LIFETIME_SECONDS, 0, 86_400),
    databaseConnectTimeoutMs: e.int('DATABASE_CONNECT_TIMEOUT_MS', DEFAULT_CONNECT_TIMEOUT_MS, 100, 600_000),
    gitCommit: e.string('GIT_COMMIT'),
    buildTime,
  };
}

/** A URL with its password replaced by `***`, for messages. */
export function withoutPassword(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}

/**
 * The start-up failure "this variable points there and this went wrong", one line: e.g. `DATABASE_URL
 * (postgres://app:***@db:5432/app): cannot reach it: connect ECONNREFUSED 10.0.0.5:5432`. `variable` is the
 * variable the address came from; the password of `url` is masked. Used by the servers when their first
 * use of a configured address fails (README "Configuration").
 */
export function unreachableAt(variable: string, url: string, err: unknown): Error {
  const e = err as { message?: string; code?: string; errors?: { message?: string }[] };
  // AggregateError (both IPv4 and IPv6 refused) has an empty message and the causes inside.
  const reason = e?.message || e?.errors?.map((x) => x.message).join('; ') || e?.code || String(err);
  return new ConfigError(variable, withoutPassword(url), 'an address that answers', `cannot reach it: ${reason}`);
}

/** The variable a service's database URL came from: its own (`<SERVICE>_DATABASE_URL`) when set, else `DATABASE_URL`. */
export function databaseUrlVariable(serviceVariable: string, env: Env = process.env): string {
  return env[serviceVariable]?.trim() ? serviceVariable : 'DATABASE_URL';
}

/**
 * `HOST` checked: an IPv4 or IPv6 address, or a host name (letters, digits, dots, hyphens). Throws a
 * {@link ConfigError} naming `name`, so a mistyped address is not first noticed in an address derived from it.
 */
export function checkHost(name: string, value: string): string {
  const ok = /^[\d.]+$/.test(value)
    ? isIP(value) === 4
    : value.includes(':')
      ? isIP(value) === 6
      : /^[a-z\d]([a-z\d-]*[a-z\d])?(\.[a-z\d]([a-z\d-]*[a-z\d])?)*$/i.test(value);
  if (!ok) throw new ConfigError(name, value, 'an IP address or a host name');
  return value;
}

/** The names Express (proxy-addr) accepts for address ranges in `trust proxy`. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * `TRUSTED_PROXIES` (comma list) as Express's `trust proxy` takes it: addresses, `address/prefix` subnets and
 * the names loopback, linklocal, uniquelocal. Throws a {@link ConfigError} naming the variable on any other entry.
 */
export function parseTrustedProxies(value: string | undefined, name = 'TRUSTED_PROXIES'): string[] {
  const entries = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const [address, prefix, ...rest] = entry.split('/');
    const family = isIP(address);
    const prefixOk = prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32)) || (family === 4 && isIP(prefix) === 4);
    if (!(PROXY_RANGE_NAMES.includes(entry) || (family !== 0 && prefixOk && rest.length === 0)))
      throw new ConfigError(name, value ?? '', 'a comma list of IP addresses, address/prefix subnets, loopback, linklocal or uniquelocal');
  }
  return entries;
}

/** A comma list of http(s) URLs (webhook subscriptions); throws a {@link ConfigError} naming `name` on any other entry. */
export function parseUrlList(name: string, value: string | undefined): string[] {
  const entries = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const entry of entries) {
    if (!URL.canParse(entry) || !['http:', 'https:'].includes(new URL(entry).protocol))
      throw new ConfigError(name, value ?? '', 'a comma list of http or https URLs');
  }
  return entries;
}
