/**
 * The two error shapes of the project (docs/decisions.md §4):
 * - RFC 9457 `application/problem+json` in the ASP.NET Core shape `{ type, title, status, detail?, errors? }`
 *   for every path outside `/api/grpc-json/v1/shop`;
 * - `google.rpc.Status` `{ code, message, details }` for the shop area, HTTP status mapped from the gRPC code
 *   as gRPC-JSON transcoding does.
 * Domain code throws {@link ApiError}; one error middleware per area renders it.
 */
import type { ErrorRequestHandler, Request, Response } from 'express';
import type { Logger } from 'pino';
import { databaseFault } from './db-faults';

/** Field name → messages, as in ASP.NET Core validation problems (`errors.cardNumber: [...]`). */
export type FieldErrors = Record<string, string[]>;

/**
 * Append messages to a field of `errors`. Field names come from clients (body keys such as `constructor` or
 * `__proto__`), so the array is looked up as an own property and created with defineProperty: a plain
 * `errors[field] ??= []` would find `Object.prototype` members and throw or pollute.
 */
export function addFieldError(errors: FieldErrors, field: string, ...messages: string[]): void {
  const own = Object.prototype.hasOwnProperty.call(errors, field) ? errors[field] : undefined;
  if (own) {
    own.push(...messages);
    return;
  }
  Object.defineProperty(errors, field, { value: [...messages], enumerable: true, writable: true, configurable: true });
}

/** gRPC status codes used by the shop area (google.rpc.Code). */
export const GrpcCode = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/**
 * An API key in text: the timing service's `tk_` keys (43 base64url characters when generated; 16 and more are
 * taken here, so a cut-off key is masked too). A key can reach an error text or a log line as the value of a
 * path segment (`/roc/key/<key>/…`, or one pasted into any other path parameter).
 */
const KEY_TOKEN = /\btk_[A-Za-z0-9_-]{16,}/g;

/** `text` with every API key in it ({@link KEY_TOKEN}) replaced by `tk_***`: answers and logs never repeat a key. */
export function maskKeyTokens(text: string): string {
  return text.replace(KEY_TOKEN, 'tk_***');
}

/** Title used by ASP.NET Core for validation problems; the battery lookup clients know it. */
const VALIDATION_TITLE = 'One or more validation errors occurred.';

/** Options of an {@link ApiError}. */
export interface ApiErrorOptions {
  /** Problem `title`; defaults to the HTTP reason phrase (or the validation title when `errors` is set). */
  title?: string;
  /** Problem `detail` / Status `message`: a human-readable explanation; never internals. */
  detail?: string;
  /** Per-field messages (problem `errors`, Status `google.rpc.BadRequest` field violations). */
  errors?: FieldErrors;
  /** Explicit gRPC code for the shop area; derived from the HTTP status when absent. */
  grpcCode?: number;
  /** Response headers to send with the error (`Allow`, `Retry-After`, `WWW-Authenticate`). */
  headers?: Record<string, string>;
  /** Extra problem members (e.g. `rows` for per-row upload errors). */
  extensions?: Record<string, unknown>;
}

