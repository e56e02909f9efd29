/**
 * Liveness (`/healthz`: the process answers) and readiness (`/readyz`: the database answers) handlers.
 * Readiness follows the database both ways without a restart.
 */
import type { RequestHandler } from 'express';
import type pg from 'pg';
import { databaseIsUp } from './db';
import { problemBody } from './errors';

/** `GET /healthz` → `{ status: "ok" }`. */
export const healthz: RequestHandler = (_req, res) => {
  res.json({ status: 'ok' });
};

/** `GET /readyz` → 200 `{ status: "ready", checks }` or 503 problem+json with `Retry-After`. */
export function readyz(pool: pg.Pool): RequestHandler {
  return async (_req, res) => {
    const up = await databaseIsUp(pool);
    if (up) {
      res.json({ status: 'ready', checks: { database: 'up' } });
      return;
    }
    res
      .status(503)
      .setHeader('Retry-After', '2')
      .type('application/problem+json')
      .send(JSON.stringify({ ...problemBody({ status: 503, detail: 'The database is unavailable.' }), checks: { database: 'down' } }));
  };
}
