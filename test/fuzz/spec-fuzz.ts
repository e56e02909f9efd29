/**
 * Spec-driven fuzzing of one service: for every operation of an OpenAPI
 * document, requests the spec calls valid (with staff credentials), requests it certainly calls invalid,
 * and one without credentials; every response is checked against the spec:
 * - no status ≥ 500 (a 501 means an operation is not implemented yet);
 * - every status explicitly listed for the operation (`default` does not count);
 * - response bodies match their schema (the app runs with response validation on, which turns a
 *   violation into a 500) and every 4xx body has the documented error shape (required members present
 *   with their types);
 * - an invalid request is answered 4xx; a secured operation answers 401 without credentials.
 * Seeded (`seed`) so a failure can be replayed; `validRuns`/`invalidRuns` per operation bound the time.
 */
import fc from 'fast-check';
import request from 'supertest';
import { deref, invalidBodyArb, valueArb, type Schema, type Spec } from './openapi-arbitraries';

/** Options of {@link fuzzSpec}. */
export interface FuzzOptions {
  /** The Express app (or an http.Server) under test. */
  app: Parameters<typeof request>[0];
  spec: Spec;
  /** Headers that authenticate as staff (admin). */
  staffHeaders: Record<string, string>;
  /** Headers with invalid credentials (unknown key, forged token): every operation with security → 401. */
  badCredentialHeaders: Record<string, string>;
  seed: number;
  validRuns: number;
  invalidRuns: number;
  /** operationIds whose valid requests are not sent (e.g. endless streams); invalid and anonymous ones are. */
  skipValid?: string[];
  /** Per-request deadline in ms; a request over it is a failure ("hang"). */
  timeoutMs?: number;
  /**
   * operationIds fuzzed after all others: valid requests that reconfigure the service (e.g. store a random
   * ERP token, after which every ERP call is refused upstream and honestly answered 503).
   */
  runLast?: string[];
  /** Query/header parameter values to force (e.g. `{ wait: '0' }` so long-polls return at once). */
  forcedParams?: Record<string, string>;
}

/** One finding of a fuzz run. */
export interface FuzzFailure {
  operationId: string;
  kind: 'valid' | 'invalid' | 'anonymous' | 'bad-credentials';
  method: string;
  url: string;
  status: number | 'timeout' | 'error';
  problem: string;
  body?: string;
}

/** Outcome of {@link fuzzSpec}. */
export interface FuzzReport {
  operations: number;
  requests: number;
  /** Count per status code over all requests. */
  statuses: Record<string, number>;
  failures: FuzzFailure[];
  durationMs: number;
}

/** One operation of a spec with its merged parameters and access declaration. */
export interface Operation {
  operationId: string;
  method: string;
  path: string;
  op: Schema;
  params: Schema[];
  secured: boolean;
  /** Whether the operation declares any security requirement (`security: []` declares none). */
  hasSecurity: boolean;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Every operation of `spec` (get, post, put, patch, delete). */
export function operationsOf(spec: Spec): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(spec.paths)) {
    const shared = ((item as Schema).parameters ?? []) as unknown[];
    for (const method of METHODS) {
      const op = (item as Schema)[method] as Schema | undefined;
      if (!op) continue;
      const roles = (op['x-roles'] ?? ['admin']) as string[];
      const params = [...shared, ...((op.parameters ?? []) as unknown[])].map((p) => deref(spec, p));
      const security = (op.security ?? spec.security ?? []) as unknown[];
      out.push({ operationId: op.operationId, method, path, op, params, secured: !roles.includes('anonymous'), hasSecurity: security.length > 0 });
    }
  }
  return out;
}

/** A request built from an operation: URL with query, headers, and an encoded body. */
export interface BuiltRequest {
  url: string;
  headers: Record<string, string>;
  contentType?: string;
  body?: string;
}

function pickMediaType(content: Record<string, unknown>): string {
  const types = Object.keys(content);
  return types.find((t) => t === 'application/json') ?? types.find((t) => t === 'application/x-www-form-urlencoded') ?? types[0];
}

function encodeBody(mediaType: string, value: unknown): string {
  if (mediaType === 'application/x-www-form-urlencoded') {
    const form = new URLSearchParams();
    if (value && typeof value === 'object' && !Array.isArray(value))
      for (const [k, v] of Object.entries(value)) form.append(k, typeof v === 'string' ? v : JSON.stringify(v));
    else form.append('value', String(value));
    return form.toString();
  }
  if (mediaType.startsWith('text/')) return typeof value === 'string' ? value : JSON.stringify(value);
  return JSON.stringify(value);
}

