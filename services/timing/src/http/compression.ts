/**
 * Response compression as specs/timing.yaml states it (`info.description` "Compression"): gzip only, only for
 * application/json, text/csv, text/xml and text/plain (the ROC answers), bodies of at least 1 KiB, at a low level (cheap CPU per page,
 * docs/decisions.md §7).
 */
import compression from 'compression';
import type { Request, RequestHandler, Response } from 'express';

/** Smallest body that is compressed (bytes). */
export const GZIP_THRESHOLD_BYTES = 1024;

/** zlib level: 1 is the fastest; punch JSON/CSV still shrinks ~5×. */
export const GZIP_LEVEL = 1;

const COMPRESSIBLE = /^(application\/json|text\/csv|text\/xml|text\/plain)\s*(;|$)/i;

function compressible(_req: Request, res: Response): boolean {
  const type = res.getHeader('Content-Type');
  return typeof type === 'string' && COMPRESSIBLE.test(type);
}

/**
 * The `compression` middleware, restricted to gzip. It would otherwise prefer brotli (and offer deflate)
 * for clients that list them; so the request's Accept-Encoding is reduced first to "gzip" when gzip is
 * acceptable and to "identity" otherwise. Nothing else reads that header.
 */
export function gzipResponses(): RequestHandler[] {
  const onlyGzip: RequestHandler = (req, _res, next) => {
    if (req.headers['accept-encoding'] !== undefined) {
      req.headers['accept-encoding'] = req.acceptsEncodings('gzip') === 'gzip' ? 'gzip' : 'identity';
    }
    next();
  };
  return [onlyGzip, compression({ level: GZIP_LEVEL, threshold: GZIP_THRESHOLD_BYTES, filter: compressible })];
}
