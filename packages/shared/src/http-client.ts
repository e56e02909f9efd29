/**
 * One outbound HTTP call with a deadline and bounded retries, shared by the third-party clients of the
 * ordering service (ERP, payment provider). It uses `node:http`/`node:https` with keep-alive agents, and
 * behaves as Node's `fetch` did before (redirects are errors, gzip/deflate/br answers are decoded, a UTF-8
 * BOM is dropped): `fetch` cost measurably more CPU per call, a visible part of an order, which makes one
 * provider call (bench/README.md, finding 14).
 *
 * Retry rules (docs/decisions.md §6, third parties):
 * - Retried: HTTP 5xx answers, timeouts and connection errors, with exponential backoff and jitter;
 *   a `Retry-After` in seconds is honoured when it is not longer than `maxDelayMs`.
 * - Never retried: any 4xx answer (the same request would fail again).
 * - A request marked non-idempotent (`idempotent: false`, e.g. a POST that creates something) is retried
 *   only when the connection was refused, i.e. the request provably never reached the server. Any other
 *   failure is ambiguous (the server may have acted on it), so the caller decides — typically by looking
 *   the result up through an idempotency reference before trying again.
 *
 * The result is the final answer whatever its status (the caller maps statuses to its own typed errors);
 * only transport failures throw, as {@link HttpTransportError}. Neither the request headers nor the body
 * ever appear in an error message, so credentials sent as headers cannot leak through it.
 */

import http from 'node:http';
import https from 'node:https';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { retryAfterMs, withRetry, type RetryPolicy } from './provider-kit';

/** One request to send with {@link fetchWithRetry}. */
export interface HttpCall {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  headers?: Record<string, string>;
  /** Request body, already serialized. */
  body?: string;
  /** Deadline of one attempt (connect, answer and body) in ms. */
  timeoutMs: number;
  /** Whether repeating the request is harmless (GET, PUT with a version, DELETE). */
  idempotent: boolean;
  retry: RetryPolicy;
}

/** The final answer of a call. */
export interface HttpAnswer {
  status: number;
  headers: Headers;
  /** The body as text (UTF-8). */
  text: string;
  /** Attempts made, ≥ 1. */
  attempts: number;
}

/** Why no answer arrived: the deadline passed, or the connection failed. */
export type HttpTransportFailure = 'timeout' | 'network';

/** Thrown by {@link fetchWithRetry} when the last attempt got no HTTP answer. */
export class HttpTransportError extends Error {
  readonly kind: HttpTransportFailure;
  /** The system error code when known (`ECONNREFUSED`, `ECONNRESET`, `UND_ERR_SOCKET` …). */
  readonly code: string | undefined;
  readonly attempts: number;
  constructor(kind: HttpTransportFailure, code: string | undefined, attempts: number, timeoutMs: number) {
    super(kind === 'timeout' ? `no answer within ${timeoutMs} ms` : `connection failed${code ? ` (${code})` : ''}`);
    this.name = 'HttpTransportError';
    this.kind = kind;
    this.code = code;
    this.attempts = attempts;
  }
}

/** Whether an answer with this status is worth repeating. */
function isRetryableStatus(status: number): boolean {
  return status >= 500 && status <= 599;
}

/** Connection-level error code of a failed attempt (nested in `cause` by some libraries, sometimes twice). */
function errorCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function isTimeout(err: unknown): boolean {
  const name = err !== null && typeof err === 'object' ? (err as { name?: unknown }).name : undefined;
  return name === 'TimeoutError';
}

/** Connections are kept between calls (per origin), as `fetch` kept them. */
const AGENTS = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };

/** Statuses `fetch` follows as redirects (an error here, as with `redirect: 'error'`). */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

const DECODERS: Record<string, (b: Buffer) => Promise<Buffer>> = {
  gzip: promisify(zlib.gunzip),
  'x-gzip': promisify(zlib.gunzip),
  deflate: promisify(zlib.inflate),
  br: promisify(zlib.brotliDecompress),
};

/** The body as text: decoded by its `Content-Encoding` (gzip, deflate, br), UTF-8, without a leading BOM. */
async function bodyText(raw: Buffer, encoding: string | undefined): Promise<string> {
  const decode = encoding ? DECODERS[encoding.trim().toLowerCase()] : undefined;
  const text = (decode ? await decode(raw) : raw).toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * One attempt of `call` within its deadline (connect, answer and body): resolves with the answer;
 * rejects with the connection error (its `code`, e.g. `ECONNREFUSED`), a `TimeoutError` past the deadline,
 * or an error for a redirect.
 */
function attemptOnce(call: HttpCall): Promise<{ status: number; headers: Headers; text: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(call.url);
    const agent = url.protocol === 'https:' ? AGENTS['https:'] : url.protocol === 'http:' ? AGENTS['http:'] : undefined;
    if (!agent) {
      reject(new TypeError(`unsupported protocol ${url.protocol}`));
      return;
    }
    let done = false;
    const finish = (err: Error | null, answer?: { status: number; headers: Headers; text: string }) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) {
        req.destroy();
        reject(err);
      } else resolve(answer!);
    };
    const headers: Record<string, string | number> = { 'accept-encoding': 'gzip, deflate, br', ...call.headers };
    if (call.body !== undefined) headers['content-length'] = Buffer.byteLength(call.body);
    const request = url.protocol === 'https:' ? https.request : http.request;
    const req = request(url, { method: call.method, headers, agent }, (res) => {
      const status = res.statusCode ?? 0;
      if (REDIRECTS.has(status)) {
        finish(new Error(`unexpected redirect (${status})`));
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (err) => finish(err));
      res.on('aborted', () => finish(Object.assign(new Error('answer aborted'), { code: 'ECONNRESET' })));
      res.on('end', () => {
        const answerHeaders = new Headers();
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) answerHeaders.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
        bodyText(Buffer.concat(chunks), res.headers['content-encoding']).then(
          (text) => finish(null, { status, headers: answerHeaders, text }),
          (err: Error) => finish(err),
        );
      });
    });
    const timer = setTimeout(() => finish(Object.assign(new Error(`no answer within ${call.timeoutMs} ms`), { name: 'TimeoutError' })), call.timeoutMs);
    req.on('error', (err) => finish(err));
    req.end(call.body);
  });
}

/**
 * Sends `call`, repeating it by the rules above. Resolves with the final answer (any status);
 * rejects with {@link HttpTransportError} when the last attempt got no answer.
 */
export function fetchWithRetry(call: HttpCall): Promise<HttpAnswer> {
  return withRetry(
    call.retry,
    async (n) => {
      try {
        // The deadline also covers reading the body: a server that stalls mid-body times out too.
        return { ...(await attemptOnce(call)), attempts: n };
      } catch (err) {
        const timeout = isTimeout(err);
        throw new HttpTransportError(timeout ? 'timeout' : 'network', timeout ? undefined : errorCode(err), n, call.timeoutMs);
      }
    },
    (outcome) => {
      if (outcome.ok) {
        if (!isRetryableStatus(outcome.value.status) || !call.idempotent) return false;
        const asked = retryAfterMs(outcome.value.headers);
        return asked !== null && asked <= call.retry.maxDelayMs ? asked : true;
      }
      // A request that was never sent (connection refused) may be repeated whatever it does.
      return outcome.error instanceof HttpTransportError && (call.idempotent || outcome.error.code === 'ECONNREFUSED');
    },
  );
}
