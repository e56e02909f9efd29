/**
 * The fast lane of `getPunches`, `getRocPunches` and `postPunches`: the reads that result software
 * repeats several times a second per event, and the uploads modems send (often one punch each), served without the
 * Express pipeline (request and response set-up, request logger, metrics middleware, spec validator, access
 * middleware, compression stream, dispatcher), which cost more CPU per request than the page
 * statement of a poll at the head. It runs before Express touches the request (app.ts): Express's own
 * set-up alone (it re-prototypes `req` and `res`) is a measurable part of a poll (bench/README.md, finding 14).
 *
 * Reads:
 * It takes only requests whose every part is the plain, valid case: `GET /api/rest/v1/punches?…` with only
 * `modem`, `eventId`, `user`, `afterId`, `after` (each at most once, each matching its spec schema), no
 * `wait`, an `If-None-Match` (if any) valid by its schema, and an `Accept` the operation can answer; and the
 * ROC read as ROC readers send it, `GET /getpunches.asp?unitId=…&lastId=…[&date=…&time=…]` (`getRocPunches`,
 * exactly that file name, each parameter valid by its schema) with no `apikey` and no `Accept` header, while
 * anonymous ROC reads have no budget (`TIMING_ANONYMOUS_ROC_READS_PER_MINUTE`). Uploads: a JSON batch of punches each valid by the spec's
 * `NewPunch` as it stands, with an API key — checked before a byte of the body is read, so a caller without a
 * valid key costs no inflating or parsing (docs/decisions.md §5 "Work before authentication"). The schemas are read from the loaded spec and compiled once when
 * the app is built ({@link compilePunchLaneRules}), so a change of the spec changes the lane with it. Everything else — and every request that would end in
 * an error (401, 403, 404, 400 from the service), key-bearing reads while a per-key read limit is
 * configured, and anonymous whole downloads while they have a budget — goes on to the full pipeline, which then answers it from scratch. So validation errors,
 * long polls and rate limiting have one implementation, the pipeline's; the fast lane only repeats what a
 * successful read does there: the same service call (`readPunches`, access included), the same headers
 * (`X-Request-Id`, `Content-Type`, `Cache-Control`, `ETag`, `X-Total-Count`, `Vary`) and the same `304` to a
 * matching `If-None-Match` (read-caching.ts), gzip at the same level and
 * threshold (in one piece, so with `Content-Length`), the request metrics and the request log line.
 * test/punches.fast-lane.test.ts compares both paths response by response.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import accepts from 'accepts';
import type { Logger } from 'pino';
import {
  ApiError,
  compileJsonCheck,
  compileTextCheck,
  findOperation,
  jsonBodySchema,
  operationParameters,
  preferredType,
  sendFastLaneAnswer,
  type AppMetrics,
  type FastLane,
  type OpenApiDocument,
} from '@sports-timing/shared';
import type { Principal } from '../auth/principal';
import { countIngested, type TimingMetrics } from '../metrics';
import { cardNumberProblem, type NewPunch } from '../punches/punches.csv';
import { maxCardNumber } from '../punches/punch-spec';
import { readPunches, uploadPunches, type PunchReadResult, type PunchService } from '../punches/punches.service';
import { readRocPunches, type RocQuery } from '../punches/roc.service';
import type { PunchQuery } from '../punches/punch-scope';
import type { KeyUses } from '../users/key-uses';
import { authenticateKey } from '../users/users.service';
import type { KeyOwnerMemo } from '../users/key-owner-memo';
import { keyLookupHash } from '../auth/keys';
import { deferBodyError, uploadJsonParser } from './body';
import { GZIP_LEVEL, GZIP_THRESHOLD_BYTES } from './compression';
import { PUNCH_CONTENT_TYPES } from './punches.handlers';
import { ROC_CONTENT_TYPE } from './roc.handlers';
import { DEFAULT_PUNCH_MAX_AGE_SECONDS, ifNoneMatchHits, readCaching } from './read-caching';

const gzip = promisify(zlib.gzip);

/** A percent sign that does not start an escape: the pipeline's query parser decodes such input its own way. */
const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})/;

/** The query parameters the lane reads (`wait`, a long poll, always takes the pipeline), as the service takes them. */
const READ_PARAMETERS: Record<string, (q: PunchQuery, value: string) => void> = {
  modem: (q, v) => (q.modem = v),
  eventId: (q, v) => (q.eventId = v),
  user: (q, v) => (q.user = v),
  afterId: (q, v) => (q.afterId = Number(v)),
  after: (q, v) => (q.after = Number(v)),
};

