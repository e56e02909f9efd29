/**
 * HTTP details that real client stacks and browsers depend on, derived from the OpenAPI document so that
 * every operation follows the same rules (stated in the `info.description` of specs/timing.yaml and specs/ordering.yaml):
 *
 * - **Content negotiation** ({@link preferredType}): media-type parameters in `Accept` (`charset=utf-8`,
 *   anything else but `q`) never block a match; the body is always UTF-8.
 * - **CORS** ({@link corsFromSpec}, the `cors` package): a *public read* — a GET operation whose `x-roles`
 *   include `anonymous` — answers any origin without credentials (`Access-Control-Allow-Origin: *`);
 *   every other operation answers only the configured origins (`CORS_ORIGINS`), with `Vary: Origin`.
 *   Preflights answer 204 with the methods of the path that the origin may use, the request headers the
 *   spec declares for them (header parameters, the security schemes' headers, `Content-Type` and
 *   `Content-Encoding` for bodies, and the document's `x-cors-request-headers`: headers that web pages and
 *   their libraries add to every request, such as `Cache-Control` or `X-Requested-With`) and `Access-Control-Max-Age`; responses expose the headers the spec
 *   declares (`X-Total-Count`, `Retry-After`, `Location`, …).
 */
import type { IncomingMessage } from 'node:http';
import accepts from 'accepts';
import cors, { type CorsOptions } from 'cors';
import type { Request, RequestHandler } from 'express';
import { ConfigError } from './config';
import { isPublicRead, resolveRef, type OpenApiDocument } from './openapi';

/**
 * The offered media type (one of `offered`, e.g. `['application/json', 'text/csv']`) the request's `Accept`
 * prefers, or false when none is acceptable. Parameters of the accepted ranges other than `q` are dropped
 * before matching, so `application/json; charset=utf-8` (the type these services send) matches
 * `application/json`; no `Accept` picks the first offered type.
 */
export function preferredType(req: IncomingMessage, offered: readonly string[]): string | false {
  const header = req.headers.accept;
  if (header === undefined) return offered[0] ?? false;
  const cleaned = header
    .split(',')
    .map((range) => {
      const [type, ...params] = range.split(';');
      const q = params.map((p) => p.trim()).find((p) => /^q\s*=/i.test(p));
      return q ? `${type.trim()};${q}` : type.trim();
    })
    .filter((range) => range.length > 0)
    .join(',');
  const match: string | string[] | false = accepts({ headers: { accept: cleaned } } as IncomingMessage).type([...offered]);
  return Array.isArray(match) ? (match[0] ?? false) : match;
}

/** HTTP methods of OpenAPI path items. */
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** An operation as far as CORS is concerned. */
interface CorsOperation {
  /** A public read: any origin, no credentials. */
  public: boolean;
  /** Request headers the operation reads (lower case). */
  requestHeaders: string[];
  /** Response headers the operation sends (as spelled in the spec). */
  responseHeaders: string[];
}

/** A spec path with its operations by upper-case method (HEAD answers as GET). */
interface CorsPath {
  pattern: RegExp;
  operations: Map<string, CorsOperation>;
}

type Schemes = Record<string, { type?: string; in?: string; name?: string; scheme?: string }>;
type Param = { in?: string; name?: string; $ref?: string };

