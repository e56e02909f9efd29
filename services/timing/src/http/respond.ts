/**
 * Small response helpers shared by the handlers.
 */
import type { Request, Response } from 'express';
import { principalOf } from '@sports-timing/shared';
import type { Principal } from '../auth/principal';
import { ifNoneMatchHits, type ReadCaching } from './read-caching';

/**
 * The caller set by access control, or null when anonymous. Takes any typed response (handlers of
 * operations without a 200 have `Response<never>`, which shared's `principalOf` does not accept).
 */
export function callerOf<T>(res: Response<T>): Principal | null {
  return principalOf<Principal>(res);
}

/** The caller of an operation whose `x-roles` exclude anonymous callers (access control guarantees one). */
export function requireCaller<T>(res: Response<T>): Principal {
  const caller = callerOf(res);
  if (!caller) throw new Error('operation without anonymous access reached its handler without a principal');
  return caller;
}

/**
 * Who holds a live connection, for the per-client share of live slots: the API key's user when there is
 * one, else the client's address (`req.ip`, which honours `TRUSTED_PROXIES`).
 */
export function liveClientOf<T>(req: Request, res: Response<T>): string {
  const caller = callerOf(res);
  return caller ? `user:${caller.userId}` : `ip:${req.ip ?? 'unknown'}`;
}

/** 201 with `Location` and a JSON body (the handler types are derived from 200 responses only). */
export function sendCreated<T>(res: Response<never>, location: string, body: T): void {
  (res as unknown as Response<T>).status(201).location(location).json(body);
}

/** 204 without a body. */
export function sendNoContent(res: Response<never>): void {
  res.status(204).end();
}

/** `app.locals` key set by the app when the validator checks responses (tests and CI). */
export const VALIDATED_RESPONSES = 'validateResponses';

/**
 * Sends a body built elsewhere (PostgreSQL) as is: explicit length so the compression filter can apply
 * its threshold, `Vary: Accept` because the format follows the Accept header, `Cache-Control: no-store`
 * unless `headers` say otherwise (Express's body-hashing ETag is off app-wide; reads use {@link sendRead}).
 * Where responses are validated (tests and CI, {@link VALIDATED_RESPONSES}), a JSON body goes through
 * `res.json` instead, parsed: the validator checks only what passes there, and the same compact JSON results.
 */
export function sendText<T>(res: Response<T>, contentType: string, body: string | Buffer, headers: Record<string, string> = {}): void {
  res.status(200);
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(body, 'utf8'));
  res.setHeader('Cache-Control', 'no-store');
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.vary('Accept');
  if (res.app.locals[VALIDATED_RESPONSES] === true && contentType.startsWith('application/json')) {
    // res.json would answer its own 304 to `If-None-Match: *`; whether an answer may be a 304 is sendRead's call.
    delete res.req.headers['if-none-match'];
    (res as Response).json(JSON.parse(body.toString()));
    return;
  }
  res.end(body);
}

/**
 * Sends a punch read with its caching headers (read-caching.ts): `304 Not Modified` without a body when the
 * answer has an `ETag` that the request's `If-None-Match` names (HEAD alike), else the body as {@link sendText}.
 */
export function sendRead<T>(
  req: Pick<Request, 'headers'>,
  res: Response<T>,
  contentType: string,
  body: string | Buffer,
  headers: Record<string, string>,
  caching: ReadCaching,
): void {
  if (sendNotModified(req, res, caching)) return;
  sendText(res, contentType, body, { ...headers, ...caching.headers });
}

/**
 * Answers `304 Not Modified` (no body, the caching headers) and returns true when the answer has an `ETag` that
 * the request's `If-None-Match` names; else sends nothing and returns false.
 */
export function sendNotModified<T>(req: Pick<Request, 'headers'>, res: Response<T>, caching: ReadCaching): boolean {
  if (!ifNoneMatchHits(req.headers['if-none-match'], caching.etag)) return false;
  res.status(304);
  for (const [k, v] of Object.entries(caching.headers)) res.setHeader(k, v);
  res.end();
  return true;
}
