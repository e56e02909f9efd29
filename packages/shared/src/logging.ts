/**
 * Structured logging (pino) with request ids and redaction: no token, API key, password, client id or
 * secret-bearing query string ever reaches a log line (docs/decisions.md §7).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import pino, { type Logger } from 'pino';
import pinoHttp from 'pino-http';
import pinoPretty from 'pino-pretty';
import { loadProcessConfig } from './config';
import { maskKeyTokens } from './errors';

/** Header names whose values are secrets. */
const SECRET_HEADERS = ['authorization', 'apikey', 'cookie', 'set-cookie', 'x-api-key', 'x-service-client-id', 'x-sportident-client-id', 'proxy-authorization'];

/**
 * Header names that carry credentials by convention though no service of ours reads them (`X-Auth-Token`,
 * `X-Access-Token`, `X-Amz-Security-Token`, `X-Client-Secret`, `X-Session-Id`, `X-Hub-Signature` …): a
 * client or proxy may send them, and an echo must not hand them to whoever reads the answer or a log.
 */
const SECRET_HEADER_NAME = /token|secret|passw|api-?key|auth|cookie|session|signature|credential/i;

/** Whether the header's value is a secret ({@link SECRET_HEADERS}, or a name like one). */
function isSecretHeader(name: string): boolean {
  const n = name.toLowerCase();
  return SECRET_HEADERS.includes(n) || SECRET_HEADER_NAME.test(n);
}

/** Query parameter names whose values are secrets (ERP webhook secret, tokens, keys, passwords). */
const SECRET_QUERY = /^(secret|token|apikey|api_key|key|password|access_token|refresh_token|client_secret|text)$/i;

/**
 * A path segment right after a segment `key` is a secret: clients that can only be given a URL (ROC readers
 * and radio units, which send no headers and append their own query string) carry their API key there
 * (`/roc/key/<key>/getpunches.asp`, docs/roc.md).
 */
const SECRET_PATH_SEGMENT = /(\/key\/)[^/?#]+/gi;

/**
 * The URL with secret query values and secret path segments ({@link SECRET_PATH_SEGMENT}) replaced by `***`, and
 * an API key in any other segment by `tk_***` (errors.ts `maskKeyTokens`).
 * @internal
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  const path = maskKeyTokens((q < 0 ? url : url.slice(0, q)).replace(SECRET_PATH_SEGMENT, '$1***'));
  if (q < 0) return path;
  const params = new URLSearchParams(url.slice(q + 1));
  for (const k of [...params.keys()]) if (SECRET_QUERY.test(k)) params.set(k, '***');
  return `${path}?${params.toString()}`;
}

/** A copy of the headers with secret values masked, for logs and the `request-headers` utility. */
export function maskHeaders(headers: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) continue;
    out[k] = isSecretHeader(k) ? '***' : Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/**
 * The log format: `LOG_FORMAT=pretty` gives one readable, coloured line per entry with a local clock time
 * (what `pnpm start` sets when it runs in a terminal); anything else, and always with `APP_ENV=production`,
 * one JSON object per line with epoch-ms times, for log collectors.
 * @internal
 */
export function logFormat(env: Record<string, string | undefined> = process.env): 'json' | 'pretty' {
  return env.LOG_FORMAT === 'pretty' && env.APP_ENV !== 'production' ? 'pretty' : 'json';
}

/**
 * Root logger; level from `LOG_LEVEL` (default `info`, `silent` under jest unless set), format from
 * {@link logFormat}; `destination` (default stdout) lets tests capture the exact production output.
 */
export function createLogger(
  name: string,
  level = process.env.JEST_WORKER_ID && !process.env.LOG_LEVEL ? 'silent' : loadProcessConfig().logLevel,
  destination?: pino.DestinationStream,
): Logger {
  const options = {
    name,
    level,
    redact: { paths: ['req.headers.authorization', 'req.headers.apikey', 'req.headers.cookie', 'password', 'token', 'apiKey'], censor: '***' },
  };
  if (destination) return pino(options, destination);
  if (logFormat() === 'pretty') return pino(options, pinoPretty(PRETTY_OPTIONS));
  return pino(options);
}

/** A completed request as {@link httpLogger} and {@link logCompletedRequest} log it. */
interface RequestEntry {
  req?: { method?: string; url?: string };
  res?: { statusCode?: number };
  responseTime?: number;
}

/**
 * pino-pretty's settings for `LOG_FORMAT=pretty` (README "Configuration"): one line per entry — a completed
 * request reads `GET /healthz 200 3 ms`, other entries their message with their fields as compact JSON after it.
 * The request's id and client address stay in the JSON format, for collectors.
 */
const PRETTY_OPTIONS = {
  colorize: true,
  translateTime: 'SYS:HH:MM:ss.l',
  ignore: 'pid,hostname,req,res,responseTime',
  singleLine: true,
  sync: true,
  messageFormat(log: Record<string, unknown>, messageKey: string): string {
    const { req, res, responseTime } = log as RequestEntry;
    if (req && res) return `${req.method} ${req.url} ${res.statusCode} ${responseTime ?? '?'} ms`;
    const message = log[messageKey];
    return typeof message === 'string' ? message : JSON.stringify(message ?? '');
  },
};

/** The request's id (a sane incoming `X-Request-Id`, else a new UUID), echoed in the response's `X-Request-Id`. */
export function assignRequestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && /^[\w.-]{1,64}$/.test(incoming) ? incoming : randomUUID();
  res.setHeader('X-Request-Id', id);
  return id;
}

/** Whether every request is logged when it completes (`HTTP_LOG`, default on; checked at start, see loadProcessConfig). */
export function httpLogEnabled(): boolean {
  return loadProcessConfig().httpLog;
}

/**
 * The line {@link httpLogger} writes for a completed request, for a route served outside the Express
 * pipeline (same fields: `req` id/method/redacted url/remoteAddress, `res.statusCode`, `responseTime` ms).
 */
export function logCompletedRequest(logger: Logger, req: IncomingMessage, res: ServerResponse, id: string, responseTimeMs: number): void {
  const level = res.statusCode >= 500 ? 'error' : 'info';
  logger[level](
    {
      req: { id, method: req.method, url: redactUrl(req.url ?? ''), remoteAddress: req.socket.remoteAddress },
      res: { statusCode: res.statusCode },
      responseTime: Math.round(responseTimeMs),
    },
    'request completed',
  );
}

/** pino-http middleware: a request id per request ({@link assignRequestId}), echoed back. */
export function httpLogger(logger: Logger) {
  return pinoHttp({
    logger,
    genReqId: assignRequestId,
    serializers: {
      req(req: { id: unknown; method: string; url: string; headers: IncomingMessage['headers']; remoteAddress?: string }) {
        return { id: req.id, method: req.method, url: redactUrl(req.url), remoteAddress: req.remoteAddress };
      },
      res(res: { statusCode: number }) {
        return { statusCode: res.statusCode };
      },
    },
    customLogLevel(_req, res, err) {
      if (err || res.statusCode >= 500) return 'error';
      return 'info';
    },
    autoLogging: httpLogEnabled(),
  });
}
