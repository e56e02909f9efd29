/**
 * The timing service as an Express app (no listen): gzip responses, spec-driven access control (`x-roles`,
 * header `apikey`), body parsing, spec validation, handlers by operationId, problem+json errors.
 * `server.ts` wires configuration, the database and the listener.
 */
import express, { type Express, type Request } from 'express';
import type { Logger } from 'pino';
import { apiDocs, dispatch, enforceRoles, healthz, httpLogger, loadSpec, problemErrorHandler, readyz, validator, type Database } from '@sports-timing/shared';
import type { DB } from './db/schema';
import type { Principal } from './auth/principal';
import { bodyParsers, requireSupportedEncoding } from './http/body';
import { gzipResponses } from './http/compression';
import { eventHandlers } from './http/events.handlers';
import { punchHandlers } from './http/punches.handlers';
import { userHandlers } from './http/users.handlers';
import { versionHandlers } from './http/versions.handlers';
import { AUTH_SCHEME, authenticateKey } from './users/users.service';
import { SPEC_FILE, versionRecord } from './version';

/** What the app needs from the outside. */
export interface TimingDeps {
  database: Database<DB>;
  logger: Logger;
  /** Validate responses against the spec (tests/CI). */
  validateResponses?: boolean;
}

/** Builds the app. */
export function createApp(deps: TimingDeps): Express {
  const spec = loadSpec(SPEC_FILE);
  const app = express();
  app.disable('x-powered-by');
  // Hashing every large punch page for an ETag costs more than it saves (DESIGN §7).
  app.set('etag', false);
  app.use(httpLogger(deps.logger));
  app.use((_req, res, next) => {
    // receptionTimeUtc of uploaded punches: the moment the request arrived, not when its body was parsed.
    res.locals.receivedAtUtc = Date.now();
    next();
  });
  app.use(gzipResponses());

  // An empty apikey header counts as none: result software sends the header even when no key is configured.
  const authenticate = async (req: Request): Promise<Principal | null> => {
    const header = req.headers.apikey;
    const key = (Array.isArray(header) ? header[0] : header)?.trim();
    return key ? authenticateKey(deps.database.db, key) : null;
  };

  app.use(apiDocs(SPEC_FILE, spec));
  app.use(
    validator(spec, {
      validateResponses: deps.validateResponses,
      beforeValidation: [enforceRoles(authenticate, AUTH_SCHEME), requireSupportedEncoding, bodyParsers()],
    }),
  );
  const handlerDeps = { database: deps.database, logger: deps.logger };
  app.use(
    dispatch({
      ...versionHandlers(versionRecord(spec)),
      ...punchHandlers(handlerDeps),
      ...eventHandlers(handlerDeps),
      ...userHandlers(handlerDeps),
      getHealthz: healthz,
      getReadyz: readyz(deps.database.pool),
    }),
  );
  app.use(problemErrorHandler(deps.logger));
  return app;
}
