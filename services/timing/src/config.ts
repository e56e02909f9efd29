/**
 * Timing service configuration from the environment (docs/decisions.md §3). Throws ConfigError on bad values.
 */
import path from 'node:path';
import {
  appEnvironmentFromEnv,
  checkHost,
  ConfigError,
  envReader,
  isDeployment,
  loadProcessConfig,
  parseCorsOrigins,
  parseTrustedProxies,
} from '@sports-timing/shared';
import { KEY_FORMAT, KEY_FORMAT_TEXT } from './auth/keys';

/** Default of `TIMING_MAX_BACKLOG_READS`: backlog pages read at once per instance (punches/backlog-gate.ts). */
export const DEFAULT_BACKLOG_READS = 4;

/** Default of `TIMING_STREAM_SEND_TIMEOUT_MS` in ms (live/send-bound.ts). */
export const DEFAULT_SEND_TIMEOUT_MS = 30_000;

/**
 * What one (non-admin) user may hold or upload (docs/decisions.md §5 "Quotas"): beyond, the creating operation
 * answers 403 (events, keys) or 429 (punches per day) naming the quota, and nothing is created. Admins are not
 * limited.
 */
export interface TimingQuotas {
  /** Events a user owns (`TIMING_QUOTA_EVENTS_PER_USER`, default 100). */
  eventsPerUser: number;
  /** Active (unrevoked) API keys of a user (`TIMING_QUOTA_KEYS_PER_USER`, default 20). */
  keysPerUser: number;
  /** Punches a user uploads per UTC day, duplicates not counted (`TIMING_QUOTA_PUNCHES_PER_DAY`, default 500,000; 429 beyond). */
  punchesPerDay: number;
}

/** The quotas when the environment does not set them. */
export const DEFAULT_QUOTAS: TimingQuotas = { eventsPerUser: 100, keysPerUser: 20, punchesPerDay: 500_000 };

/** Resolved configuration of the timing service. */
export interface TimingConfig {
  /** Per-user quotas. */
  quotas: TimingQuotas;
  port: number;
  host: string;
  /** postgres:// URL; undefined → embedded PostgreSQL under `dataDir`. */
  databaseUrl: string | undefined;
  /**
   * postgres:// URL of a streaming replica for whole punch downloads (`TIMING_READ_DATABASE_URL`); undefined →
   * every read on the primary. Follow-up polls and live reads always use the primary (punches.service.ts `readPunches`).
   */
  readDatabaseUrl: string | undefined;
  /** Working data directory (embedded database, dev keys). */
  dataDir: string;
  /** Port of the embedded PostgreSQL started when no database URL is set (`EMBEDDED_PG_PORT`, default 5441). */
  embeddedPgPort: number;
  /**
   * API key for the bootstrap `admin` user on a fresh database; generated in development when unset. A
   * value not in the key format (`tk_` + at least 43 base64url characters) is refused at start.
   */
  bootstrapApiKey: string | undefined;
  /** Load the demo data (the real VeNotte 2020 event) on start (`DEMO_DATA`; default on, off when `APP_ENV=production`). */
  demoData: boolean;
  /** `APP_ENV=production` (README "What production changes"); other values (development, test, staging) are not. */
  production: boolean;
  /**
   * `APP_ENV=staging` or `production`: no development default is taken (no generated bootstrap admin key;
   * README "What production changes").
   */
  deployment: boolean;
  /** Bearer token `/metrics` requires (`METRICS_TOKEN`); without one, `/metrics` is open, and off in production. */
  metricsToken: string | undefined;
  /** Most held long-polls plus open punch streams per instance (503 beyond); `TIMING_MAX_LIVE_CONNECTIONS`. */
  maxLiveConnections: number;
  /** Most of them one client (key's user, else address) may hold (429 beyond); `TIMING_MAX_LIVE_CONNECTIONS_PER_CLIENT`. */
  maxLiveConnectionsPerClient: number;
  /**
   * Most seconds one punch stream stays open (`TIMING_STREAM_MAX_SECONDS`, default 3600); the client reconnects
   * with `Last-Event-ID` and its key is checked anew (spec `getPunchStream`).
   */
  streamMaxSeconds: number;
  /** Express `trust proxy`: proxies whose `X-Forwarded-For` names the client (`TRUSTED_PROXIES`, comma list); none by default. */
  trustedProxies: string[];
  /** Redis URL for rate-limit counters shared by all instances (`REDIS_URL`); in memory when unset. */
  redisUrl: string | undefined;
  /** Prefix of rate-limit counter keys (`RATE_LIMIT_KEY_PREFIX`, default `timing`). */
  rateLimitKeyPrefix: string;
  /** Reads with a key per key and minute (`TIMING_RATE_LIMIT_KEY_READS_PER_MINUTE`); 0 (default) = no limit. */
  rateLimitKeyReadsPerMinute: number;
  /** Anonymous ROC reads per client address and minute (`TIMING_ANONYMOUS_ROC_READS_PER_MINUTE`; production 120, else 0 = off). */
  anonymousRocReadsPerMinute: number;
  /** Anonymous whole downloads per client address and minute (`TIMING_ANONYMOUS_DOWNLOADS_PER_MINUTE`; production 60, else 0 = off). */
  anonymousDownloadsPerMinute: number;
  /** Browser origins allowed to call the non-public operations (`CORS_ORIGINS`, comma list); public reads answer any origin. */
  corsOrigins: string[];
  /**
   * Serve plain punch reads and uploads in the fast lane before Express (`TIMING_FAST_LANE`, `on` or `off`,
   * default on); off sends every request through the Express pipeline (docs/architecture.md §1).
   */
  fastLane: boolean;
  /**
   * Bound of the per-instance cache of shared punch read answers in bytes (`TIMING_READ_CACHE_MB`, MiB, default
   * 64; 0 turns sharing off: every read runs its own statement). punches/read-cache.ts.
   */
  readCacheBytes: number;
  /**
   * `max-age` (seconds) of public punch reads (`TIMING_PUNCH_MAX_AGE_SECONDS`, default 1, 0–3600): how long a
   * shared cache (nginx, infra/README.md) may answer them before revalidating. http/read-caching.ts.
   */
  punchMaxAgeSeconds: number;
  /** Backlog pages read at once per instance (`TIMING_MAX_BACKLOG_READS`, default 4); punches/backlog-gate.ts. */
  maxBacklogReads: number;
  /**
   * Send timeout of punch streams in ms (`TIMING_STREAM_SEND_TIMEOUT_MS`, default 30,000): a stream whose unsent
   * bytes stay above 1 MiB for longer is closed (live/send-bound.ts).
   */
  streamSendTimeoutMs: number;
}

