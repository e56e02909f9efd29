/**
 * The fast lane of `getPunches` and `postPunches` (timing spec §4.1): the read that result software
 * repeats several times a second per event, and the uploads modems send (often one punch each), served without the
 * Express pipeline (request and response set-up, request logger, metrics middleware, spec validator, access
 * middleware, compression stream, dispatcher), which cost about 1 ms of CPU per request — more than the page
 * statement of a poll at the head. It runs before Express touches the request (app.ts): Express's own
 * set-up alone (it re-prototypes `req` and `res`) costs ≈0.13 ms per request on the benchmark machine.
 *
 * Reads:
 * It takes only requests whose every part is the plain, valid case: `GET /api/rest/v1/punches?…` with only
 * `modem`, `eventId`, `user`, `afterId`, `after` (each at most once, each matching its spec schema), no
 * `wait`, and an `Accept` the operation can answer. Everything else — and every request that would end in
 * an error (401, 403, 404, 400 from the service), and key-bearing reads while a per-key read limit is
 * configured — goes on to the full pipeline, which then answers it from scratch. So validation errors,
 * long polls and rate limiting have one implementation, the pipeline's; the fast lane only repeats what a
 * successful read does there: the same service call (`readPunches`, access included), the same headers
 * (`X-Request-Id`, `Content-Type`, `Cache-Control`, `X-Total-Count`, `Vary`), gzip at the same level and
 * threshold (in one piece, so with `Content-Length`), the request metrics and the request log line.
 * test/punches.fast-lane.test.ts compares both paths response by response.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import accepts from 'accepts';
import type { Logger } from 'pino';
import { preferredType, sendFastLaneAnswer, type AppMetrics, type FastLane } from '@sports-timing/shared';
import type { Principal } from '../auth/principal';
import { countIngested, type TimingMetrics } from '../metrics';
import { cardNumberProblem, MAX_TIME, MODEM_PATTERN, PUNCH_TYPES, type NewPunch } from '../punches/punches.csv';
import { readPunches, uploadPunchesByKey, type PunchDeps, type PunchQuery } from '../punches/punches.service';
import { authenticateKey } from '../users/users.service';
import { deferBodyError, uploadJsonParser } from './body';
import { GZIP_LEVEL, GZIP_THRESHOLD_BYTES } from './compression';
import { PUNCH_CONTENT_TYPES } from './punches.handlers';

const gzip = promisify(zlib.gzip);

/** Path of `getPunches`. */
const PATH = '/api/rest/v1/punches';

/** Value patterns of the parameters the fast lane takes (as in specs/timing.yaml; `modem` by its length). */
const PARAM_PATTERNS = new Map<string, RegExp>([
  ['eventId', /^[0-9]{1,10}$/],
  ['user', /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/],
  // Up to 15 digits: exact as a JavaScript number; longer values take the pipeline.
  ['afterId', /^[0-9]{1,15}$/],
  ['after', /^-?[0-9]{1,15}(\.[0-9]{1,6})?$/],
]);

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
    const pattern = PARAM_PATTERNS.get(name);
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
  timingMetrics: TimingMetrics;
  logger: Logger;
  keyReadsLimited: boolean;
}

/** A request as the fast lane sees it: Node's, plus the body once parsed. */
type LaneRequest = IncomingMessage & { body?: unknown };

/** A response with Express's `locals`, which the fast lane may fill before the pipeline runs. */
type LaneResponse = ServerResponse & { locals?: Record<string, unknown> };

/** The `apikey` header as the pipeline reads it (trimmed; empty counts as none). */
function apiKeyOf(req: IncomingMessage): string | undefined {
  const header = req.headers.apikey;
  return (Array.isArray(header) ? header[0] : header)?.trim() || undefined;
}

const PLAIN_JSON = /^application\/json\s*(;\s*charset="?utf-8"?\s*)?$/i;
const MAX_CODE = 65_535;

/** Whether `body` is a non-empty batch of plainly valid punches (see the module comment). */
export function isPlainUpload(body: unknown): body is NewPunch[] {
  if (!Array.isArray(body) || body.length === 0) return false;
  for (const p of body as unknown[]) {
    if (typeof p !== 'object' || p === null || Array.isArray(p) || Object.keys(p).length !== 5) return false;
    const { card, time, code, type, modem } = p as Record<string, unknown>;
    if (typeof card !== 'string' || cardNumberProblem(card) !== undefined) return false;
    if (typeof time !== 'number' || !Number.isInteger(time) || time < 0 || time > MAX_TIME) return false;
    if (typeof code !== 'number' || !Number.isInteger(code) || code < 0 || code > MAX_CODE) return false;
    if (typeof type !== 'string' || !(PUNCH_TYPES as readonly string[]).includes(type)) return false;
    if (typeof modem !== 'string' || !MODEM_PATTERN.test(modem)) return false;
  }
  return true;
}