/** The query parameters of a ROC read (`getRocPunches`) the lane reads, as the ROC service takes them. */
const ROC_PARAMETERS: Record<string, (q: Partial<RocQuery>, value: string) => void> = {
  unitId: (q, v) => (q.unitId = v),
  lastId: (q, v) => (q.lastId = Number(v)),
  date: (q, v) => (q.date = v),
  time: (q, v) => (q.time = v),
};

/**
 * A query string's parameters checked by `checks` (each at most once, each declared and valid by its schema)
 * and set into a fresh object; null when one is not.
 */
function plainParameters<Q>(search: string, checks: Map<string, { check: (value: string) => boolean; set: (q: Q, value: string) => void }>, q: Q): Q | null {
  if (BAD_ESCAPE.test(search)) return null;
  const seen = new Set<string>();
  for (const [name, value] of new URLSearchParams(search)) {
    if (seen.has(name)) return null;
    seen.add(name);
    const param = checks.get(name);
    if (param === undefined || !param.check(value)) return null;
    param.set(q, value);
  }
  return q;
}

/** What the lane takes as plain, compiled from the spec once (see {@link compilePunchLaneRules}). */
interface PunchLaneRules {
  /**
   * The query of a plain `getPunches` request (see the module comment), or null when the request must take
   * the pipeline. `search` is the part after `?`.
   */
  plainPunchQuery: (search: string) => PunchQuery | null;
  /** The query of a plain anonymous `getRocPunches` request (`unitId` and `lastId`, optionally `date`, `time`), or null. */
  plainRocQuery: (search: string) => RocQuery | null;
  /** Whether `body` is a non-empty batch of plainly valid punches (see the module comment). */
  isPlainUpload: (body: unknown) => body is NewPunch[];
  /** Whether a read's `If-None-Match` (absent, or as Node joined it) is valid by the spec's `IfNoneMatch`. */
  plainIfNoneMatch: (value: string | undefined) => boolean;
}

/**
 * The lane's rules from the loaded timing spec (the document the request validator uses): each read
 * parameter's schema of `getPunches` (a parameter the spec no longer declares is not taken) and the JSON body
 * schema of `postPunches` (`NewPunch` with `PunchType` and `ModemSerial`). Card numbers are also held to the
 * 24-bit limit of `NewPunch.card` `x-value-maximum` (`cardNumberProblem`). Throws when the spec
 * uses a schema keyword the lane cannot check (shared fast-lane.ts).
 * @internal
 */
export function compilePunchLaneRules(spec: OpenApiDocument): PunchLaneRules {
  const checks = new Map<string, { check: (value: string) => boolean; set: (q: PunchQuery, value: string) => void }>();
  const read = findOperation(spec, 'getPunches');
  const upload = findOperation(spec, 'postPunches');
  const maxCard = maxCardNumber(spec);
  // A request header the spec stops declaring is not taken (the pipeline then answers it).
  let ifNoneMatch: (value: string) => boolean = () => false;
  for (const p of operationParameters(spec, read.path, read.method)) {
    const set = READ_PARAMETERS[p.name];
    if (p.in === 'query' && set !== undefined) checks.set(p.name, { check: compileTextCheck(spec, p.schema, `getPunches ${p.name}`), set });
    if (p.in === 'header' && p.name === 'If-None-Match') ifNoneMatch = compileTextCheck(spec, p.schema, 'getPunches If-None-Match');
  }
  // Every element held to the items schema (`NewPunch`): a batch with an invalid punch (which the service
  // stores without it, `x-items-checked-alone`) takes the pipeline.
  const batchValid = compileJsonCheck(spec, jsonBodySchema(spec, upload.path, upload.method), 'postPunches body');
  const roc = findOperation(spec, 'getRocPunches');
  const rocChecks = new Map<string, { check: (value: string) => boolean; set: (q: Partial<RocQuery>, value: string) => void }>();
  for (const p of operationParameters(spec, roc.path, roc.method)) {
    const set = ROC_PARAMETERS[p.name];
    if (p.in === 'query' && set !== undefined) rocChecks.set(p.name, { check: compileTextCheck(spec, p.schema, `getRocPunches ${p.name}`), set });
  }
  return {
    plainPunchQuery(search) {
      const q = plainParameters<PunchQuery>(search, checks, {});
      return q !== null && (q.modem !== undefined || q.eventId !== undefined || q.user !== undefined) ? q : null;
    },
    plainRocQuery(search) {
      const q = plainParameters<Partial<RocQuery>>(search, rocChecks, {});
      return q !== null && q.unitId !== undefined && q.lastId !== undefined ? { ...q, unitId: q.unitId, lastId: q.lastId } : null;
    },
    plainIfNoneMatch: (value) => value === undefined || ifNoneMatch(value),
    isPlainUpload(body): body is NewPunch[] {
      if (!Array.isArray(body) || body.length === 0 || !batchValid(body)) return false;
      for (const p of body as NewPunch[]) if (cardNumberProblem(p.card, maxCard) !== undefined) return false;
      return true;
    },
  };
}