function corsPaths(spec: OpenApiDocument): CorsPath[] {
  // Headers browser pages send on their own (`x-cors-request-headers` of the document), allowed on every operation.
  const pageHeaders = ((spec['x-cors-request-headers'] as string[] | undefined) ?? []).map((h) => h.toLowerCase());
  const schemes = (spec.components as { securitySchemes?: Schemes } | undefined)?.securitySchemes ?? {};
  const schemeHeader = (name: string): string | undefined => {
    const s = schemes[name];
    if (s?.type === 'apiKey' && s.in === 'header' && s.name) return s.name.toLowerCase();
    if (s?.type === 'http' || s?.type === 'oauth2' || s?.type === 'openIdConnect') return 'authorization';
    return undefined;
  };
  return Object.entries(spec.paths).map(([path, item]) => {
    const pattern = new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`);
    const shared = ((item as { parameters?: Param[] }).parameters ?? []).map((p) => resolveRef(spec, p));
    const operations = new Map<string, CorsOperation>();
    for (const method of METHODS) {
      const op = (item as Record<string, Record<string, unknown> | undefined>)[method];
      if (!op) continue;
      const params = [...shared, ...((op.parameters as Param[] | undefined) ?? []).map((p) => resolveRef(spec, p))];
      const requestHeaders = new Set([...pageHeaders, ...params.filter((p) => p.in === 'header' && p.name).map((p) => p.name!.toLowerCase())]);
      const security = (op.security as Record<string, unknown>[] | undefined) ?? (spec.security as Record<string, unknown>[] | undefined) ?? [];
      for (const requirement of security)
        for (const name of Object.keys(requirement)) {
          const header = schemeHeader(name);
          if (header) requestHeaders.add(header);
        }
      if (op.requestBody) {
        requestHeaders.add('content-type');
        requestHeaders.add('content-encoding');
      }
      const responseHeaders = new Set<string>();
      for (const response of Object.values((op.responses as Record<string, { headers?: Record<string, unknown> }>) ?? {})) {
        for (const header of Object.keys(resolveRef(spec, response)?.headers ?? {})) responseHeaders.add(header);
      }
      operations.set(method.toUpperCase(), { public: isPublicRead(method, op), requestHeaders: [...requestHeaders], responseHeaders: [...responseHeaders] });
    }
    return { pattern, operations };
  });
}

/** Parses `CORS_ORIGINS`: a comma list of origins (`https://shop.example.com`, scheme + host + port). */
export function parseCorsOrigins(value: string | undefined): string[] {
  const origins: string[] = [];
  for (const entry of (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new ConfigError('CORS_ORIGINS', value ?? '', 'a comma list of origins such as https://shop.example.com');
    }
    if (!['http:', 'https:'].includes(url.protocol) || url.origin !== entry.replace(/\/$/, '')) {
      throw new ConfigError('CORS_ORIGINS', value ?? '', 'a comma list of origins such as https://shop.example.com (no path)');
    }
    origins.push(url.origin);
  }
  return origins;
}

/** Seconds a browser may cache a preflight answer. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * CORS for every operation of `spec` (see the module comment). `origins` are the configured origins of
 * the non-public operations (`CORS_ORIGINS`). Requests without `Origin`, and paths the spec does not
 * have, pass untouched; a preflight for a method the origin may not use gets no CORS headers (the browser
 * then refuses the request) and goes on to the normal 404/405.
 */
export function corsFromSpec(spec: OpenApiDocument, origins: readonly string[]): RequestHandler {
  const paths = corsPaths(spec);
  const allowed = new Set(origins);
  const lookup = (req: Request): { path: CorsPath; method: string } | undefined => {
    const preflight = req.method === 'OPTIONS' ? req.headers['access-control-request-method'] : undefined;
    const method = (preflight ?? req.method).toUpperCase();
    const path = paths.find((p) => p.pattern.test(req.path));
    return path && { path, method: method === 'HEAD' ? 'GET' : method };
  };
  const options = (req: Request): CorsOptions | undefined => {
    const found = lookup(req);
    if (!found) return undefined;
    const op = found.path.operations.get(found.method);
    if (!op) return undefined;
    const usable = [...found.path.operations.entries()].filter(([, o]) => o.public || allowed.has(String(req.headers.origin)));
    const common = {
      methods: [...new Set(usable.flatMap(([m]) => (m === 'GET' ? ['GET', 'HEAD'] : [m])))],
      allowedHeaders: [...new Set(usable.flatMap(([, o]) => o.requestHeaders))],
      exposedHeaders: [...new Set(['X-Request-Id', ...op.responseHeaders])],
      maxAge: PREFLIGHT_MAX_AGE_SECONDS,
      optionsSuccessStatus: 204,
      credentials: false,
    };
    if (op.public) return { ...common, origin: '*' };
    return { ...common, origin: [...allowed] };
  };
  const handle = cors((req, callback) => {
    const o = options(req as Request);
    // `origin: false` makes the package pass the request on without CORS headers.
    callback(null, o ?? { origin: false });
  });
  return (req, res, next) => {
    if (req.headers.origin === undefined) return next();
    return handle(req, res, next);
  };
}
