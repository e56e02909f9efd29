/**
 * Request body handling, run after access control and before spec validation: only gzip (or identity)
 * content encodings (415 otherwise, also for br/deflate which body-parser could inflate), a large limit
 * for punch uploads and a small one elsewhere. Limits apply to the inflated bytes: body-parser counts
 * what comes out of the gunzip stream and stops reading at the limit, so a gzip bomb ends early with 413.
 */
import express, { type RequestHandler } from 'express';
import { ApiError, operationOf } from '@sports-timing/shared';

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

/** The JSON body parser of `postPunches` (also used by the upload fast lane, so both meet the same errors). */
export function uploadJsonParser(): RequestHandler {
  return express.json({ type: JSON_TYPES, limit: UPLOAD_LIMIT_BYTES });
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
  const smallJson = express.json({ type: JSON_TYPES, limit: SMALL_BODY_LIMIT_BYTES });
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
