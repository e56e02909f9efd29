/**
 * Request details of the ROC operations (docs/roc.md) that the spec's path matching cannot express.
 */
import type { Request, RequestHandler } from 'express';

/**
 * The ROC file names as the spec spells them. The original ROC server (IIS) matches them without regard to
 * case, and RadioSender asks for `/getPunches.asp`.
 */
const ROC_FILES = ['getpunches.asp', 'sendpunches_v2.php'];

/** Matches a path ending in a ROC file name in any case (`/getPunches.asp`, `/roc/key/…/SENDPUNCHES_V2.PHP`). */
const ROC_FILE_PATH = new RegExp(`/(${ROC_FILES.map((f) => f.replace('.', '\\.')).join('|')})(?=$|\\?)`, 'i');

/** Middleware before the validator: rewrites a ROC file name in any case to the spec's lower-case one. */
export const rocFileNames: RequestHandler = (req, _res, next) => {
  const m = ROC_FILE_PATH.exec(req.url);
  if (m && m[1] !== m[1].toLowerCase()) req.url = req.url.slice(0, m.index + 1) + m[1].toLowerCase() + req.url.slice(m.index + 1 + m[1].length);
  next();
};

/**
 * The API key in the path of the ROC operations (`/roc/key/{key}/…`, spec parameter `RocKeyPath`), as the
 * validator's metadata resolved it; undefined on every other operation or when empty.
 */
export function rocPathKey(req: Request): string | undefined {
  const key = (req as Request & { openapi?: { pathParams?: Record<string, string> } }).openapi?.pathParams?.key;
  return typeof key === 'string' && key.trim() !== '' ? key.trim() : undefined;
}
