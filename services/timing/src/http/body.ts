/**
 * Request body handling, run after access control and before spec validation: only gzip (or identity)
 * content encodings (415 otherwise, also for br/deflate which body-parser could inflate), a large limit
 * for punch uploads and a small one elsewhere. Limits apply to the inflated bytes: body-parser counts
 * what comes out of the gunzip stream and stops reading at the limit, so a gzip bomb ends early with 413.
 * JSON nested deeper than {@link MAX_JSON_DEPTH} is refused before it is parsed (docs/security.md
 * "Work before authentication"), and an error answered before the body was read closes the connection
 * instead of reading the rest ({@link closeUnreadBodies}).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type RequestHandler } from 'express';
import onHeaders from 'on-headers';
import { ApiError, operationOf, validationError } from '@sports-timing/shared';

/** Upload body limit after decompression (10 MiB). */
const UPLOAD_LIMIT_BYTES = 10 * 1024 * 1024;

/** Body limit of every other operation. */
const SMALL_BODY_LIMIT_BYTES = 256 * 1024;

/** Body limit of a ROC radio unit's post (one punch as form fields). */
const ROC_FORM_LIMIT_BYTES = 16 * 1024;

const JSON_TYPES = ['application/json', 'application/*+json'];

/** 415 for any `Content-Encoding` other than gzip/identity on a request with a body. */
export const requireSupportedEncoding: RequestHandler = (req, _res, next) => {
  const enc = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (enc === 'identity' || enc === 'gzip' || enc === '') return next();
  next(new ApiError(415, `Content-Encoding ${enc} is not supported; send gzip or identity.`));
};

/**
 * Deepest nesting of arrays and objects a JSON body may have: every body of the timing spec is at most three
 * levels deep (a batch of punches: two), so this only refuses abuse — a body of nested brackets that would
 * cost the parser and the validator seconds of CPU and gigabytes of memory.
 */
const MAX_JSON_DEPTH = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;

/**
 * body-parser's `verify` hook (it runs on the raw, inflated bytes before `JSON.parse`): a 400 when the JSON
 * nests arrays and objects deeper than {@link MAX_JSON_DEPTH}. One pass over the bytes that stops at the
 * first level too deep, skipping string contents (escapes included); malformed JSON is left to the parser.
 */
function refuseDeepJson(_req: IncomingMessage, _res: ServerResponse, buf: Buffer): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > MAX_JSON_DEPTH)
        throw validationError(
          { $: [`nested deeper than ${MAX_JSON_DEPTH} levels`] },
          `The JSON body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`,
        );
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) depth--;
  }
}

/** The JSON body parser of `postPunches` (also used by the upload fast lane, so both meet the same errors). */
export function uploadJsonParser(): RequestHandler {
  return express.json({ type: JSON_TYPES, limit: UPLOAD_LIMIT_BYTES, verify: refuseDeepJson });
}

/**
 * Sets `Connection: close` on an error answered before the request's body has fully arrived (401/403/429/415
 * from the checks that run before the body parsers, 413 at the limit), so Node ends the connection after the
 * answer instead of reading and discarding the rest of the body (up to the client's `Content-Length`) to keep
 * the connection alive. Requests without a body, and bodies already received, keep their connection. Mount
 * it before anything that may answer.
 */
export function closeUnreadBodies(req: IncomingMessage, res: ServerResponse): void {
  onHeaders(res, () => {
    if (res.statusCode >= 400 && !req.complete) res.setHeader('Connection', 'close');
  });
}

const DEFERRED_BODY_ERROR = 'deferredBodyError';

/**
 * Keeps a body error met before the pipeline (the upload fast lane reads the body first) so that
 * {@link bodyParsers} raises it at the pipeline's own point, after access control — as if read there.
 */
export function deferBodyError(res: { locals?: Record<string, unknown> }, err: unknown): void {
  res.locals ??= Object.create(null) as Record<string, unknown>;
  res.locals[DEFERRED_BODY_ERROR] = err;
}

/**
 * Body parsers chosen by operation: `postPunches` takes JSON or CSV up to 10 MiB, `postRocPunches` a form up to
 * 16 KiB, others JSON up to 256 KiB.
 * A body already read (upload fast lane) is left as it is: body-parser skips finished requests.
 */
export function bodyParsers(): RequestHandler {
  const uploadJson = uploadJsonParser();
  const uploadCsv = express.text({ type: 'text/csv', limit: UPLOAD_LIMIT_BYTES });
  const smallJson = express.json({ type: JSON_TYPES, limit: SMALL_BODY_LIMIT_BYTES, verify: refuseDeepJson });
  // A ROC radio unit's post: flat form fields of one punch (docs/roc.md).
  const rocForm = express.urlencoded({ extended: false, limit: ROC_FORM_LIMIT_BYTES, parameterLimit: 100 });
  return (req, res, next) => {
    const deferred: unknown = res.locals[DEFERRED_BODY_ERROR];
    if (deferred !== undefined) return next(deferred);
    const operationId = operationOf(req)?.operationId;
    if (operationId === 'postRocPunches') return rocForm(req, res, next);
    if (operationId !== 'postPunches') return smallJson(req, res, next);
    uploadJson(req, res, (err?: unknown) => (err ? next(err) : uploadCsv(req, res, next)));
  };
}
