/**
 * The fast lane of `getPunches` (timing spec §4.1, issue 8): the read that result software repeats several
 * times a second per event, served without the Express pipeline behind it (request logger, metrics
 * middleware, spec validator, access middleware, compression stream, dispatcher), which cost about 1 ms
 * of CPU per poll — more than the page statement of a poll at the head.
 *
 * It takes only requests whose every part is the plain, valid case: `GET /api/rest/v1/punches?…` with only
 * `modem`, `eventId`, `user`, `afterId`, `after` (each at most once, each matching its spec schema), no
 * `wait`, and an `Accept` the operation can answer. Everything else — and every request that would end in
 * an error (401, 403, 404, 400 from the service), and key-bearing reads while a per-key read limit is
 * configured — goes on to the full pipeline, which then answers it from scratch. So validation errors,
 * long polls and rate limiting have one implementation, the pipeline's; the fast lane only repeats what a
 * successful read does there: the same service call (`readPunches`, access included), the same headers
 * (`X-Request-Id`, `Content-Type`, `Cache-Control`, `X-Total-Count`, `Vary`), gzip at the same level and
 * threshold (in one piece, so with `Content-Length`), the request metrics and the request log line.
 * test/punches.fast.test.ts compares both paths response by response.
 */
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { ApiError, assignRequestId, httpLogEnabled, logCompletedRequest, type AppMetrics } from '@sports-timing/shared';
import type { Principal } from '../auth/principal';
import { readPunches, type PunchDeps, type PunchQuery } from '../punches/punches.service';
import { authenticateKey } from '../users/users.service';
import { GZIP_LEVEL, GZIP_THRESHOLD_BYTES } from './compression';
import { PUNCH_CONTENT_TYPES } from './punches.handlers';

const gzip = promisify(zlib.gzip);

/** Path of `getPunches`. */
const PATH = '/api/rest/v1/punches';

/** Value patterns of the parameters the fast lane takes (as in specs/timing.yaml; `modem` by its length). */
const PARAM_PATTERNS: Record<string, RegExp> = {
  eventId: /^[0-9]{1,10}$/,
  user: /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
  // Up to 15 digits: exact as a JavaScript number; longer values take the pipeline.
  afterId: /^[0-9]{1,15}$/,
  after: /^-?[0-9]{1,15}(\.[0-9]{1,6})?$/,
};

/** Longest `modem` value (spec `maxLength`). */
const MODEM_MAX_LENGTH = 13_000;

/** A percent sign that does not start an escape: the pipeline's query parser decodes such input its own way. */
const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})/;

/**
 * The query of a plain `getPunches` request (see the module comment), or null when the request must take
 * the pipeline. `search` is the part after `?`.
 */
export function plainPunchQuery(search: string): PunchQuery | null {
  if (BAD_ESCAPE.test(search)) return null;
  const q: PunchQuery = {};
  const seen = new Set<string>();
  for (const [name, value] of new URLSearchParams(search)) {
    if (seen.has(name)) return null;
    seen.add(name);
    if (name === 'modem') {
      if (value.length > MODEM_MAX_LENGTH) return null;
      q.modem = value;
      continue;
    }
    const pattern = PARAM_PATTERNS[name];
    if (pattern === undefined || !pattern.test(value)) return null;
    if (name === 'eventId') q.eventId = value;
    else if (name === 'user') q.user = value;
    else if (name === 'afterId') q.afterId = Number(value);
    else q.after = Number(value);
  }
  return q.modem !== undefined || q.eventId !== undefined || q.user !== undefined ? q : null;
}

/** What the fast lane needs: the punch service's dependencies, metrics and logger, and whether key reads are rate limited. */
export interface FastLaneDeps {
  punches: PunchDeps;
  metrics: AppMetrics;
  logger: Logger;
  keyReadsLimited: boolean;
}

/** The `apikey` header as the pipeline reads it (trimmed; empty counts as none). */
function apiKeyOf(req: Request): string | undefined {
  const header = req.headers.apikey;
  return (Array.isArray(header) ? header[0] : header)?.trim() || undefined;
}

/**
 * Express middleware, mounted first: serves plain successful punch reads itself and passes every other
 * request on untouched (see the module comment).
 */
export function punchReadFastLane(deps: FastLaneDeps): RequestHandler {
  return (req, res, next) => {
    const url = req.url;
    if (req.method !== 'GET' || !url.startsWith(PATH) || url.charCodeAt(PATH.length) !== 63 /* ? */) return next();
    const query = plainPunchQuery(url.slice(PATH.length + 1));
    if (query === null) return next();
    const key = apiKeyOf(req);
    if (key !== undefined && deps.keyReadsLimited) return next();
    // No Accept, */* and application/* pick JSON (first listed), as in the handler.
    const accepted = req.accepts(['application/json', 'text/csv']);
    if (!accepted) return next();
    serve(deps, req, res, query, key, accepted === 'text/csv' ? 'csv' : 'json').catch((err: unknown) => {
      // Errors are answered by the pipeline, from the start (nothing has been sent yet).
      if (err instanceof ApiError) next();
      else next(err);
    });
  };
}

async function serve(deps: FastLaneDeps, req: Request, res: Response, query: PunchQuery, key: string | undefined, format: 'json' | 'csv'): Promise<void> {
  const start = process.hrtime.bigint();
  const caller: Principal | null = key === undefined ? null : await authenticateKey(deps.punches.db, key);
  const page = await readPunches(deps.punches, caller, query, format);
  let body: string | Buffer = page.body;
  const headers: Record<string, string | number> = {
    'Content-Type': PUNCH_CONTENT_TYPES[format],
    'Cache-Control': 'no-cache',
    'X-Total-Count': String(page.total),
    Vary: 'Accept, Accept-Encoding',
  };
  const length = Buffer.byteLength(body, 'utf8');
  if (length >= GZIP_THRESHOLD_BYTES && req.headers['accept-encoding'] !== undefined && req.acceptsEncodings('gzip') === 'gzip') {
    body = await gzip(body, { level: GZIP_LEVEL });
    headers['Content-Encoding'] = 'gzip';
    headers['Content-Length'] = body.length;
  } else {
    headers['Content-Length'] = length;
  }
  const requestId = assignRequestId(req, res);
  res.writeHead(200, headers);
  res.end(body);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  deps.metrics.record('getPunches', 'GET', 200, seconds);
  if (httpLogEnabled()) logCompletedRequest(deps.logger, req, res, requestId, seconds * 1000);
}
