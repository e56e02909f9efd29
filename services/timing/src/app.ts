/**
 * The timing service as an Express app (no listen): gzip responses, spec-driven access control (`x-roles`,
 * header `apikey`), body parsing, spec validation, handlers by operationId, problem+json errors.
 * `server.ts` wires configuration, the database and the listener.
 */
import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import type { Logger } from 'pino';
import {
  type MetricsAccess,
  corsFromSpec,
  createMetrics,
  apiDocs,
  dispatch,
  principalOf,
  rateLimits,
  clientIp,
  enforceRoles,
  healthz,
  httpLogger,
  loadSpec,
  problemErrorHandler,
  readyz,
  runBeforeExpress,
  validator,
  type Database,
} from '@sports-timing/shared';
import type { DB } from './db/schema';
import type { Principal } from './auth/principal';
import { bodyParsers, closeUnreadBodies, requireSupportedEncoding } from './http/body';
import { gzipResponses } from './http/compression';
import { eventHandlers } from './http/events.handlers';
import { liveHandlers } from './http/live.handlers';
import { consolePage } from './http/console-page';
import { livePage } from './http/live-page';
import { WebBundles } from './http/web-assets';
import { LiveHub } from './live/hub';
import { StreamFanout } from './live/fanout';
import { SSE_HEARTBEAT_MS } from './live/live.service';
import { DEFAULT_SEND_BOUND } from './live/send-bound';
import { BacklogGate } from './punches/backlog-gate';
import { registerTimingMetrics } from './metrics';
import { visibilityWaitReader } from './punches/visibility-wait';
import { punchHandlers } from './http/punches.handlers';
import { punchFastLane } from './http/punches.fast-lane';
import { rocFileNames, rocPathKey } from './http/roc-paths';
import { rocHandlers } from './http/roc.handlers';
import { userHandlers } from './http/users.handlers';
import { versionHandlers } from './http/versions.handlers';
import { VALIDATED_RESPONSES } from './http/respond';
import { AUTH_SCHEME, authenticateKey, missingKeyDetail } from './users/users.service';
import { KeyUses } from './users/key-uses';
import { SPEC_FILE, versionRecord } from './version';
import { DEFAULT_QUOTAS, type TimingQuotas } from './config';

/** What the app needs from the outside. */
export interface TimingDeps {
  database: Database<DB>;
  /** Pool on a streaming replica for whole punch downloads (`TIMING_READ_DATABASE_URL`; punches.service.ts `readPunches`). */
  historyPool?: pg.Pool;
  logger: Logger;
  /** Validate responses against the spec (tests/CI). */
  validateResponses?: boolean;
  /**
   * Hub of long-polls and punch streams, fed by the instance's LISTEN session (server.ts). Without one the
   * app makes its own without a listener: live requests then only re-read every `safetyPollMs`.
   */
  live?: LiveHub;
  /**
   * Serve plain successful punch reads and uploads outside the Express pipeline (http/punches.fast-lane.ts);
   * default on. Off (`TIMING_FAST_LANE=off`; in tests, so that response validation sees those answers too)
   * every request takes the pipeline.
   */
  fastLane?: boolean;
  /** Bound of the cache of shared punch read answers per pool (bytes; punches/read-cache.ts); default 64 MiB, 0 = off. */
  readCacheBytes?: number;
  /** `max-age` (seconds) of public punch reads (`TIMING_PUNCH_MAX_AGE_SECONDS`, http/read-caching.ts); default 1. */
  punchMaxAgeSeconds?: number;
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
  /**
   * Per-key limit of key-bearing punch reads (`getPunches`, `getPunchStream`) per minute, and the per-address
   * budgets of anonymous ROC reads and whole downloads per minute ({@link anonymousReadBudgets}), counted in
   * `redis` when given (shared by all instances) else in memory; absent or 0 → no limit.
   */
  rateLimit?: { keyReadsPerMinute: number; anonymousRocReadsPerMinute?: number; anonymousDownloadsPerMinute?: number; redis?: Redis; prefix?: string };
  /** Origins allowed for the non-public operations (`CORS_ORIGINS`); public reads answer any origin. */
  corsOrigins?: string[];
  /** Express `trust proxy` list (`TRUSTED_PROXIES`): `req.ip` is then the client named by those proxies. */
  trustedProxies?: string[];
  /** Per-user quotas (config.ts); default {@link DEFAULT_QUOTAS}. */
  quotas?: TimingQuotas;
  /** Who may scrape `/metrics` (`METRICS_TOKEN`, `APP_ENV=production`); open when absent. */
  metricsAccess?: MetricsAccess;
  /**
   * The instance's record of key uses (`ApiKey.lastUsedAt`, users/key-uses.ts); its owner awaits
   * `settled()` before closing the pool (server.ts). Without one the app makes its own.
   */
  keyUses?: KeyUses;
}

