/**
 * Spec-driven HTTP plumbing: load a hand-written OpenAPI document, validate requests (and, in tests and
 * CI, responses) with express-openapi-validator, and dispatch each validated request to the handler named
 * by its `operationId`. Handlers are typed from openapi-typescript's `operations[...]`.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import yaml from 'js-yaml';
import { ApiError, validationError } from './errors';
import { findForbiddenText, isStrictInteger, isStrictNumber, TEXT_FORMATS } from './text-rules';

/** A parsed OpenAPI document (plain object). */
export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> };

/**
 * Whether an operation is a *public read*: a GET whose `x-roles` include `anonymous`. Public reads answer
 * any browser origin (browser-http.ts) and ignore undeclared query parameters ({@link validator}).
 */
export function isPublicRead(method: string, operation: Record<string, unknown>): boolean {
  const roles = operation['x-roles'];
  return method.toLowerCase() === 'get' && Array.isArray(roles) && roles.includes('anonymous');
}

/** `value`, or what its local `$ref` (`#/components/…`) points at in `spec`. */
export function resolveRef<T>(spec: OpenApiDocument, value: T & { $ref?: string }): T {
  if (typeof value?.$ref !== 'string' || !value.$ref.startsWith('#/')) return value;
  let node: unknown = spec;
  for (const part of value.$ref.slice(2).split('/')) node = (node as Record<string, unknown>)?.[part];
  return node as T;
}

/** Reads and parses a YAML OpenAPI file (absolute path). */
export function loadSpec(file: string): OpenApiDocument {
  return yaml.load(readFileSync(file, 'utf8')) as OpenApiDocument;
}

/** Options of {@link validator}. */
export interface ValidatorOptions {
  /** Validate responses against the spec (tests and CI only; costs time in production). */
  validateResponses?: boolean;
  /**
   * Middleware run once the operation is known (`req.openapi` set, unknown paths already 404/405) but
   * before request validation: access control first, so that a secured operation answers 401/403 to a
   * caller without rights whatever the body, and body parsers after it, so that such callers never make
   * the service read a body.
   */
  beforeValidation?: RequestHandler[];
}

type PathToRegexp = (path: unknown, options?: Record<string, unknown>) => unknown;

/** Most memoized compilations; far above the number of paths of any spec (a bound, not a tuning knob). */
const PATH_REGEXP_MEMO_MAX = 10_000;

/**
 * express-openapi-validator 5 compiles every spec path with path-to-regexp on every request until one
 * matches (`lookupRoute` in its metadata middleware): with the ordering spec's 78 paths that was the largest
 * per-request cost and garbage source of a cached read. The compiled `{ regexp, keys }` depends only
 * on the path and the options and is used read-only (`regexp` has no `g`/`y` flag), so the validator's
 * `pathToRegexp` is memoized, once per process. Express' router compiles through its own `match` and is
 * not affected.
 */
function memoizeValidatorPathToRegexp(): void {
  const fromValidator = createRequire(require.resolve('express-openapi-validator'));
  const mod = fromValidator('path-to-regexp') as { pathToRegexp: PathToRegexp & { memoized?: true } };
  if (mod.pathToRegexp.memoized) return;
  const compile = mod.pathToRegexp;
  const memo = new Map<string, unknown>();
  const memoized: PathToRegexp & { memoized?: true } = (path, options) => {
    if (typeof path !== 'string') return compile(path, options);
    const key = `${path}\u0000${JSON.stringify(options ?? {})}`;
    let compiled = memo.get(key);
    if (compiled === undefined) {
      if (memo.size >= PATH_REGEXP_MEMO_MAX) memo.clear();
      compiled = compile(path, options);
      memo.set(key, compiled);
    }
    return compiled;
  };
  memoized.memoized = true;
  mod.pathToRegexp = memoized;
}

