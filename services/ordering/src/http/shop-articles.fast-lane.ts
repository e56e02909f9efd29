/**
 * The fast lane of `listShopArticles` (tag `shop`; the article list has a latency target in BENCHMARKS.md):
 * the web shop's most frequent read, answered from the in-process article-list cache, served before
 * Express sets the request up (packages/shared fast-lane.ts) and without the pipeline behind it (request
 * logger, metrics middleware, spec validator with its access, gate and parser middleware, compression,
 * dispatcher). That pipeline cost more CPU, and more garbage (the
 * collector's pauses were the list's latency tail), than the cached answer itself.
 *
 * It takes only the plain anonymous case: `GET /api/grpc-json/v1/shop/articles`, optionally with
 * `includeUnavailableArticles` and `includeSubitemArticles` (each at most once, `true` or `false`), no
 * `Authorization`, no service-client header, an `Accept-Language` the spec accepts, an `Accept` that allows
 * JSON, and maintenance mode off. The parameter schemas are read from the loaded spec and compiled once when
 * the app is built ({@link compileShopArticlesLaneRules}), so a change of the spec changes the lane with it. Everything else — a filter, a token, a client
 * identifier, maintenance mode, and any failure while loading the list — goes on to the full pipeline,
 * which answers it from scratch, so validation, access control, the maintenance gate and error mapping
 * have one implementation, the pipeline's. The fast lane repeats what a successful anonymous list does
 * there: the same service call (`shopArticleListBody` for the `public` group), the same headers
 * (`X-Request-Id`, `Content-Type`, `Content-Length`, `Vary`), gzip when accepted, the request metrics and
 * the request log line. test/shop-articles.fast-lane.test.ts compares both paths response by response.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import accepts from 'accepts';
import type { Logger } from 'pino';
import {
  compileTextCheck,
  findOperation,
  operationParameters,
  GZIP_MIN_BYTES,
  resolveRef,
  sendFastLaneAnswer,
  specValue,
  type AppMetrics,
  type Database,
  type FastLane,
  type OpenApiDocument,
} from '@sports-timing/shared';
import type { ArticleListCache } from '../catalog/catalog-caches';
import { shopArticleListBody, type ShopArticleQuery } from '../catalog/catalog.service';
import { parseAcceptLanguage } from '../culture/culture';
import type { DB } from '../db/schema';
import { SERVICE_CLIENT_HEADERS } from '../identity/access';
import type { MaintenanceMode } from '../maintenance/maintenance.service';

/** What the fast lane needs. */
export interface ShopArticlesFastLaneDeps {
  /** The loaded ordering spec, the one the request validator uses: the lane's rules come from it. */
  spec: OpenApiDocument;
  database: Database<DB>;
  /** The app's article list cache, the one its `listShopArticles` handler answers from. */
  articleLists: ArticleListCache;
  maintenance: MaintenanceMode;
  metrics: AppMetrics;
  logger: Logger;
  /** `HTTP_LOG`, read when the app was built: one log line per answer, as the pipeline's request logger writes. */
  httpLog: boolean;
}

/** The flags of a list query the lane reads, as the service takes them. */
type ListFlags = Pick<ShopArticleQuery, 'includeUnavailableArticles' | 'includeSubitemArticles'>;
const FLAGS: readonly (keyof ListFlags)[] = ['includeUnavailableArticles', 'includeSubitemArticles'];

/** What the lane takes as plain, compiled from the spec once (see {@link compileShopArticlesLaneRules}). */
interface ShopArticlesLaneRules {
  /**
   * The flags of a plain list request's query (`search`: the part after `?`, '' for none), or null when the
   * request must take the pipeline (another parameter, a repeated one, or a value the spec's schema refuses).
   */
  plainListQuery: (search: string) => ListFlags | null;
  /** Whether an `Accept-Language` header (undefined: none) is plainly valid by the spec's `AcceptLanguage`. */
  plainAcceptLanguage: (value: string | undefined) => boolean;
}

/**
 * The lane's rules from the loaded ordering spec (the document the request validator uses): the boolean
 * query flags of `listShopArticles` that the spec declares (a flag it no longer declares, or no longer as a
 * boolean, is not taken) and its `Accept-Language` schema. Throws when the spec uses a schema keyword the lane
 * cannot check (shared fast-lane.ts).
 * @internal
 */
export function compileShopArticlesLaneRules(spec: OpenApiDocument): ShopArticlesLaneRules {
  const flags = new Map<string, (value: string) => boolean>();
  // A flag left out of the query takes its spec `default`, as the validator fills it in on the pipeline; a flag
  // the spec does not declare is off.
  const defaults: ListFlags = { includeUnavailableArticles: false, includeSubitemArticles: false };
  let acceptLanguage: (value: string) => boolean = () => true;
  const { path, method } = findOperation(spec, 'listShopArticles');
  for (const p of operationParameters(spec, path, method)) {
    const where = `listShopArticles ${p.name}`;
    if (p.in === 'query' && (FLAGS as readonly string[]).includes(p.name) && resolveRef(spec, p.schema).type === 'boolean') {
      flags.set(p.name, compileTextCheck(spec, p.schema, where));
      defaults[p.name as keyof ListFlags] = specValue<boolean>(resolveRef(spec, p.schema), 'default', where);
    }
    if (p.in === 'header' && p.name.toLowerCase() === 'accept-language') acceptLanguage = compileTextCheck(spec, p.schema, where);
  }
  return {
    plainListQuery(search) {
      const result: ListFlags = { ...defaults };
      if (search === '') return result;
      const seen = new Set<string>();
      for (const part of search.split('&')) {
        const eq = part.indexOf('=');
        const name = eq < 0 ? part : part.slice(0, eq);
        const value = eq < 0 ? undefined : part.slice(eq + 1);
        const check = flags.get(name);
        if (seen.has(name) || check === undefined || value === undefined || !check(value)) return null;
        seen.add(name);
        result[name as keyof ListFlags] = value === 'true';
      }
      return result;
    },
    plainAcceptLanguage: (value) => value === undefined || acceptLanguage(value),
  };
}

/**
 * The fast lane, run before the Express app (app.ts): serves plain anonymous article lists itself and passes
 * every other request on untouched (see the module comment).
 */
export function shopArticlesFastLane(deps: ShopArticlesFastLaneDeps): FastLane {
  const { plainListQuery, plainAcceptLanguage } = compileShopArticlesLaneRules(deps.spec);
  // The path of `listShopArticles`, found by operationId in the spec the lane serves.
  const PATH = findOperation(deps.spec, 'listShopArticles').path;
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
    if (!plainAcceptLanguage(acceptLanguage)) return next();
    const negotiator = accepts(req);
    if (!negotiator.type(['application/json'])) return next();
    const gzipAccepted = h['accept-encoding'] !== undefined && negotiator.encoding(['gzip', 'identity']) === 'gzip';
    serve(deps, req, res, start, gzipAccepted, {
      ...flags,
      callerGroup: 'public',
      filterByArticleNumbers: undefined,
      preferences: parseAcceptLanguage(acceptLanguage),
    }).then(
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
  const list = await shopArticleListBody(deps.database.db, deps.articleLists, query);
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
