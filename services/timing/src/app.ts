/**
 * The timing service as an Express app (no listen): gzip responses, spec-driven access control (`x-roles`,
 * header `apikey`), body parsing, spec validation, handlers by operationId, problem+json errors, wired from
 * the objects of one composition (composition.ts). `server.ts` wires configuration, the database, the
 * composition and its listener.
 */
import express, { type Express, type Request } from 'express';
import {
  corsFromSpec,
  apiDocs,
  dispatch,
  enforceRoles,
  healthz,
  httpLogEnabled,
  httpLogger,
  problemErrorHandler,
  readyz,
  runBeforeExpress,
  validator,
} from '@sports-timing/shared';
import type { Principal } from './auth/principal';
import { bodyParsers, closeUnreadBodies, requireSupportedEncoding } from './http/body';
import { gzipResponses } from './http/compression';
import { eventHandlers } from './http/events.handlers';
import { liveHandlers } from './http/live.handlers';
import { consolePage } from './http/console-page';
import { livePage } from './http/live-page';
import { punchHandlers } from './http/punches.handlers';
import { punchFastLane } from './http/punches.fast-lane';
import { rocFileNames, rocPathKey } from './http/roc-paths';
import { rocHandlers } from './http/roc.handlers';
import { userHandlers } from './http/users.handlers';
import { versionHandlers } from './http/versions.handlers';
import { VALIDATED_RESPONSES } from './http/respond';
import { AUTH_SCHEME, authenticateKey, missingKeyDetail } from './users/users.service';
import { SPEC_FILE, versionRecord } from './version';
import { composeTiming, type TimingComposition, type TimingDeps } from './composition';

/**
 * Builds the app of a composition ({@link composeTiming}): given plain {@link TimingDeps}, it composes them
 * first (its own caches, hub and limiters); given a composition (server.ts, tests that start a LISTEN
 * session on it), it serves exactly that composition's objects.
 */
export function createApp(deps: TimingDeps): Express;
export function createApp(timing: TimingComposition): Express;
export function createApp(input: TimingDeps | TimingComposition): Express {
  const timing = isComposition(input) ? input : composeTiming(input);
  const { deps, spec, metrics, timingMetrics, visibilityWait } = timing;
  const app = express();
  app.disable('x-powered-by');
  // Express's ETag hashes every body; punch reads carry their own, made from the visible head without hashing
  // a body (http/read-caching.ts, docs/decisions.md §7).
  app.set('etag', false);
  app.set('trust proxy', deps.trustedProxies?.length ? deps.trustedProxies : false);
  app.locals.metrics = metrics;
  app.locals[VALIDATED_RESPONSES] = deps.validateResponses === true;
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
    return key ? authenticateKey(deps.database.db, key, timing.keyUses) : null;
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
  app.use(livePage(timing.bundles));
  app.use(consolePage(timing.bundles));
  app.use(metrics.router);
  app.use(rocFileNames);
  app.use(
    validator(spec, {
      validateResponses: deps.validateResponses,
      beforeValidation: [
        enforceRoles(authenticate, AUTH_SCHEME, missingKeyDetail),
        timing.limiters.keyReads,
        timing.limiters.anonymousReads,
        requireSupportedEncoding,
        bodyParsers(),
      ],
    }),
  );
  app.use(
    dispatch({
      ...versionHandlers(versionRecord(spec)),
      ...punchHandlers(timing, spec),
      ...rocHandlers(timing),
      ...liveHandlers(timing, {
        heartbeatMs: deps.sseHeartbeatMs,
        maxLifetimeMs: deps.streamMaxMs,
        fanout: timing.fanout,
        backlog: timing.backlog,
        bound: timing.bound,
      }),
      ...eventHandlers(timing),
      ...userHandlers(timing),
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
      punches: timing.punches,
      metrics,
      timingMetrics,
      logger: deps.logger,
      httpLog: httpLogEnabled(),
      keyUses: timing.keyUses,
      keyOwners: timing.keyOwners,
      keyReadsLimited: (deps.rateLimit?.keyReadsPerMinute ?? 0) > 0,
      anonymousDownloadsLimited: (deps.rateLimit?.anonymousDownloadsPerMinute ?? 0) > 0,
      anonymousRocReadsLimited: (deps.rateLimit?.anonymousRocReadsPerMinute ?? 0) > 0,
      punchMaxAgeSeconds: deps.punchMaxAgeSeconds,
    });
    runBeforeExpress(app, lane);
  }
  return app;
}

/** Whether `input` is a composition already (it carries the deps it was composed from). */
function isComposition(input: TimingDeps | TimingComposition): input is TimingComposition {
  return 'deps' in input;
}
