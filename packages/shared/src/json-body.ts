/**
 * Pre-serialized JSON answers for hot, cached reads (the shop article list at 500 req/s): the body
 * is serialized once per cached value, and compressed once on first demand, instead of on every request.
 */
import { gzipSync } from 'node:zlib';
import type { Request, Response } from 'express';

/** Bodies below this size (bytes) are sent uncompressed, like the app's `compression` threshold. */
export const GZIP_MIN_BYTES = 1024;

/** A JSON value with its UTF-8 body, and the gzip of that body made on first use. */
export class JsonBody<T> {
  /** `JSON.stringify(value)` as UTF-8. */
  readonly bytes: Buffer;
  private gzipped: Buffer | undefined;

  constructor(readonly value: T) {
    this.bytes = Buffer.from(JSON.stringify(value));
  }

  /** The gzip of {@link bytes} (computed once). */
  gzip(): Buffer {
    this.gzipped ??= gzipSync(this.bytes);
    return this.gzipped;
  }
}

/**
 * Sends `body` as `application/json`: gzip-encoded when the client accepts gzip (RFC 9110 §12.5.3) and the
 * body reaches {@link GZIP_MIN_BYTES}, else as is. The `compression` middleware leaves an answer that
 * already has a `Content-Encoding` alone. Response validation (tests, CI) only sees bodies given to
 * `res.json`, so the handler passes `body.value` there when it is on.
 */
export function sendJsonBody(req: Request, res: Response, body: JsonBody<unknown>): void {
  res.vary('Accept-Encoding');
  res.type('application/json');
  if (body.bytes.length >= GZIP_MIN_BYTES && req.acceptsEncodings('gzip', 'identity') === 'gzip') {
    res.setHeader('Content-Encoding', 'gzip');
    res.send(body.gzip());
    return;
  }
  res.send(body.bytes);
}
