/**
 * Sends a shared punch answer with its gzip encoding made once per answer (read-cache.ts `derive`), so that
 * identical requests under one visible head cost one compression, not one each. The rule is the spec's
 * (`info.description` "Compression", http/compression.ts): gzip at level {@link GZIP_LEVEL} for bodies of at
 * least {@link GZIP_THRESHOLD_BYTES} when the client accepts gzip. An answer that is not shared goes out plain
 * and the compression middleware encodes it by the same rule.
 */
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Request, Response } from 'express';
import type { PunchReadResult } from '../punches/punches.service';
import { GZIP_LEVEL, GZIP_THRESHOLD_BYTES } from './compression';
import { sendText } from './respond';

const gzip = promisify(zlib.gzip);

/** Sends `answer` as `contentType` (plus `headers`), gzip-encoded from its shared encoding when the client accepts it. */
export async function sendSharedAnswer<T>(
  req: Pick<Request, 'acceptsEncodings'>,
  res: Response<T>,
  contentType: string,
  answer: PunchReadResult,
  headers: Record<string, string> = {},
): Promise<void> {
  const plain = answer.body;
  // The gzip middleware has reduced Accept-Encoding to "gzip" or "identity" (compression.ts).
  if (answer.derive && Buffer.byteLength(plain) >= GZIP_THRESHOLD_BYTES && req.acceptsEncodings('gzip') === 'gzip') {
    const body = await answer.derive('gzip', () => gzip(plain, { level: GZIP_LEVEL }));
    res.vary('Accept-Encoding');
    // Set before the body: the compression middleware leaves an encoded answer alone.
    res.setHeader('Content-Encoding', 'gzip');
    sendText(res, contentType, body, headers);
    return;
  }
  sendText(res, contentType, plain, headers);
}