/** express-openapi-validator configured the way docs/decisions.md §2 requires (no stripping, no security handling). */
export function validator(spec: OpenApiDocument, opts: ValidatorOptions = {}): RequestHandler[] {
  memoizeValidatorPathToRegexp();
  const apiSpec = structuredClone(spec);
  lenientPublicReads(apiSpec);
  itemsCheckedAlone(apiSpec);
  const chain = OpenApiValidator.middleware({
    apiSpec: apiSpec as never,
    // allErrors: a rejected batch or form lists every bad field, not only the first. coerceTypes false: JSON
    // bodies are taken as typed (`"quantity": "1"` is a 400); the validator always coerces parameters (query,
    // path, header text), after strictNumbers has held integers to decimal digits.
    validateRequests: { allowUnknownQueryParameters: false, coerceTypes: false, removeAdditional: false, allErrors: true },
    validateResponses: opts.validateResponses ? { removeAdditional: false } : false,
    validateSecurity: false,
    ignoreUndocumented: false,
    validateFormats: true,
    formats: Object.fromEntries(Object.entries(TEXT_FORMATS).map(([name, validate]) => [name, { type: 'string', validate }])),
    // 'bundle' keeps $refs: recursive schemas (order items with subitems) cannot be dereferenced.
    $refParser: { mode: 'bundle' },
  }) as unknown as RequestHandler[];
  const at = chain.findIndex((mw) => mw.name === 'metadataMiddleware');
  if (at < 0) throw new Error('express-openapi-validator changed: metadataMiddleware not found');
  // The input rules run after access control (a caller without rights gets 401/403 whatever it sends).
  chain.splice(at + 1, 0, rejectMisspelledQueryNames(spec), ...(opts.beforeValidation ?? []), strictNumbers(spec), rejectForbiddenText, commaLists(spec));
  return [headAsGet, rejectPrototypeQueryNames, ...chain];
}

/**
 * Marks of a request on the request itself (never in a module-level set, test/no-registries.test.ts): it
 * arrived as HEAD (answered as its GET, see {@link headAsGet}); it reached its handler through {@link dispatch}.
 */
const ARRIVED_AS_HEAD = Symbol('arrived as HEAD');
const DISPATCHED = Symbol('dispatched');

/** A request with the marks above. */
type MarkedRequest = Request & { [ARRIVED_AS_HEAD]?: true; [DISPATCHED]?: true };

/**
 * Every GET operation also answers HEAD (RFC 9110 §9.3.2): the request is validated, authorised and
 * handled as its GET, and Node sends the GET's status and headers without the body (it decides that from
 * the method the request arrived with). Handlers that would hold the connection open (streams, long polls)
 * ask {@link isHeadRequest} and answer at once.
 */
const headAsGet: RequestHandler = (req, _res, next) => {
  if (req.method === 'HEAD') {
    (req as MarkedRequest)[ARRIVED_AS_HEAD] = true;
    req.method = 'GET';
  }
  next();
};

/** Whether `req` arrived as HEAD and is being answered as its GET. */
export function isHeadRequest(req: Request): boolean {
  return (req as MarkedRequest)[ARRIVED_AS_HEAD] === true;
}

/**
 * Public reads (GET operations open to anonymous callers, the ones browsers and live-result pages call)
 * ignore query parameters they do not declare, as the original SPORTident Center API does: jQuery's cache
 * buster `_=1700000000` and tracking parameters must not break a page. Every other operation rejects
 * unknown parameters with 400.
 */
function lenientPublicReads(spec: OpenApiDocument): void {
  for (const item of Object.values(spec.paths)) {
    const get = item.get as Record<string, unknown> | undefined;
    if (get && isPublicRead('get', get)) get['x-eov-allow-unknown-query-parameters'] = true;
  }
}

/**
 * A request body array marked `x-items-checked-alone: true` (timing's punch uploads) is validated as an array
 * (its type and length) but not item by item: the service checks each element against the `items` schema on
 * its own, keeps the valid ones and reports the others, so one invalid element does not refuse the rest.
 */
function itemsCheckedAlone(spec: OpenApiDocument): void {
  for (const item of Object.values(spec.paths)) {
    for (const op of Object.values(item) as { requestBody?: { content?: Record<string, { schema?: Record<string, unknown> }> } }[]) {
      for (const media of Object.values(op?.requestBody?.content ?? {})) {
        if (media.schema?.['x-items-checked-alone'] === true) media.schema.items = {};
      }
    }
  }
}

/**
 * The limit of that leniency: an undeclared query parameter that differs from a declared one only in case
 * (`afterid=5` for `afterId`) is a 400 on every operation, because ignoring it would silently change the
 * answer (a poller would start again from the first punch).
 */
function rejectMisspelledQueryNames(spec: OpenApiDocument): RequestHandler {
  return (req, _res, next) => {
    const params = (operationOf(req)?.parameters as { $ref?: string; name?: string; in?: string }[] | undefined) ?? [];
    const declared = params
      .map((p) => resolveRef(spec, p))
      .filter((p) => p?.in === 'query' && typeof p.name === 'string')
      .map((p) => p.name as string);
    const q = req.url.indexOf('?');
    if (q < 0 || declared.length === 0) return next();
    for (const name of new URLSearchParams(req.url.slice(q + 1)).keys()) {
      if (declared.includes(name)) continue;
      const meant = declared.find((d) => d.toLowerCase() === name.toLowerCase());
      if (meant)
        return next(
          validationError(
            { [name]: [`Unknown query parameter '${name}'; did you mean '${meant}'?`] },
            `Unknown query parameter '${name}'; did you mean '${meant}'?`,
          ),
        );
    }
    next();
  };
}