/** Whether an upload request qualifies by its headers alone (other encodings get the pipeline's 415). */
function plainUploadRequest(req: IncomingMessage): boolean {
  const type = req.headers['content-type'];
  const encoding = req.headers['content-encoding']?.trim().toLowerCase();
  return type !== undefined && PLAIN_JSON.test(type) && (encoding === undefined || encoding === 'identity' || encoding === 'gzip');
}

/**
 * The fast lane, run before the Express app (app.ts): serves plain successful punch reads and uploads itself
 * and passes every other request on (see the module comment). Any failure passes the request on as well:
 * nothing has been sent yet, and the pipeline answers it from the start (an upload re-sent by it is stored
 * once, see `punches_resend`).
 */
export function punchFastLane(deps: FastLaneDeps): FastLane {
  const uploadJson = uploadJsonParser();
  return (req: LaneRequest, res: LaneResponse, pipeline) => {
    // Request duration as the metrics middleware measures it: from arrival.
    const start = process.hrtime.bigint();
    const url = req.url ?? '';
    // Browser requests (CORS headers) take the pipeline.
    if (req.headers.origin !== undefined) return pipeline();
    if (req.method === 'POST' && url === PATH) {
      const key = apiKeyOf(req);
      if (key === undefined || !plainUploadRequest(req)) return pipeline();
      // receptionTimeUtc: the moment the request arrived (the pipeline keeps this value).
      res.locals ??= Object.create(null) as Record<string, unknown>;
      res.locals.receivedAtUtc = Date.now();
      return uploadJson(req as never, res as never, (err?: unknown) => {
        if (err) {
          deferBodyError(res, err);
          return pipeline();
        }
        if (!isPlainUpload(req.body)) return pipeline();
        upload(deps, req, res, start, req.body, key).catch(pipeline);
      });
    }
    if (req.method !== 'GET' || !url.startsWith(PATH) || url.charCodeAt(PATH.length) !== 63 /* ? */) return pipeline();
    const query = plainPunchQuery(url.slice(PATH.length + 1));
    if (query === null) return pipeline();
    const key = apiKeyOf(req);
    if (key !== undefined && deps.keyReadsLimited) return pipeline();
    // No Accept, */* and application/* pick JSON (first listed), as in the handler.
    const accepted = preferredType(req, ['application/json', 'text/csv']);
    if (!accepted) return pipeline();
    const gzipAccepted = req.headers['accept-encoding'] !== undefined && accepts(req).encoding(['gzip']) === 'gzip';
    read(deps, req, res, start, query, key, accepted === 'text/csv' ? 'csv' : 'json', gzipAccepted).catch(pipeline);
  };
}

async function upload(deps: FastLaneDeps, req: LaneRequest, res: LaneResponse, start: bigint, punches: NewPunch[], key: string): Promise<void> {
  const result = await uploadPunchesByKey(deps.punches, key, punches, Number(res.locals?.receivedAtUtc));
  countIngested(deps.timingMetrics, result.stored);
  const body = JSON.stringify(result);
  sendFastLaneAnswer(deps, req, res, start, 'postPunches', body, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    Vary: 'Accept-Encoding',
  });
}

async function read(
  deps: FastLaneDeps,
  req: IncomingMessage,
  res: ServerResponse,
  start: bigint,
  query: PunchQuery,
  key: string | undefined,
  format: 'json' | 'csv',
  gzipAccepted: boolean,
): Promise<void> {
  const caller: Principal | null = key === undefined ? null : await authenticateKey(deps.punches.db, key);
  const page = await readPunches(deps.punches, caller, query, format);
  let body = page.body;
  const headers: Record<string, string | number> = {
    'Content-Type': PUNCH_CONTENT_TYPES[format],
    'Cache-Control': 'no-cache',
    'X-Total-Count': String(page.total),
    Vary: 'Accept, Accept-Encoding',
  };
  const length = Buffer.byteLength(body);
  if (length >= GZIP_THRESHOLD_BYTES && gzipAccepted) {
    body = await gzip(body, { level: GZIP_LEVEL });
    headers['Content-Encoding'] = 'gzip';
    headers['Content-Length'] = body.length;
  } else {
    headers['Content-Length'] = length;
  }
  sendFastLaneAnswer(deps, req, res, start, 'getPunches', body, headers);
}