function paramValue(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** An arbitrary of whole requests of `o`; `invalid` replaces the body (or a path parameter) with a certainly-invalid one. */
export function requestArb(spec: Spec, o: Operation, forced: Record<string, string>, invalid: boolean): fc.Arbitrary<BuiltRequest> | undefined {
  const paramArbs = o.params.map((p) => {
    if (forced[p.name] !== undefined) return fc.constant([p, forced[p.name]] as const);
    const arb = valueArb(spec, p.schema ?? { type: 'string' }).map((v) => [p, v] as const);
    return p.required || p.in === 'path' ? arb : fc.option(arb, { nil: undefined });
  });
  const content = deref(spec, o.op.requestBody)?.content as Record<string, Schema> | undefined;
  const mediaType = content ? pickMediaType(content) : undefined;
  const bodySchema = mediaType ? content![mediaType].schema : undefined;
  let bodyArb: fc.Arbitrary<unknown> = fc.constant(undefined);
  let badPath: string | undefined;
  if (bodySchema) bodyArb = valueArb(spec, bodySchema);
  if (invalid) {
    const bad = mediaType === 'application/json' && bodySchema ? invalidBodyArb(spec, bodySchema) : undefined;
    if (bad) bodyArb = bad;
    else {
      // No body to break: break an integer path parameter instead, else there is no certain invalid request.
      const intParam = o.params.find((p) => p.in === 'path' && deref(spec, p.schema)?.type === 'integer');
      if (!intParam) return undefined;
      badPath = intParam.name;
    }
  }
  return fc.tuple(fc.tuple(...paramArbs), bodyArb).map(([params, body]) => {
    let url = o.path;
    const query = new URLSearchParams();
    const headers: Record<string, string> = {};
    for (const entry of params) {
      if (!entry) continue;
      const [p, v] = entry;
      if (v === undefined || v === null) continue;
      if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(badPath === p.name ? 'not-a-number' : paramValue(v)));
      else if (p.in === 'query') {
        if (Array.isArray(v)) {
          if (p.explode === false) query.append(p.name, v.map(paramValue).join(','));
          else for (const x of v) query.append(p.name, paramValue(x));
        } else query.append(p.name, paramValue(v));
      } else if (p.in === 'header') headers[p.name] = paramValue(v);
    }
    const qs = query.toString();
    return { url: qs ? `${url}?${qs}` : url, headers, contentType: mediaType, body: body === undefined ? undefined : encodeBody(mediaType!, body) };
  });
}

function typeOk(type: unknown, v: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    case 'boolean':
      return typeof v === 'boolean';
    case 'array':
      return Array.isArray(v);
    case 'object':
      return !!v && typeof v === 'object' && !Array.isArray(v);
    default:
      return true;
  }
}

/** Checks an error body against the documented response: required members present with their types. */
export function errorShapeProblem(spec: Spec, response: Schema | undefined, res: request.Response): string | undefined {
  const content = deref(spec, response)?.content as Record<string, Schema> | undefined;
  if (!content) return undefined;
  const ct = String(res.headers['content-type'] ?? '')
    .split(';')[0]
    .trim();
  const documented = content[ct] ? ct : undefined;
  if (!documented) return `content type ${ct || '(none)'} not documented (${Object.keys(content).join(', ')})`;
  const schema = deref(spec, content[documented].schema);
  if (!schema) return undefined;
  const body = res.body as Record<string, unknown>;
  if (schema.type === 'object' || schema.properties) {
    if (!body || typeof body !== 'object') return 'error body is not an object';
    for (const k of (schema.required ?? []) as string[]) {
      if (!(k in body)) return `error body lacks required "${k}"`;
      const t = deref(spec, schema.properties?.[k])?.type;
      if (!typeOk(t, body[k])) return `error body member "${k}" is not ${t}`;
    }
  }
  return undefined;
}