/** An error meant for the client: HTTP status plus a safe message. Anything else becomes a 500. */
export class ApiError extends Error {
  readonly status: number;
  readonly options: ApiErrorOptions;
  constructor(status: number, detail?: string, options: ApiErrorOptions = {}) {
    super(detail ?? TITLES[status] ?? `HTTP ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.options = { ...options, detail: options.detail ?? detail };
  }
}

/** 400 with per-field messages. */
export function validationError(errors: FieldErrors, detail?: string): ApiError {
  return new ApiError(400, detail, { errors, title: VALIDATION_TITLE });
}

/** HTTP status → gRPC code (the reverse of gRPC-JSON transcoding's table). */
function grpcCodeForStatus(status: number): number {
  switch (status) {
    case 400:
    case 406:
    case 413:
    case 415:
    case 422:
      return GrpcCode.INVALID_ARGUMENT;
    case 401:
      return GrpcCode.UNAUTHENTICATED;
    case 403:
      return GrpcCode.PERMISSION_DENIED;
    case 404:
      return GrpcCode.NOT_FOUND;
    case 405:
      return GrpcCode.UNIMPLEMENTED;
    case 408:
    case 504:
      return GrpcCode.DEADLINE_EXCEEDED;
    case 409:
      return GrpcCode.ABORTED;
    case 429:
      return GrpcCode.RESOURCE_EXHAUSTED;
    case 503:
      return GrpcCode.UNAVAILABLE;
    default:
      return status >= 500 ? GrpcCode.INTERNAL : GrpcCode.UNKNOWN;
  }
}

/** A validator or body-parser error reduced to status, field errors and headers. */
interface Normalized {
  status: number;
  detail?: string;
  errors?: FieldErrors;
  headers?: Record<string, string>;
  title?: string;
  grpcCode?: number;
  extensions?: Record<string, unknown>;
  internal: boolean;
}

interface ValidatorItem {
  path?: string;
  message?: string;
}

/**
 * A validator error path as a field name. express-openapi-validator reports JSON pointers
 * (`/body/0/card`, `/query/afterId`) and sometimes dotted paths (`.body.items[0].quantity`):
 * both become `[0].card`, `afterId`, `items[0].quantity`.
 */
function fieldName(path: string | undefined): string {
  if (!path) return '';
  let dotted = path;
  if (path.startsWith('/')) {
    dotted = path
      .slice(1)
      .split('/')
      .map((seg) => seg.replace(/~1/g, '/').replace(/~0/g, '~'))
      .map((seg) => (/^\d+$/.test(seg) ? `[${seg}]` : `.${seg}`))
      .join('');
  }
  return dotted.replace(/^\.?(body|query|params|path|headers|cookies)(?=[.[]|$)/, '').replace(/^\./, '');
}

/**
 * Normalize anything thrown in a handler: ApiError; express-openapi-validator errors (`status`, `errors[]`,
 * `headers`); body-parser errors (`type: 'entity.parse.failed'`, `entity.too.large`, `encoding.unsupported`).
 * Unknown errors become an internal 500 whose details are only logged.
 */
export function normalizeError(err: unknown): Normalized {
  if (err instanceof ApiError) {
    return { status: err.status, ...err.options, internal: err.status >= 500 };
  }
  const e = err as { status?: unknown; statusCode?: unknown; type?: unknown; errors?: unknown; headers?: unknown; message?: unknown };
  const status = typeof e?.status === 'number' ? e.status : typeof e?.statusCode === 'number' ? e.statusCode : undefined;
  if (status !== undefined && status >= 400 && status < 500) {
    const type = typeof e.type === 'string' ? e.type : undefined;
    if (type === 'entity.parse.failed') return { status: 400, detail: 'The request body is not valid JSON.', internal: false };
    if (type === 'entity.too.large') return { status: 413, detail: 'The request body is too large.', internal: false };
    if (type === 'parameters.too.many') return { status: 413, detail: 'The request body has too many parameters.', internal: false };
    if (type === 'encoding.unsupported') return { status: 415, detail: 'Unsupported Content-Encoding.', internal: false };
    if (type === 'charset.unsupported') return { status: 415, detail: 'Unsupported charset.', internal: false };
    if (type === 'request.aborted') return { status: 400, detail: 'The request was aborted.', internal: false };
    const items = Array.isArray(e.errors) ? (e.errors as ValidatorItem[]) : [];
    let errors: FieldErrors | undefined;
    if (items.length > 0 && status === 400) {
      errors = {};
      for (const it of items) {
        const key = fieldName(it.path) || '$';
        addFieldError(errors, key, String(it.message ?? 'is invalid'));
      }
    }
    const headers =
      e.headers && typeof e.headers === 'object'
        ? Object.fromEntries(Object.entries(e.headers as Record<string, unknown>).map(([k, v]) => [k, String(v)]))
        : undefined;
    // Only a 400's items name a request field; other statuses' items carry the request path (405: the path the
    // method is not allowed on), which may hold a key (`/roc/key/<key>/…`), so their message stands alone.
    const detail =
      status === 404
        ? 'No such resource.'
        : items.length > 0
          ? items.map((i) => (status === 400 ? `${fieldName(i.path)} ${i.message}` : String(i.message ?? '')).trim()).join('; ')
          : undefined;
    return { status, errors, headers, detail, title: errors ? VALIDATION_TITLE : undefined, internal: false };
  }
  if (status === 503) return { status: 503, detail: 'Service temporarily unavailable.', headers: { 'Retry-After': '5' }, internal: true };
  return { status: 500, detail: 'An unexpected error occurred.', internal: true };
}

function logOnce(res: Response, logger: Logger | undefined, err: unknown, n: Normalized): void {
  const log = (res as Response & { log?: Logger }).log ?? logger;
  if (!log) return;
  if (n.internal) log.error({ err }, 'request failed');
  else log.debug({ status: n.status, detail: n.detail === undefined ? undefined : maskKeyTokens(n.detail) }, 'request rejected');
}

/**
 * The one mapping of both services: a database fault (db-faults.ts: away, read-only, disk full, out of
 * connections, lock or statement timeout, every pooled connection busy) is a 503 with `Retry-After`, never a
 * 500; anything else goes through {@link normalizeError}.
 */
function prepare(err: unknown): Normalized {
  const fault = databaseFault(err);
  if (fault) return { status: 503, detail: fault.detail, headers: { 'Retry-After': String(fault.retryAfterSeconds) }, internal: !fault.overload };
  return normalizeError(err);
}

/** The problem+json body of a normalized error (ASP.NET Core shape). */
export function problemBody(n: Pick<Normalized, 'status' | 'title' | 'detail' | 'errors' | 'extensions'>, traceId?: string): Record<string, unknown> {
  const body: Record<string, unknown> = {
    type: `https://httpstatuses.io/${n.status}`,
    title: n.title ?? TITLES[n.status] ?? 'Error',
    status: n.status,
  };
  if (n.detail) body.detail = maskKeyTokens(n.detail);
  if (n.errors) body.errors = Object.fromEntries(Object.entries(n.errors).map(([k, msgs]) => [maskKeyTokens(k), msgs.map(maskKeyTokens)]));
  if (traceId) body.traceId = traceId;
  if (n.extensions) Object.assign(body, n.extensions);
  return body;
}

/** The google.rpc.Status body of a normalized error, with field violations as google.rpc.BadRequest. */
function statusBody(n: Pick<Normalized, 'status' | 'detail' | 'errors' | 'grpcCode' | 'title'>): Record<string, unknown> {
  const details: Record<string, unknown>[] = [];
  if (n.errors) {
    details.push({
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: Object.entries(n.errors).flatMap(([field, msgs]) => msgs.map((description) => ({ field, description }))),
    });
  }
  return { code: n.grpcCode ?? grpcCodeForStatus(n.status), message: maskKeyTokens(n.detail ?? n.title ?? TITLES[n.status] ?? 'Error'), details };
}

function send(res: Response, n: Normalized, contentType: string, body: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (n.headers) for (const [k, v] of Object.entries(n.headers)) res.setHeader(k, v);
  res.status(n.status).type(contentType).send(JSON.stringify(body));
}

/** Error middleware for problem+json areas. */
export function problemErrorHandler(logger?: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const n = withAcceptedMediaTypes(prepare(err), err, req);
    logOnce(res, logger, err, n);
    send(res, n, 'application/problem+json; charset=utf-8', problemBody(n, typeof req.id === 'string' || typeof req.id === 'number' ? String(req.id) : ''));
  };
}