/** What the fast lane needs: the app's punch service, metrics and logger, and whether key reads are rate limited. */
export interface FastLaneDeps {
  /** The loaded timing spec, the one the request validator uses: the lane's rules come from it. */
  spec: OpenApiDocument;
  /** The app's punch service (the same object its handlers use). */
  punches: PunchService;
  metrics: AppMetrics;
  timingMetrics: TimingMetrics;
  logger: Logger;
  /** `HTTP_LOG`, read when the app was built: one log line per answer, as the pipeline's request logger writes. */
  httpLog: boolean;
  /** The app's record of key uses (composition.ts): a key the lane authenticates counts as used, as on the pipeline. */
  keyUses: KeyUses;
  /** The app's memo of keys found valid (users/key-owner-memo.ts): an upload with a key in it is one round trip. */
  keyOwners: KeyOwnerMemo;
  keyReadsLimited: boolean;
  /** Whether anonymous whole downloads have a budget (app.ts `anonymousReadBudgets`): they take the pipeline then. */
  anonymousDownloadsLimited: boolean;
  /** Whether anonymous ROC reads have a budget (`TIMING_ANONYMOUS_ROC_READS_PER_MINUTE`): they take the pipeline then. */
  anonymousRocReadsLimited: boolean;
  /** `max-age` (seconds) of public reads (`TIMING_PUNCH_MAX_AGE_SECONDS`, read-caching.ts); default 1. */
  punchMaxAgeSeconds?: number;
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
  const { plainPunchQuery, plainRocQuery, isPlainUpload, plainIfNoneMatch } = compilePunchLaneRules(deps.spec);
  const rocPath = findOperation(deps.spec, 'getRocPunches').path;
  // The paths of `getPunches` and `postPunches`, found by operationId in the spec the lane serves.
  const readPath = findOperation(deps.spec, 'getPunches').path;
  const uploadPath = findOperation(deps.spec, 'postPunches').path;
  return (req: LaneRequest, res: LaneResponse, pipeline) => {
    // Request duration as the metrics middleware measures it: from arrival.
    const start = process.hrtime.bigint();
    const url = req.url ?? '';
    // Browser requests (CORS headers) take the pipeline.
    if (req.headers.origin !== undefined) return pipeline();
    if (req.method === 'POST' && url === uploadPath) {
      const key = apiKeyOf(req);
      if (key === undefined || !plainUploadRequest(req)) return pipeline();
      // receptionTimeUtc: the moment the request arrived (the pipeline keeps this value).
      res.locals ??= Object.create(null) as Record<string, unknown>;
      res.locals.receivedAtUtc = Date.now();
      // The key first: nothing of the body is read, inflated or parsed for a caller without a valid key (an
      // unknown key takes the pipeline, whose access check answers 401 before its body parsers run). A key
      // in the memo of valid keys needs no lookup of its own: the upload's statement checks it again.
      const keyHash = keyLookupHash(key);
      if (keyHash === undefined) return pipeline();
      const known = deps.keyOwners.get(keyHash);
      (known ? Promise.resolve(known) : authenticateKey(deps.punches.db, key, deps.keyUses)).then(
        (caller) =>
          uploadJson(req as never, res as never, (err?: unknown) => {
            if (err) {
              deferBodyError(res, err);
              return pipeline();
            }
            if (!isPlainUpload(req.body)) return pipeline();
            upload(deps, req, res, start, req.body, caller, keyHash).catch((e: unknown) => {
              // Refused by the statement (revoked meanwhile): the pipeline answers its 401.
              if (e instanceof ApiError && e.status === 401) deps.keyOwners.forget(keyHash);
              pipeline();
            });
          }),
        () => pipeline(),
      );
      return;
    }
    if (req.method === 'GET' && url.startsWith(rocPath) && url.charCodeAt(rocPath.length) === 63 /* ? */) {
      // Anonymous ROC reads as ROC readers send them (no headers): a key, an Accept or a budget takes the pipeline.
      if (req.headers.apikey !== undefined || req.headers.accept !== undefined || deps.anonymousRocReadsLimited) return pipeline();
      const query = plainRocQuery(url.slice(rocPath.length + 1));
      if (query === null || !plainIfNoneMatch(req.headers['if-none-match'])) return pipeline();
      const gzipAccepted = req.headers['accept-encoding'] !== undefined && accepts(req).encoding(['gzip']) === 'gzip';
      readRoc(deps, req, res, start, query, gzipAccepted).catch(pipeline);
      return;
    }
    if (req.method !== 'GET' || !url.startsWith(readPath) || url.charCodeAt(readPath.length) !== 63 /* ? */) return pipeline();
    const query = plainPunchQuery(url.slice(readPath.length + 1));
    if (query === null || !plainIfNoneMatch(req.headers['if-none-match'])) return pipeline();
    const key = apiKeyOf(req);
    if (key !== undefined && deps.keyReadsLimited) return pipeline();
    if (key === undefined && deps.anonymousDownloadsLimited && !query.afterId) return pipeline();
    // No Accept, */* and application/* pick JSON (first listed), as in the handler.
    const accepted = preferredType(req, ['application/json', 'text/csv']);
    if (!accepted) return pipeline();
    const gzipAccepted = req.headers['accept-encoding'] !== undefined && accepts(req).encoding(['gzip']) === 'gzip';
    read(deps, req, res, start, query, key, accepted === 'text/csv' ? 'csv' : 'json', gzipAccepted).catch(pipeline);
  };
}

