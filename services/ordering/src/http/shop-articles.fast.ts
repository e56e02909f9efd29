/**
 * The fast lane of `listShopArticles` (ordering spec §4.3; the article list has a latency target in BENCHMARKS.md):
 * the web shop's most frequent read, answered from the in-process article-list cache, served before
 * Express sets the request up (packages/shared fast-lane.ts) and without the pipeline behind it (request
 * logger, metrics middleware, spec validator with its access, gate and parser middleware, compression,
 * dispatcher). That pipeline cost more CPU, and more garbage (the
 * collector's pauses were the list's latency tail), than the cached answer itself.
 *
 * It takes only the plain anonymous case: `GET /api/grpc-json/v1/shop/articles`, optionally with
 * `includeUnavailableArticles` and `includeSubitemArticles` (each at most once, `true` or `false`), no
 * `Authorization`, no service-client header, an `Accept-Language` within the spec's 500 characters, an
 * `Accept` that allows JSON, and maintenance mode off. Everything else — a filter, a token, a client
 * identifier, maintenance mode, and any failure while loading the list — goes on to the full pipeline,
 * which answers it from scratch, so validation, access control, the maintenance gate and error mapping
 * have one implementation, the pipeline's. The fast lane repeats what a successful anonymous list does
 * there: the same service call (`shopArticleListBody` for the `public` group), the same headers
 * (`X-Request-Id`, `Content-Type`, `Content-Length`, `Vary`), gzip when accepted, the request metrics and
 * the request log line. test/shop-articles.fast.test.ts compares both paths response by response.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import accepts from 'accepts';
import type { Logger } from 'pino';
import { sendFastLaneAnswer, type AppMetrics, type Database, type FastLane } from '@sports-timing/shared';
import { shopArticleListBody, type ShopArticleQuery } from '../catalog/catalog.service';
import { parseAcceptLanguage } from '../catalog/culture';
import type { DB } from '../db/schema';
import { SERVICE_CLIENT_HEADERS } from '../identity/access';
import type { MaintenanceMode } from '../maintenance/maintenance.service';
import { GZIP_MIN_BYTES } from './json-body';

/** Path of `listShopArticles`. */
const PATH = '/api/grpc-json/v1/shop/articles';

/** Longest `Accept-Language` the spec accepts (parameter `AcceptLanguage`). */
const ACCEPT_LANGUAGE_MAX_LENGTH = 500;

/** What the fast lane needs. */
export interface ShopArticlesFastLaneDeps {
  database: Database<DB>;
  maintenance: MaintenanceMode;
  metrics: AppMetrics;
  logger: Logger;
}

/**
 * The flags of a plain list request's query (`search`: the part after `?`, '' for none), or null when the
 * request must take the pipeline (another parameter, a repeated one, or a value other than true/false).
 */
export function plainListQuery(search: string): Pick<ShopArticleQuery, 'includeUnavailableArticles' | 'includeSubitemArticles'> | null {
  const flags = { includeUnavailableArticles: false, includeSubitemArticles: false };
  if (search === '') return flags;
  const seen = new Set<string>();
  for (const part of search.split('&')) {
    const eq = part.indexOf('=');
    const name = eq < 0 ? part : part.slice(0, eq);
    const value = eq < 0 ? undefined : part.slice(eq + 1);
    if (seen.has(name) || (name !== 'includeUnavailableArticles' && name !== 'includeSubitemArticles')) return null;
    seen.add(name);
    if (value !== 'true' && value !== 'false') return null;
    flags[name] = value === 'true';
  }
  return flags;
}

/**
 * The fast lane, run before the Express app (app.ts): serves plain anonymous article lists itself and passes
 * every other request on untouched (see the module comment).
 */
export function shopArticlesFastLane(deps: ShopArticlesFastLaneDeps): FastLane {
  return (req, res, next) => {
    // Request duration as the metrics middleware measures it: from arrival.
    const start = process.hrtime.bigint();
    const url = req.url ?? '';
    // Browser requests (CORS headers) take the pipeline.
    if (req.method !== 'GET' || !url.startsWith(PATH) || req.headers.origin !== undefined) return next();
    const rest = url.slice(PATH.length);
    if (rest !== '' && rest[0] !== '?') return next();
    const flags = plainListQuery(rest.slice(1));
    if (flags === null) return next();
    const h = req.headers;
    if (h.authorization !== undefined || SERVICE_CLIENT_HEADERS.some((name) => h[name] !== undefined)) return next();
    const acceptLanguage = h['accept-language'];
    if (acceptLanguage !== undefined && acceptLanguage.length > ACCEPT_LANGUAGE_MAX_LENGTH) return next();
    const negotiator = accepts(req);
    if (!negotiator.type(['application/json'])) return next();
    const gzipAccepted = h['accept-encoding'] !== undefined && negotiator.encoding(['gzip', 'identity']) === 'gzip';
    serve(deps, req, res, start, gzipAccepted, { ...flags, callerGroup: 'public', filterByArticleNumbers: undefined, preferences: parseAcceptLanguage(acceptLanguage) }).then(
      (served) => {
        if (!served) next();
      },
      // Nothing has been sent yet: the pipeline answers from the start (and maps the error).
      () => next(),
    );
  };
}

/** Answers the list; false (nothing sent) when maintenance mode is on, so that the pipeline answers 503. */
async function serve(
  deps: ShopArticlesFastLaneDeps,
  req: IncomingMessage,
  res: ServerResponse,
  start: bigint,
  gzipAccepted: boolean,
  query: ShopArticleQuery,
): Promise<boolean> {
  if (await deps.maintenance.isOn()) return false;
  const list = await shopArticleListBody(deps.database.db, query);
  const gzip = list.bytes.length >= GZIP_MIN_BYTES && gzipAccepted;
  const body = gzip ? list.gzip() : list.bytes;
  sendFastLaneAnswer(deps, req, res, start, 'listShopArticles', body, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': body.length,
    Vary: 'Accept-Encoding',
    ...(gzip ? { 'Content-Encoding': 'gzip' } : {}),
  });
  return true;
}
