/**
 * The HTTP shell both simulators (`packages/erp-simulator`, `packages/payment-simulator`) run in, their one
 * copy of the boilerplate: a node:http server that reads requests, writes JSON or text answers, logs them, and
 * injects faults driven by the loopback-only control API, so tests and developers can make the simulated third
 * party fail, answer slowly or go away; a handler's {@link SimHttpError} becomes the product's error answer
 * (webhook sending: `sim-webhook.ts`; the control token's start-up rule: `sim-main.ts`). Test and development
 * tooling only: not exported from the package index, so the services never load it.
 *
 * Control endpoints handled here: without a control token answered only to loopback clients (else 403);
 * with one (`SIM_CONTROL_TOKEN`, required outside development, see `controlTokenFromEnv` in `sim-main.ts`) to any
 * client that sends it in `X-Control-Token` (else 401):
 * - `POST /__control/fail {status?: 503, count?: 1, mode?: 'status', method?, path?}` — the next `count`
 *   matching API requests fail: `mode: 'status'` answers `status` without acting; `'reset'` drops the
 *   connection without acting; `'resetAfterProcessing'` acts, then drops the connection instead of
 *   answering (the caller cannot know it worked). `method` and `path` (a substring of the path) narrow
 *   the requests that match.
 * - `POST /__control/delay {ms, count?: 1, method?, path?}` — the next `count` matching API requests wait
 *   `ms` before they are processed.
 * - `POST /__control/queue {ms, count?: 1, method?, path?}` — like `delay`, as a product's load management
 *   queues a request: it is held `ms`, then carried out (also when the caller has given up waiting), and its
 *   answer carries the simulator's `waitHeaders(ms)` (weclapp's: `X-Weclapp-Wait-Ms`, `X-Weclapp-Wait-Reason`).
 * - `fail` with `status: 429` answers as a product rejects a request that stayed queued too long: the
 *   `waitHeaders` of 30 s and, with `retryAfter` (seconds), a `Retry-After`.
 * - `POST /__control/down {mode?: 'reset' | 'close', ms?}` — `reset` (default): every API request's
 *   connection is dropped until `up`; `close`: the listener closes and reopens after `ms` (default 5 s;
 *   while closed the control API is gone too, so the reopening is timed).
 * - `POST /__control/up` — ends a `reset` outage.
 * - `POST /__control/clear-faults` — drops pending fail and delay rules.
 * - `GET /__control/requests` — the last 1000 API requests: method, path, status (0 = dropped), time.
 * Everything else under `/__control/` goes to the simulator's own control handler.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** An incoming request, body read. */
export interface SimRequest {
  method: string;
  /** Path without query string. */
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  /** Raw body (UTF-8). */
  body: string;
}