/** Rate limit of key-bearing punch reads, charged to the API key (anonymous public reads are not limited). */
function keyReadLimits(deps: TimingDeps): RequestHandler {
  const points = deps.rateLimit?.keyReadsPerMinute ?? 0;
  const key = (_req: Request, res: Response) => {
    const p = principalOf<Principal>(res);
    return p && p.keyId > 0 ? `key:${p.keyId}` : undefined;
  };
  const limit = (operationId: string) => ({ operationId, points, durationSeconds: 60, key, message: 'Too many reads with this key; retry later.' });
  return rateLimits([limit('getPunches'), limit('getPunchStream'), limit('getPublicEventPunches')], {
    redis: deps.rateLimit?.redis,
    prefix: deps.rateLimit?.prefix ?? 'timing',
    logger: deps.logger,
  });
}

/** Whether a read starts from the beginning: no `afterId` (or 0) and, for streams, no `Last-Event-ID`. */
function isWholeDownload(req: Request): boolean {
  const afterId = req.query.afterId;
  return (afterId === undefined || (typeof afterId === 'string' && /^0*$/.test(afterId))) && !req.get('Last-Event-ID');
}

/**
 * Budgets of anonymous reads that cost real work, charged to the client's address (`req.ip`, which honours
 * `TRUSTED_PROXIES`): ROC reads (`getRocPunches`, up to ten pages each) and whole downloads ({@link
 * isWholeDownload}) of `getPunches`, `getPublicEventPunches` and `getPunchStream`; timing spec "Limits". A
 * request with a key is charged to the key instead ({@link keyReadLimits}).
 */
function anonymousReadBudgets(deps: TimingDeps): RequestHandler {
  const anonymous = (res: Response) => principalOf<Principal>(res) === null;
  const roc = (req: Request, res: Response) => (anonymous(res) ? `ip:${clientIp(req)}` : undefined);
  const download = (req: Request, res: Response) => (anonymous(res) && isWholeDownload(req) ? `ip:${clientIp(req)}` : undefined);
  const points = deps.rateLimit?.anonymousDownloadsPerMinute ?? 0;
  const downloads = (operationId: string) => ({
    operationId,
    points,
    durationSeconds: 60,
    key: download,
    message: 'Too many whole downloads from this address; poll with afterId, or retry later.',
  });
  const limits = [
    {
      operationId: 'getRocPunches',
      points: deps.rateLimit?.anonymousRocReadsPerMinute ?? 0,
      durationSeconds: 60,
      key: roc,
      message: 'Too many ROC reads from this address; retry later.',
    },
    downloads('getPunches'),
    downloads('getPublicEventPunches'),
    downloads('getPunchStream'),
  ];
  return rateLimits(limits, { redis: deps.rateLimit?.redis, prefix: `${deps.rateLimit?.prefix ?? 'timing'}:anon`, logger: deps.logger });
}