async function upload(
  deps: FastLaneDeps,
  req: LaneRequest,
  res: LaneResponse,
  start: bigint,
  punches: NewPunch[],
  caller: Principal,
  keyHash: Buffer,
): Promise<void> {
  const result = await uploadPunches(deps.punches, caller, punches, Number(res.locals?.receivedAtUtc), [], keyHash);
  deps.keyOwners.remember(keyHash, caller);
  deps.keyUses.record(caller.keyId);
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
  const caller: Principal | null = key === undefined ? null : await authenticateKey(deps.punches.db, key, deps.keyUses);
  const page = await readPunches(deps.punches, caller, query, format);
  const maxAgeSeconds = deps.punchMaxAgeSeconds ?? DEFAULT_PUNCH_MAX_AGE_SECONDS;
  const caching = readCaching({ keyed: caller !== null, view: 'getPunches', version: page.version, maxAgeSeconds });
  if (ifNoneMatchHits(req.headers['if-none-match'], caching.etag)) {
    return sendFastLaneAnswer(deps, req, res, start, 'getPunches', '', caching.headers, 304);
  }
  const headers: Record<string, string | number> = {
    'Content-Type': PUNCH_CONTENT_TYPES[format],
    'X-Total-Count': String(page.total),
    ...caching.headers,
  };
  sendFastLaneAnswer(deps, req, res, start, 'getPunches', await encoded(page, gzipAccepted, headers), headers);
}

/**
 * The body to send of a read answer: gzip-compressed at the pipeline's level when `gzipAccepted` and at least
 * the pipeline's threshold (a shared answer encoded once for every request served it, read-cache.ts), else as
 * it is; sets `Content-Length` and, when compressed, `Content-Encoding` in `headers`.
 */
async function encoded(page: PunchReadResult, gzipAccepted: boolean, headers: Record<string, string | number>): Promise<string | Buffer> {
  const length = Buffer.byteLength(page.body);
  if (length < GZIP_THRESHOLD_BYTES || !gzipAccepted) {
    headers['Content-Length'] = length;
    return page.body;
  }
  const plain = page.body;
  const encode = () => gzip(plain, { level: GZIP_LEVEL });
  const body = page.derive ? await page.derive('gzip', encode) : await encode();
  headers['Content-Encoding'] = 'gzip';
  headers['Content-Length'] = body.length;
  return body;
}

/** An anonymous ROC read (`getRocPunches`), as roc.handlers.ts answers it: the shared ROC text, its caching headers, `304`, gzip. */
async function readRoc(deps: FastLaneDeps, req: IncomingMessage, res: ServerResponse, start: bigint, query: RocQuery, gzipAccepted: boolean): Promise<void> {
  const answer = await readRocPunches(deps.punches, null, query, () => deps.timingMetrics.rocAnswersRendered.inc());
  const maxAgeSeconds = deps.punchMaxAgeSeconds ?? DEFAULT_PUNCH_MAX_AGE_SECONDS;
  const caching = readCaching({ keyed: false, view: 'getRocPunches', version: answer.version, maxAgeSeconds });
  if (ifNoneMatchHits(req.headers['if-none-match'], caching.etag)) {
    return sendFastLaneAnswer(deps, req, res, start, 'getRocPunches', '', caching.headers, 304);
  }
  const headers: Record<string, string | number> = { 'Content-Type': ROC_CONTENT_TYPE, ...caching.headers };
  sendFastLaneAnswer(deps, req, res, start, 'getRocPunches', await encoded(answer, gzipAccepted, headers), headers);
}