/** An answer: JSON (`json`) or text with its content type. */
export interface SimResponse {
  status: number;
  json?: unknown;
  text?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

/** A handler of API or control requests. */
type SimHandler = (req: SimRequest) => Promise<SimResponse> | SimResponse;

/** One logged API request. */
export interface LoggedRequest {
  method: string;
  path: string;
  /** HTTP status answered; 0 when the connection was dropped. */
  status: number;
  at: string;
}

/** Answer of `GET /__control/requests`: the last API requests, oldest first. @internal */
export interface SimRequestsAnswer {
  requests: LoggedRequest[];
}

interface Narrowing {
  method?: string;
  path?: string;
}
type FailMode = 'status' | 'reset' | 'resetAfterProcessing';
interface FailRule extends Narrowing {
  status: number;
  mode: FailMode;
  remaining: number;
  /** Seconds for a `Retry-After` header. */
  retryAfter?: number;
}
interface DelayRule extends Narrowing {
  ms: number;
  remaining: number;
  /** Answered with the simulator's `waitHeaders` (a queued request, see the module comment). */
  queued?: boolean;
}

/** A refusal thrown by a simulator's handler: answered as `status` with the simulated product's error body. */
export class SimHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Options of {@link SimServer}. */
export interface SimServerOptions {
  /** Default 0: a free port. */
  port?: number;
  /** Default 127.0.0.1: loopback only. */
  host?: string;
  /** Answers API requests (everything outside `/__control/`). */
  api: SimHandler;
  /** Answers the simulator's own control requests. */
  control: SimHandler;
  /** Error body in the simulated product's format. */
  errorBody(status: number, message: string): unknown;
  /** Token the control API requires in `X-Control-Token`; undefined → loopback clients only, no token. */
  controlToken?: string;
  /** Headers of an answer to a request that waited `ms` in the simulated product's queue; default none. */
  waitHeaders?(ms: number): Record<string, string>;
}

/** Whether `presented` is `token`, compared in constant time. */
function tokenMatches(presented: string | string[] | undefined, token: string): boolean {
  const digest = (v: string) => createHash('sha256').update(v).digest();
  return typeof presented === 'string' && timingSafeEqual(digest(presented), digest(token));
}

/** Reads a request body (at most 2 MB). */
function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > 2_000_000) {
        reject(new Error('body too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/** Parses a JSON control body into an object (empty body → `{}`). */
export function jsonObject(body: string): Record<string, unknown> {
  if (body.trim() === '') return {};
  const v: unknown = JSON.parse(body);
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new SyntaxError('expected a JSON object');
  return v as Record<string, unknown>;
}

function matchesNarrowing(rule: Narrowing, req: SimRequest): boolean {
  return (!rule.method || rule.method.toUpperCase() === req.method) && (!rule.path || req.path.includes(rule.path));
}

/** A simulator's HTTP server with fault injection. */
export class SimServer {
  private server: http.Server | undefined;
  private boundPort: number;
  private resetAll = false;
  private reopenTimer: NodeJS.Timeout | undefined;
  private fails: FailRule[] = [];
  private delays: DelayRule[] = [];
  /** The last API requests, oldest first. */
  readonly requests: LoggedRequest[] = [];

  private readonly host: string;

  constructor(private readonly opts: SimServerOptions) {
    this.boundPort = opts.port ?? 0;
    this.host = opts.host ?? '127.0.0.1';
  }

  /** The bound port (after `start`). */
  get port(): number {
    return this.boundPort;
  }

  /** `http://host:port` of the listener. */
  get origin(): string {
    return `http://${this.host.includes(':') ? `[${this.host}]` : this.host}:${this.boundPort}`;
  }

  /** Starts listening (port 0 picks a free port, kept for later `up`s). */
  async start(): Promise<void> {
    const server = http.createServer((req, res) => void this.dispatch(req, res));
    // Clients keep their connections as they would with a real service: with a 2 s keep-alive hint Node's
    // fetch (undici) opened a new connection for every call (it drops sockets close to the hinted timeout).
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.boundPort, this.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.boundPort = (server.address() as AddressInfo).port;
  }

  /** Closes the listener and every connection. Idempotent. */
  async stop(): Promise<void> {
    clearTimeout(this.reopenTimer);
    this.reopenTimer = undefined;
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Outage: `reset` drops API connections until {@link up}; `close` closes the listener (reopened by `up` or after `ms`). */
  async down(mode: 'reset' | 'close' = 'reset', ms?: number): Promise<void> {
    if (mode === 'reset') {
      this.resetAll = true;
      return;
    }
    await this.stop();
    if (ms !== undefined) this.reopenTimer = setTimeout(() => void this.start(), ms);
  }

  /** Ends an outage. */
  async up(): Promise<void> {
    this.resetAll = false;
    clearTimeout(this.reopenTimer);
    this.reopenTimer = undefined;
    if (!this.server) await this.start();
  }

  /** Adds a fail rule (see the module comment). */
  fail(rule: { status?: number; count?: number; mode?: FailMode; retryAfter?: number } & Narrowing): void {
    this.fails.push({
      status: rule.status ?? 503,
      mode: rule.mode ?? 'status',
      remaining: rule.count ?? 1,
      method: rule.method,
      path: rule.path,
      retryAfter: rule.retryAfter,
    });
  }

  /** Adds a delay rule (`queued`: answered with the simulator's `waitHeaders`, see the module comment). */
  delay(rule: { ms: number; count?: number; queued?: boolean } & Narrowing): void {
    this.delays.push({ ms: rule.ms, remaining: rule.count ?? 1, method: rule.method, path: rule.path, queued: rule.queued });
  }

  /** Drops pending fail/delay rules and ends a reset outage. */
  clearFaults(): void {
    this.fails = [];
    this.delays = [];
    this.resetAll = false;
  }

  /** `handler`'s answer to `req`; a {@link SimHttpError} it throws is answered in the product's error format. */
  private async handle(handler: SimHandler, req: SimRequest): Promise<SimResponse> {
    try {
      return await handler(req);
    } catch (err) {
      if (err instanceof SimHttpError) return { status: err.status, json: this.opts.errorBody(err.status, err.message) };
      throw err;
    }
  }

  private waitHeaders(ms: number): Record<string, string> {
    return this.opts.waitHeaders?.(ms) ?? {};
  }

  private take<T extends Narrowing & { remaining: number }>(rules: T[], req: SimRequest): T | undefined {
    const rule = rules.find((r) => r.remaining > 0 && matchesNarrowing(r, req));
    if (rule) rule.remaining--;
    return rule;
  }

  private log(req: SimRequest, status: number): void {
    this.requests.push({ method: req.method, path: req.path, status, at: new Date().toISOString() });
    if (this.requests.length > 1000) this.requests.shift();
  }

  private write(res: http.ServerResponse, r: SimResponse): void {
    const headers: Record<string, string> = { ...r.headers };
    let payload = '';
    if (r.json !== undefined) {
      headers['content-type'] = 'application/json;charset=UTF-8';
      payload = JSON.stringify(r.json);
    } else if (r.text !== undefined) {
      headers['content-type'] = r.contentType ?? 'text/plain;charset=UTF-8';
      payload = r.text;
    }
    res.writeHead(r.status, headers);
    res.end(payload);
  }

  private async dispatch(raw: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let req: SimRequest;
    try {
      const url = new URL(raw.url ?? '/', 'http://simulator');
      req = { method: raw.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: raw.headers, body: await readBody(raw) };
    } catch {
      raw.socket.destroy();
      return;
    }
    try {
      if (req.path.startsWith('/__control/')) {
        if (this.opts.controlToken !== undefined) {
          if (!tokenMatches(raw.headers['x-control-token'], this.opts.controlToken))
            return this.write(res, { status: 401, json: this.opts.errorBody(401, 'control API: X-Control-Token required') });
        } else if (!LOOPBACK.has(raw.socket.remoteAddress ?? ''))
          return this.write(res, { status: 403, json: this.opts.errorBody(403, 'control API: loopback only') });
        return this.write(res, await this.controlCommon(req));
      }
      if (this.resetAll) {
        this.log(req, 0);
        raw.socket.destroy();
        return;
      }
      const delay = this.take(this.delays, req);
      if (delay) await new Promise((r) => setTimeout(r, delay.ms));
      const fail = this.take(this.fails, req);
      if (fail && fail.mode === 'status') {
        this.log(req, fail.status);
        const headers: Record<string, string> = fail.status === 503 ? { 'retry-after': '0' } : fail.status === 429 ? this.waitHeaders(30_000) : {};
        if (fail.retryAfter !== undefined) headers['retry-after'] = String(fail.retryAfter);
        return this.write(res, { status: fail.status, json: this.opts.errorBody(fail.status, 'simulated failure'), headers });
      }
      if (fail && fail.mode === 'reset') {
        this.log(req, 0);
        raw.socket.destroy();
        return;
      }
      const answer = await this.handle(this.opts.api, req);
      if (fail && fail.mode === 'resetAfterProcessing') {
        this.log(req, 0);
        raw.socket.destroy();
        return;
      }
      this.log(req, answer.status);
      this.write(res, delay?.queued ? { ...answer, headers: { ...answer.headers, ...this.waitHeaders(delay.ms) } } : answer);
    } catch (err) {
      const bad = err instanceof SyntaxError;
      const status = bad ? 400 : 500;
      this.log(req, status);
      this.write(res, { status, json: this.opts.errorBody(status, bad ? `malformed request: ${err.message}` : 'internal simulator error') });
    }
  }

  private async controlCommon(req: SimRequest): Promise<SimResponse> {
    const route = `${req.method} ${req.path}`;
    const body = req.method === 'GET' ? {} : jsonObject(req.body);
    const narrowing = { method: typeof body.method === 'string' ? body.method : undefined, path: typeof body.path === 'string' ? body.path : undefined };
    const count = typeof body.count === 'number' ? body.count : 1;
    switch (route) {
      case 'POST /__control/fail': {
        const mode = body.mode === 'reset' || body.mode === 'resetAfterProcessing' ? body.mode : 'status';
        this.fail({
          status: typeof body.status === 'number' ? body.status : 503,
          count,
          mode,
          retryAfter: typeof body.retryAfter === 'number' ? body.retryAfter : undefined,
          ...narrowing,
        });
        return { status: 200, json: { ok: true } };
      }
      case 'POST /__control/delay':
      case 'POST /__control/queue':
        if (typeof body.ms !== 'number' || body.ms < 0) return { status: 400, json: this.opts.errorBody(400, 'ms: a number ≥ 0 is required') };
        this.delay({ ms: body.ms, count, queued: route.endsWith('/queue'), ...narrowing });
        return { status: 200, json: { ok: true } };
      case 'POST /__control/down': {
        const mode = body.mode === 'close' ? 'close' : 'reset';
        const ms = typeof body.ms === 'number' ? body.ms : 5_000;
        // Answer first: closing the listener would otherwise cut this very request off.
        if (mode === 'close') setTimeout(() => void this.down('close', ms), 20);
        else await this.down('reset');
        return { status: 200, json: { ok: true, mode, ...(mode === 'close' ? { reopensInMs: ms } : {}) } };
      }
      case 'POST /__control/up':
        await this.up();
        return { status: 200, json: { ok: true } };
      case 'POST /__control/clear-faults':
        this.clearFaults();
        return { status: 200, json: { ok: true } };
      case 'GET /__control/requests':
        return { status: 200, json: { requests: this.requests } };
      default:
        return this.handle(this.opts.control, req);
    }
  }
}