/** Builds the app. */
export function createApp(deps: TimingDeps): Express {
  const spec = loadSpec(SPEC_FILE);
  const app = express();
  app.disable('x-powered-by');
  // Express's ETag hashes every body; punch reads carry their own, made from the visible head without hashing
  // a body (http/read-caching.ts, docs/decisions.md §7).
  app.set('etag', false);
  app.set('trust proxy', deps.trustedProxies?.length ? deps.trustedProxies : false);
  const metrics = createMetrics('timing', deps.database.pool, deps.metricsAccess);
  app.locals.metrics = metrics;
  app.locals[VALIDATED_RESPONSES] = deps.validateResponses === true;
  const live = deps.live ?? new LiveHub({ pool: deps.database.pool, logger: deps.logger });
  const keyUses = deps.keyUses ?? new KeyUses({ db: deps.database.db, logger: deps.logger });
  const visibilityWait = visibilityWaitReader(deps.database.pool);
  const backlog = new BacklogGate(deps.maxBacklogReads);
  const bound = {
    maxBufferedBytes: deps.streamMaxBufferedBytes ?? DEFAULT_SEND_BOUND.maxBufferedBytes,
    timeoutMs: deps.streamSendTimeoutMs ?? DEFAULT_SEND_BOUND.timeoutMs,
  };
  const fanout = new StreamFanout({ hub: live, backlog, bound, heartbeatMs: deps.sseHeartbeatMs ?? SSE_HEARTBEAT_MS, logger: deps.logger });
  const timingMetrics = registerTimingMetrics(metrics, live, fanout, backlog, () => visibilityWait.read());
  app.use((req, res, next) => {
    closeUnreadBodies(req, res);
    next();
  });
  app.use(httpLogger(deps.logger));
  app.use(metrics.middleware);
  app.use((_req, res, next) => {
    // receptionTimeUtc of uploaded punches: the moment the request arrived, not when its body was parsed.
    res.locals.receivedAtUtc ??= Date.now();
    next();
  });
  app.use(gzipResponses());
  app.use(corsFromSpec(spec, deps.corsOrigins ?? []));

  // An empty apikey header counts as none: result software sends the header even when no key is configured.
  // Without the header, the path parameter `key` of the ROC operations carries the key (clients that send no
  // headers, docs/roc.md); it is checked by exactly the same rule.
  const authenticate = async (req: Request): Promise<Principal | null> => {
    const header = req.headers.apikey;
    const key = (Array.isArray(header) ? header[0] : header)?.trim() || rocPathKey(req);
    return key ? authenticateKey(deps.database.db, key, keyUses) : null;
  };

  app.use(
    apiDocs(SPEC_FILE, spec, {
      service: 'timing',
      links: [
        { title: 'Events (the live page of each: /events/{id}/live)', href: '/api/rest/v1/events' },
        { title: 'Live page of the demo event', href: '/events/1/live' },
        { title: "Organiser's console (events, modems, keys)", href: '/console' },
        { title: 'Versions', href: '/api/rest/v1/public/versions' },
        { title: 'Health (liveness)', href: '/healthz' },
        { title: 'Readiness', href: '/readyz' },
        { title: 'Metrics (Prometheus)', href: '/metrics' },
      ],
    }),
  );
  const bundles = new WebBundles();
  app.use(livePage(bundles));
  app.use(consolePage(bundles));
  app.use(metrics.router);
  app.use(rocFileNames);
  app.use(
    validator(spec, {
      validateResponses: deps.validateResponses,
      beforeValidation: [
        enforceRoles(authenticate, AUTH_SCHEME, missingKeyDetail),
        keyReadLimits(deps),
        anonymousReadBudgets(deps),
        requireSupportedEncoding,
        bodyParsers(),
      ],
    }),
  );
  const quotas = deps.quotas ?? DEFAULT_QUOTAS;
  const handlerDeps = {
    database: deps.database,
    logger: deps.logger,
    historyPool: deps.historyPool,
    readCacheBytes: deps.readCacheBytes,
    punchMaxAgeSeconds: deps.punchMaxAgeSeconds,
    quotas,
    backlog,
  };
  app.use(
    dispatch({
      ...versionHandlers(versionRecord(spec)),
      ...punchHandlers(handlerDeps, live, timingMetrics, spec),
      ...rocHandlers(handlerDeps, timingMetrics),
      ...liveHandlers(handlerDeps, live, { heartbeatMs: deps.sseHeartbeatMs, maxLifetimeMs: deps.streamMaxMs, fanout, backlog, bound }),
      ...eventHandlers(handlerDeps),
      ...userHandlers(handlerDeps),
      getHealthz: healthz,
      getReadyz: readyz(deps.database.pool, () => {
        const recent = visibilityWait.recent();
        return Promise.resolve(recent ? { punchVisibility: recent } : {});
      }),
    }),
  );
  app.use(problemErrorHandler(deps.logger));
  if (deps.fastLane !== false) {
    const lane = punchFastLane({
      spec,
      punches: {
        db: deps.database.db,
        pool: deps.database.pool,
        logger: deps.logger,
        historyPool: deps.historyPool,
        readCacheBytes: deps.readCacheBytes,
        dailyPunchQuota: quotas.punchesPerDay,
      },
      metrics,
      timingMetrics,
      logger: deps.logger,
      keyUses,
      keyReadsLimited: (deps.rateLimit?.keyReadsPerMinute ?? 0) > 0,
      anonymousDownloadsLimited: (deps.rateLimit?.anonymousDownloadsPerMinute ?? 0) > 0,
      punchMaxAgeSeconds: deps.punchMaxAgeSeconds,
    });
    runBeforeExpress(app, lane);
  }
  return app;
}