/**
 * A 415 of the spec's validator (a body media type the operation does not take) names what the operation
 * takes, from its `requestBody.content` (e.g. `This operation takes application/json or text/csv; the request
 * was sent as application/x-www-form-urlencoded.`), instead of the validator's path-prefixed message.
 * The service's own 415s (ApiError: an unsupported Content-Encoding) keep their detail.
 */
function withAcceptedMediaTypes(n: Normalized, err: unknown, req: Request): Normalized {
  if (n.status !== 415 || err instanceof ApiError) return n;
  // The validator's operation of the request (openapi.ts operationOf; not imported: openapi.ts imports this module).
  const content = (req as Request & { openapi?: { schema?: { requestBody?: { content?: Record<string, unknown> } } } }).openapi?.schema?.requestBody?.content;
  const types = Object.keys(content ?? {});
  if (types.length === 0) return n;
  const sent = req.headers['content-type'] ? `sent as ${req.headers['content-type'].split(';')[0].trim()}` : 'sent without a Content-Type';
  const list = types.length === 1 ? types[0] : `${types.slice(0, -1).join(', ')} or ${types[types.length - 1]}`;
  return { ...n, errors: undefined, title: undefined, detail: `This operation takes ${list}; the request was ${sent}.` };
}

/** Error middleware for the google.rpc.Status area (`/api/grpc-json/v1/shop`). */
export function rpcStatusErrorHandler(logger?: Logger): ErrorRequestHandler {
  return (err, _req, res, _next) => {
    const n = prepare(err);
    logOnce(res, logger, err, n);
    send(res, n, 'application/json; charset=utf-8', statusBody(n));
  };
}