/**
 * 400 for a query parameter named like an `Object.prototype` member (`constructor`, `toString`,
 * `__proto__`, …): the validator looks parameter names up in plain objects, takes such a name for a
 * declared parameter and then fails with a 500. No spec declares such a parameter, so the answer is the
 * validator's own for any unknown query parameter.
 */
const rejectPrototypeQueryNames: RequestHandler = (req, _res, next) => {
  const q = req.url.indexOf('?');
  if (q < 0) return next();
  for (const name of new URLSearchParams(req.url.slice(q + 1)).keys()) {
    if (name in Object.prototype) return next(validationError({ [name]: [`Unknown query parameter '${name}'`] }, `${name} Unknown query parameter '${name}'`));
  }
  next();
};

/**
 * Integer and number parameters (query, path, header) as the specs state them ("Text and numbers"): the
 * validator would coerce `0x10`, `0b11`, `1e3`, ` 5` and `1e309` (Infinity) into numbers, so the raw text is
 * held to decimal digits first (integers within int64, a `-` only where the schema admits negatives; numbers
 * decimal with an optional fraction and exponent, finite). The validator then checks the schema's bounds.
 */
function strictNumbers(spec: OpenApiDocument): RequestHandler {
  return (req, _res, next) => {
    const meta = (req as Request & { openapi?: { pathParams?: Record<string, string>; schema?: { parameters?: unknown[] } } }).openapi;
    const params = (meta?.schema?.parameters as { $ref?: string; name?: string; in?: string; schema?: Record<string, unknown> }[] | undefined) ?? [];
    let query: URLSearchParams | undefined;
    for (const raw of params) {
      const p = resolveRef(spec, raw);
      const schema = p?.schema && resolveRef(spec, p.schema as Record<string, unknown> & { $ref?: string });
      const type = schema?.type;
      if (!schema || (type !== 'integer' && type !== 'number') || typeof p.name !== 'string') continue;
      let values: string[];
      if (p.in === 'query') values = (query ??= new URLSearchParams(req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '')).getAll(p.name);
      else if (p.in === 'path') values = meta?.pathParams?.[p.name] !== undefined ? [meta.pathParams[p.name]] : [];
      else if (p.in === 'header') values = req.headers[p.name.toLowerCase()] !== undefined ? [String(req.headers[p.name.toLowerCase()])] : [];
      else continue;
      const negative = !(typeof schema.minimum === 'number' && schema.minimum >= 0);
      for (const v of values) {
        const ok = type === 'integer' ? isStrictInteger(v, negative) : isStrictNumber(v, negative);
        if (!ok) {
          const what =
            type === 'integer'
              ? `a decimal integer${negative ? '' : ' without sign'} within 64 bits`
              : `a finite decimal number${negative ? '' : ' without sign'}`;
          return next(validationError({ [p.name]: [`${p.name} must be ${what}.`] }, `${p.name} must be ${what}.`));
        }
      }
    }
    next();
  };
}

/**
 * A comma-list query parameter (`type: array`, `style: form`, `explode: false`, e.g. `OrderStatesFilter`) as
 * the specs describe it: one occurrence whose value is the comma-separated list. Given more than once it is a
 * 400 (the validator would join the occurrences into one list). Given once and empty (`states=`) with
 * `allowEmptyValue`, it means the empty list ("Empty or absent means all states"): the validator would read
 * one empty item and refuse it against the items' enum, so the empty pair is taken out of the query before
 * validation and the handler sees the parameter absent. An empty item inside a list (`paid,`) is still a 400.
 */
function commaLists(spec: OpenApiDocument): RequestHandler {
  return (req, _res, next) => {
    const q = req.url.indexOf('?');
    if (q < 0) return next();
    type Param = { $ref?: string; name?: string; in?: string; allowEmptyValue?: boolean; style?: string; explode?: boolean; schema?: unknown };
    const lists = ((operationOf(req)?.parameters as Param[] | undefined) ?? [])
      .map((p) => resolveRef(spec, p))
      .filter((p) => p?.in === 'query' && p.explode === false && resolveRef(spec, (p.schema ?? {}) as { type?: unknown; $ref?: string }).type === 'array');
    if (lists.length === 0) return next();
    const query = new URLSearchParams(req.url.slice(q + 1));
    let pairs = req.url.slice(q + 1).split('&');
    for (const p of lists) {
      const name = p.name as string;
      const values = query.getAll(name);
      if (values.length > 1) {
        const message = `${name} must be given once, as a comma-separated list.`;
        return next(validationError({ [name]: [message] }, message));
      }
      if (values.length === 1 && values[0] === '' && p.allowEmptyValue === true) pairs = pairs.filter((pair) => new URLSearchParams(pair).get(name) === null);
    }
    const rest = pairs.join('&');
    req.url = rest ? `${req.url.slice(0, q)}?${rest}` : req.url.slice(0, q);
    next();
  };
}

