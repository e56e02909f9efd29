/**
 * The timing service as an Express app (no listen): spec validation, handlers by operationId,
 * problem+json errors. `server.ts` wires configuration, the database and the listener.
 */
import compression from 'compression';
import express, { type Express } from 'express';
import type { Logger } from 'pino';
import { dispatch, healthz, httpLogger, loadSpec, problemErrorHandler, readyz, validator, type Database } from '@sports-timing/shared';
import type { DB } from './db/schema';
import { versionHandlers } from './http/versions.handlers';
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
  app.use(compression({ level: 3, threshold: 1024 }));
  app.use(express.json({ type: ['application/json', 'application/*+json'], limit: '1mb' }));
  app.use(validator(spec, { validateResponses: deps.validateResponses }));
  app.use(
    dispatch({
      ...versionHandlers(versionRecord(spec)),
      getHealthz: healthz,
      getReadyz: readyz(deps.database.pool),
    }),
  );
  app.use(problemErrorHandler(deps.logger));
  return app;
}