/** Reads the configuration; `env` defaults to `process.env`. Throws ConfigError on bad values. */
export function loadTimingConfig(env: Record<string, string | undefined> = process.env): TimingConfig {
  const e = envReader(env);
  // The process-wide settings (LOG_LEVEL, HTTP_LOG, SHUTDOWN_ACCEPT_MS, GIT_COMMIT, BUILD_TIME) are checked here too,
  // so that a bad one stops the service at start with its name.
  loadProcessConfig(env);
  const environment = appEnvironmentFromEnv(env);
  const production = environment === 'production';
  const bootstrapApiKey = e.string('TIMING_BOOTSTRAP_API_KEY');
  // The value is a secret: the message names the variable and the format, never the value.
  if (bootstrapApiKey !== undefined && !KEY_FORMAT.test(bootstrapApiKey)) throw new ConfigError('TIMING_BOOTSTRAP_API_KEY', '***', KEY_FORMAT_TEXT);
  return {
    port: e.int('TIMING_PORT', 8081, 0, 65535),
    host: checkHost('HOST', e.string('HOST', '127.0.0.1')!),
    databaseUrl: e.url('TIMING_DATABASE_URL', ['postgres', 'postgresql']) ?? e.url('DATABASE_URL', ['postgres', 'postgresql']),
    readDatabaseUrl: e.url('TIMING_READ_DATABASE_URL', ['postgres', 'postgresql']),
    dataDir: path.resolve(e.string('DATA_DIR', path.join(__dirname, '../../../.data'))!),
    embeddedPgPort: e.int('EMBEDDED_PG_PORT', 5441, 1, 65535),
    bootstrapApiKey,
    demoData: e.bool('DEMO_DATA', !production),
    production,
    deployment: isDeployment(environment),
    metricsToken: e.string('METRICS_TOKEN'),
    maxLiveConnections: e.int('TIMING_MAX_LIVE_CONNECTIONS', 1000, 1, 1_000_000),
    maxLiveConnectionsPerClient: e.int('TIMING_MAX_LIVE_CONNECTIONS_PER_CLIENT', 100, 1, 1_000_000),
    streamMaxSeconds: e.int('TIMING_STREAM_MAX_SECONDS', 3600, 1, 86_400),
    trustedProxies: parseTrustedProxies(e.string('TRUSTED_PROXIES')),
    redisUrl: e.url('REDIS_URL', ['redis', 'rediss']),
    rateLimitKeyPrefix: e.string('RATE_LIMIT_KEY_PREFIX', 'timing')!,
    rateLimitKeyReadsPerMinute: e.int('TIMING_RATE_LIMIT_KEY_READS_PER_MINUTE', 0, 0, 10_000_000),
    anonymousRocReadsPerMinute: e.int('TIMING_ANONYMOUS_ROC_READS_PER_MINUTE', production ? 120 : 0, 0, 10_000_000),
    anonymousDownloadsPerMinute: e.int('TIMING_ANONYMOUS_DOWNLOADS_PER_MINUTE', production ? 60 : 0, 0, 10_000_000),
    corsOrigins: parseCorsOrigins(e.string('CORS_ORIGINS')),
    fastLane: e.oneOf('TIMING_FAST_LANE', ['on', 'off'], 'on') === 'on',
    readCacheBytes: e.int('TIMING_READ_CACHE_MB', 64, 0, 65_536) * 1024 * 1024,
    punchMaxAgeSeconds: e.int('TIMING_PUNCH_MAX_AGE_SECONDS', 1, 0, 3600),
    maxBacklogReads: e.int('TIMING_MAX_BACKLOG_READS', DEFAULT_BACKLOG_READS, 1, 1000),
    streamSendTimeoutMs: e.int('TIMING_STREAM_SEND_TIMEOUT_MS', DEFAULT_SEND_TIMEOUT_MS, 100, 3_600_000),
    quotas: {
      eventsPerUser: e.int('TIMING_QUOTA_EVENTS_PER_USER', DEFAULT_QUOTAS.eventsPerUser, 1, 1_000_000),
      keysPerUser: e.int('TIMING_QUOTA_KEYS_PER_USER', DEFAULT_QUOTAS.keysPerUser, 1, 1_000_000),
      punchesPerDay: e.int('TIMING_QUOTA_PUNCHES_PER_DAY', DEFAULT_QUOTAS.punchesPerDay, 1, 1_000_000_000),
    },
  };
}