/**
 * The net under the text formats ("Text and numbers"): a NUL or an unpaired surrogate anywhere in the decoded
 * query, path or body (keys included) is a 400, also where a schema is open. Runs after the body parsers.
 */
const rejectForbiddenText: RequestHandler = (req, _res, next) => {
  const pathParams = (req as Request & { openapi?: { pathParams?: Record<string, string> } }).openapi?.pathParams;
  const q = req.url.indexOf('?');
  const query = q < 0 ? undefined : Object.fromEntries(new URLSearchParams(req.url.slice(q + 1)));
  const at = findForbiddenText(pathParams) ?? findForbiddenText(query) ?? findForbiddenText(req.body);
  if (at === undefined) return next();
  const message = 'Text must not contain NUL characters or unpaired surrogates.';
  next(validationError({ [at]: [message] }, `${at}: ${message}`));
};

/**
 * Whether `req` reached its handler. A request answered 400 without reaching it was refused by validation and
 * did no work: rate limits charged before validation give such a request its point back.
 */
export function reachedHandler(req: Request): boolean {
  return (req as MarkedRequest)[DISPATCHED] === true;
}

/** The validated operation of a request (set by the validator). */
export function operationOf(req: Request): { operationId?: string; [k: string]: unknown } | undefined {
  return (req as Request & { openapi?: { schema?: { operationId?: string } } }).openapi?.schema;
}

/** A handler per operationId (each typed from its operation; see {@link Handlers}). */
export type HandlerMap = Record<string, (req: never, res: never, next: NextFunction) => unknown>;

/** Routes every validated request to `handlers[operationId]`; an operation without a handler is a 501. */
export function dispatch(handlers: HandlerMap): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const opId = operationOf(req)?.operationId;
    const h = opId ? handlers[opId] : undefined;
    if (!h) return next(new ApiError(501, `Operation ${opId ?? '(unknown)'} is not implemented.`));
    // Express gives each `app.use` layer fresh params: restore the validator's coerced path parameters.
    const pathParams = (req as Request & { openapi?: { pathParams?: Record<string, string> } }).openapi?.pathParams;
    if (pathParams) req.params = pathParams;
    (req as MarkedRequest)[DISPATCHED] = true;
    return (h as unknown as RequestHandler)(req, res, next);
  };
}

// ---- Types derived from openapi-typescript `operations[...]` ----

type Get<T, K extends PropertyKey> = T extends Record<K, infer V> ? V : never;
type Defined<T> = [T] extends [never] ? Record<string, never> : T extends undefined ? Record<string, never> : NonNullable<T>;

/** Path parameters of an operation. */
type PathOf<Op> = Defined<Get<Get<Op, 'parameters'>, 'path'>>;
/** Query parameters of an operation. */
type QueryOf<Op> = Defined<Get<Get<Op, 'parameters'>, 'query'>>;
/** JSON request body of an operation. */
type BodyOf<Op> = Op extends { requestBody?: { content: infer C } } ? (C extends Record<'application/json', infer B> ? B : C[keyof C]) : never;
/** JSON body of the success response (200, else 201) of an operation. */
type OkOf<Op> = Op extends { responses: { 200: { content: infer C } } }
  ? C extends Record<'application/json', infer B>
    ? B
    : C[keyof C]
  : Op extends { responses: { 201: { content: infer C } } }
    ? C extends Record<'application/json', infer B>
      ? B
      : C[keyof C]
    : unknown;

/** An Express request typed from an operation. */
type OpRequest<Op> = Request<PathOf<Op>, unknown, BodyOf<Op>, QueryOf<Op>>;
/** A handler typed from an operation; `res.json` takes the 200 body. */
type OpHandler<Op> = (req: OpRequest<Op>, res: Response<OkOf<Op>>, next: NextFunction) => unknown;

/** Handlers for some operations of a spec, each checked against openapi-typescript's `operations`. */
export type Handlers<Ops> = { [K in keyof Ops]?: OpHandler<Ops[K]> };
