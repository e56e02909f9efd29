/**
 * The timing service's composition root (docs/architecture.md "Composition root of timing"): every stateful
 * object of one app is built here, once, and handed down — the punch service with its read caches and
 * notifier, the event cache, the live hub and the stream fan-out, the backlog gate, the metrics, the read
 * limiters, the web bundles — together with the app's one loaded spec. Handlers, the fast lane, the LISTEN
 * session and the demo loader receive these objects; none builds or looks one up on its own, and no module
 * keeps a registry keyed by a pool, a Kysely instance or a deps object. Two compositions in one process share
 * nothing but the database they are given (and what the caller passes in, e.g. one Redis for the limits).
 *
 * `server.ts`, `createApp` (app.ts) and the tests all compose through {@link composeTiming}.
 */
import type { RequestHandler } from 'express';
import type pg from 'pg';
import type { Logger } from 'pino';
import { createMetrics, loadSpec, type AppMetrics, type Database, type MetricsAccess, type OpenApiDocument } from '@sports-timing/shared';
import type { DB } from './db/schema';
import { DEFAULT_QUOTAS, type TimingQuotas } from './config';
import { EventCache } from './events/event-cache';
import type { EventDeps } from './events/events.service';
import type { HandlerDeps } from './http/deps';
import { anonymousReadBudgets, keyReadLimits, type ReadRateLimits } from './http/read-limits';
import { WebBundles } from './http/web-assets';
import { StreamFanout } from './live/fanout';
import { LiveHub, type LiveHubOptions } from './live/hub';
import { SSE_HEARTBEAT_MS } from './live/live.service';
import { DEFAULT_SEND_BOUND, type SendBound } from './live/send-bound';
import { registerTimingMetrics } from './metrics';
import { BacklogGate } from './punches/backlog-gate';
import { createPunchService } from './punches/punches.service';
import { punchLimits, type TimingLimits } from './punches/punch-spec';
import { modemLimits } from './modems/modem-spec';
import { visibilityWaitReader, type VisibilityWaitReader } from './punches/visibility-wait';
import { KeyUses } from './users/key-uses';
import { KeyOwnerMemo } from './users/key-owner-memo';
import { SPEC_FILE } from './version';

/** What one timing app needs from the outside (configuration values, the database, the logger). */
export interface TimingDeps {
  database: Database<DB>;
  /** Pool on a streaming replica for whole punch downloads (`TIMING_READ_DATABASE_URL`; punches.service.ts `readPunches`). */
  historyPool?: pg.Pool;
  logger: Logger;
  /**
   * The timing spec the app serves (request validation, the fast lane's rules, CSV upload rules, versions);
   * default specs/timing.yaml, loaded once by {@link composeTiming}.
   */
  spec?: OpenApiDocument;
  /** Validate responses against the spec (tests/CI). */
  validateResponses?: boolean;
  /**
   * Bounds of the app's live hub (`TIMING_MAX_LIVE_CONNECTIONS`, `TIMING_MAX_LIVE_CONNECTIONS_PER_CLIENT`) and
   * its waiters' safety re-read period (ms; tests). The hub is fed by the LISTEN session started on the
   * composition (live/listener.ts); without one, live requests only re-read every `safetyPollMs`.
   */
  liveLimits?: Omit<LiveHubOptions, 'pool' | 'logger'>;
  /**
   * Serve plain successful punch reads and uploads outside the Express pipeline (http/punches.fast-lane.ts);
   * default on. Off (`TIMING_FAST_LANE=off`; in tests, so that response validation sees those answers too)
   * every request takes the pipeline.
   */
  fastLane?: boolean;
  /** Bound of the app's cache of shared punch read answers per pool (bytes; punches/read-cache.ts); default 64 MiB, 0 = off. */
  readCacheBytes?: number;
  /** `max-age` (seconds) of public punch reads (`TIMING_PUNCH_MAX_AGE_SECONDS`, http/read-caching.ts); default 1. */
  punchMaxAgeSeconds?: number;
  /** Lifetime of the app's cached events in ms (events/event-cache.ts; tests); default 5 s. */
  eventCacheTtlMs?: number;
  /** Keep-alive interval of punch streams in ms (tests); default 15 s. */
  sseHeartbeatMs?: number;
  /** Most time one punch stream stays open in ms (`TIMING_STREAM_MAX_SECONDS`); default one hour. */
  streamMaxMs?: number;
  /** Backlog pages read at once (`TIMING_MAX_BACKLOG_READS`; punches/backlog-gate.ts); default 4. */
  maxBacklogReads?: number;
  /** Send timeout of punch streams in ms (`TIMING_STREAM_SEND_TIMEOUT_MS`; live/send-bound.ts); default 30 s. */
  streamSendTimeoutMs?: number;
  /** Unsent bytes a stream may hold before its send timeout runs (tests); default 1 MiB. */
  streamMaxBufferedBytes?: number;
  /** Read limits per key and anonymous read budgets (http/read-limits.ts); absent or 0 → no limit. */
  rateLimit?: ReadRateLimits;
  /** Origins allowed for the non-public operations (`CORS_ORIGINS`); public reads answer any origin. */
  corsOrigins?: string[];
  /** Express `trust proxy` list (`TRUSTED_PROXIES`): `req.ip` is then the client named by those proxies. */
  trustedProxies?: string[];
  /** Per-user quotas (config.ts); default {@link DEFAULT_QUOTAS}. */
  quotas?: TimingQuotas;
  /** Who may scrape `/metrics` (`METRICS_TOKEN`, `APP_ENV=production`); open when absent. */
  metricsAccess?: MetricsAccess;
  /**
   * The instance's record of key uses (`ApiKey.lastUsedAt`, users/key-uses.ts), when several apps of one
   * process share it (tests); without one the composition makes its own. Its owner awaits `settled()` before
   * closing the pool (server.ts).
   */
  keyUses?: KeyUses;
}