/** Runs the fuzz over every operation of `opts.spec`. */
export async function fuzzSpec(opts: FuzzOptions): Promise<FuzzReport> {
  const started = Date.now();
  const report: FuzzReport = { operations: 0, requests: 0, statuses: {}, failures: [], durationMs: 0 };
  const forced = opts.forcedParams ?? {};
  const timeout = opts.timeoutMs ?? 10_000;
  const last = new Set(opts.runLast ?? []);
  const ops = operationsOf(opts.spec);
  for (const o of [...ops.filter((x) => !last.has(x.operationId)), ...ops.filter((x) => last.has(x.operationId))]) {
    report.operations++;
    const cases: { kind: FuzzFailure['kind']; req: BuiltRequest }[] = [];
    const seed = opts.seed + report.operations;
    if (!opts.skipValid?.includes(o.operationId)) {
      const arb = requestArb(opts.spec, o, forced, false);
      if (arb) for (const req of fc.sample(arb, { seed, numRuns: opts.validRuns })) cases.push({ kind: 'valid', req });
    }
    const bad = requestArb(opts.spec, o, forced, true);
    if (bad) for (const req of fc.sample(bad, { seed: seed + 7919, numRuns: opts.invalidRuns })) cases.push({ kind: 'invalid', req });
    if (o.secured) {
      const arb = requestArb(opts.spec, o, forced, false);
      if (arb) cases.push({ kind: 'anonymous', req: fc.sample(arb, { seed: seed + 104_729, numRuns: 1 })[0] });
    }
    if (o.hasSecurity) {
      const arb = requestArb(opts.spec, o, forced, false);
      if (arb) cases.push({ kind: 'bad-credentials', req: fc.sample(arb, { seed: seed + 15_485_863, numRuns: 1 })[0] });
    }
    for (const c of cases) {
      report.requests++;
      const creds = c.kind === 'anonymous' ? {} : c.kind === 'bad-credentials' ? opts.badCredentialHeaders : opts.staffHeaders;
      const headers = { ...c.req.headers, ...creds };
      let r = request(opts.app)[o.method as 'get'](c.req.url).set(headers).timeout({ deadline: timeout });
      if (c.req.body !== undefined) r = r.set('Content-Type', c.req.contentType!).send(c.req.body);
      const fail = (status: FuzzFailure['status'], problem: string, body?: string) =>
        report.failures.push({
          operationId: o.operationId,
          kind: c.kind,
          method: o.method.toUpperCase(),
          url: c.req.url.slice(0, 200),
          status,
          problem,
          body: body?.slice(0, 300),
        });
      let res: request.Response;
      try {
        res = await r;
      } catch (err) {
        const e = err as { timeout?: number; response?: request.Response; message?: string };
        if (e.response) res = e.response;
        else {
          fail(e.timeout ? 'timeout' : 'error', e.timeout ? `no answer within ${timeout} ms` : String(e.message));
          continue;
        }
      }
      report.statuses[res.status] = (report.statuses[res.status] ?? 0) + 1;
      const text = res.text ?? JSON.stringify(res.body);
      const responses = o.op.responses as Record<string, Schema>;
      const documented = responses[String(res.status)];
      if (res.status >= 500) fail(res.status, res.status === 501 ? 'not implemented' : 'server error', text);
      else if (!documented) fail(res.status, 'status not documented for the operation', text);
      else if (res.status >= 400) {
        const shape = errorShapeProblem(opts.spec, documented, res);
        if (shape) fail(res.status, shape, text);
      }
      if (c.kind === 'invalid' && res.status < 400) fail(res.status, 'invalid request accepted', c.req.body);
      if (c.kind === 'anonymous' && res.status !== 401) fail(res.status, 'secured operation did not answer 401 without credentials', text);
      if (c.kind === 'bad-credentials' && res.status !== 401) fail(res.status, 'invalid credentials not answered 401', text);
    }
  }
  report.durationMs = Date.now() - started;
  return report;
}

/** A compact, grouped summary of failures for test output (one line per operation × problem). */
export function summarize(failures: FuzzFailure[]): string[] {
  const groups = new Map<string, { f: FuzzFailure; n: number }>();
  for (const f of failures) {
    const k = `${f.operationId} [${f.kind}] ${f.status}: ${f.problem}`;
    const g = groups.get(k);
    if (g) g.n++;
    else groups.set(k, { f, n: 1 });
  }
  return [...groups.entries()].map(
    ([k, { f, n }]) => `${k} ×${n} — e.g. ${f.method} ${f.url}${f.body ? ` → ${f.body.replace(/\s+/g, ' ').slice(0, 160)}` : ''}`,
  );
}
