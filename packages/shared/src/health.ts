/**
 * Liveness (`/healthz`: the process answers) and readiness (`/readyz`: the instance can write to its database
 * through its pool, db.ts `databaseWritable`) handlers. Readiness follows the database both ways without a restart.
 */
import type { RequestHandler } from 'express';
import type pg from 'pg';
import { databaseWritable, type WriteHealth } from './db';
import { problemBody } from './errors';

/** `GET /healthz` → `{ status: "ok" }`. */
export const healthz: RequestHandler = (_req, res) => {
  res.json({ status: 'ok' });
};

/** How long a finished readiness check answers further probes (ms): probes from many balancers cost one check. @internal */
export const READINESS_REUSE_MS = 1_000;

/**
 * `GET /readyz` → 200 `{ status: "ready", checks }` or 503 problem+json with `Retry-After`. Concurrent probes
 * share one check, and its result is reused for {@link READINESS_REUSE_MS}. `details`, when given, adds
 * informational fields to the 200 body (the service's spec declares them); it never makes the instance unready,
 * and fields it fails to read are left out.
 */
export function readyz(pool: pg.Pool, details?: () => Promise<Record<string, unknown>>): RequestHandler {
  let inFlight: Promise<WriteHealth> | undefined;
  let last: { health: WriteHealth; at: number } | undefined;
  const check = (): Promise<WriteHealth> => {
    if (last && Date.now() - last.at < READINESS_REUSE_MS) return Promise.resolve(last.health);
    inFlight ??= databaseWritable(pool).then((health) => {
      last = { health, at: Date.now() };
      inFlight = undefined;
      return health;
    });
    return inFlight;
  };
  return async (_req, res) => {
    const health = await check();
    if (health.up) {
      const extra = details ? await details().catch(() => ({})) : {};
      res.json({ status: 'ready', checks: { database: 'up' }, ...extra });
      return;
    }
    res
      .status(503)
      .setHeader('Retry-After', '2')
      .type('application/problem+json')
      .send(JSON.stringify({ ...problemBody({ status: 503, detail: health.detail ?? 'The database is unavailable.' }), checks: { database: 'down' } }));
  };
}