/**
 * One timing app's objects (see the module comment): the services the handlers get ({@link HandlerDeps}) and
 * what the app, the listener and the start-up tasks use beside them.
 */
export interface TimingComposition extends HandlerDeps {
  /** What it was composed from. */
  readonly deps: TimingDeps;
  /** The app's timing spec, loaded once. */
  readonly spec: OpenApiDocument;
  /** The limits the app enforces, from `spec` (punches/punch-spec.ts, modems/modem-spec.ts). */
  readonly limits: TimingLimits;
  /** The app's cache of events, also invalidated by its LISTEN session (live/listener.ts). */
  readonly eventCache: EventCache;
  /** The app's Prometheus registry and request metrics. */
  readonly metrics: AppMetrics;
  /** Shared feeds of anonymous punch streams. */
  readonly fanout: StreamFanout;
  /** Pacing of backlog pages (streams, multi-page ROC answers). */
  readonly backlog: BacklogGate;
  /** Send bound of punch streams. */
  readonly bound: SendBound;
  /** Readings of what holds the visible punch head back (metrics, `/readyz`). */
  readonly visibilityWait: VisibilityWaitReader;
  /** The read limiters (their counters). */
  readonly limiters: { readonly keyReads: RequestHandler; readonly anonymousReads: RequestHandler };
  /** The live page's and console's script bundles. */
  readonly bundles: WebBundles;
  /** The record of key uses (`ApiKey.lastUsedAt`): every key the app authenticates counts as used. */
  readonly keyUses: KeyUses;
  /** The upload fast lane's memo of keys found valid (users/key-owner-memo.ts). */
  readonly keyOwners: KeyOwnerMemo;
}

/** Builds every stateful object of one timing app from `deps`, once (see the module comment). */
export function composeTiming(deps: TimingDeps): TimingComposition {
  const spec = deps.spec ?? loadSpec(SPEC_FILE);
  const { database, logger } = deps;
  const limits: TimingLimits = { ...punchLimits(spec), ...modemLimits(spec) };
  const quotas = deps.quotas ?? DEFAULT_QUOTAS;
  const metrics = createMetrics('timing', database.pool, deps.metricsAccess);
  const live = new LiveHub({ ...deps.liveLimits, pool: database.pool, logger });
  const backlog = new BacklogGate(deps.maxBacklogReads);
  const bound: SendBound = {
    maxBufferedBytes: deps.streamMaxBufferedBytes ?? DEFAULT_SEND_BOUND.maxBufferedBytes,
    timeoutMs: deps.streamSendTimeoutMs ?? DEFAULT_SEND_BOUND.timeoutMs,
  };
  const fanout = new StreamFanout({ hub: live, backlog, bound, heartbeatMs: deps.sseHeartbeatMs ?? SSE_HEARTBEAT_MS, logger });
  const visibilityWait = visibilityWaitReader(database.pool);
  const timingMetrics = registerTimingMetrics(metrics, live, fanout, backlog, () => visibilityWait.read());
  const eventCache = new EventCache(database.db, deps.eventCacheTtlMs);
  const events: EventDeps = { db: database.db, cache: eventCache };
  const punches = createPunchService({
    db: database.db,
    pool: database.pool,
    logger,
    historyPool: deps.historyPool,
    readCacheBytes: deps.readCacheBytes,
    dailyPunchQuota: quotas.punchesPerDay,
    backlog,
    events: eventCache,
    limits,
  });
  return {
    deps,
    spec,
    limits,
    database,
    logger,
    quotas,
    punchMaxAgeSeconds: deps.punchMaxAgeSeconds,
    punches,
    events,
    eventCache,
    live,
    timingMetrics,
    metrics,
    fanout,
    backlog,
    bound,
    visibilityWait,
    limiters: { keyReads: keyReadLimits(deps.rateLimit, logger), anonymousReads: anonymousReadBudgets(deps.rateLimit, logger) },
    bundles: new WebBundles(),
    keyUses: deps.keyUses ?? new KeyUses({ db: database.db, logger }),
    keyOwners: new KeyOwnerMemo(),
  };
}
