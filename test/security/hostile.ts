/**
 * Hostile requests generated from a spec (the OWASP API Security Top 10 checks that can be derived from an
 * OpenAPI document). For every operation, starting from a request the spec calls valid:
 * - `prototype-keys`: body keys and form fields named like `Object.prototype` members (`__proto__`,
 *   `constructor`, `toString`, `hasOwnProperty`) and the same as query parameters;
 * - `mass-assignment`: server-owned fields the schema does not declare (`id`, `ownerId`, `roles`, `status`,
 *   `createdAt`, …) with a sentinel value that must never come back in an answer;
 * - `deep-nesting`: every container value of the body nested into itself 5,000 levels deep, and a body of
 *   5,000 nested arrays (built as text: a recursive schema must not overflow the validator's stack);
 * - `oversized`: a body just above the largest body limit of the services (11 MiB) → 413;
 * - `wrong-role`: a caller whose role is outside the operation's `x-roles` → 403;
 * - `forbidden-text`: every string query and path parameter and every string property of the body (JSON,
 *   form, or a text body as a whole) in turn holding a NUL, and — where the spec's format is not the
 *   multi-line `text` — a CR/LF pair, and a bidi override (U+202E) in any case → 400 (the specs' "Text and
 *   numbers": `single-line`/`text` formats and the NUL net);
 * - `typed-body`: every typed property of a JSON body in another JSON type (`"1"` for a number, `"true"` and
 *   `null` for a boolean, `12345` for a string) → 400 (bodies are not coerced);
 * - `lenient-number`: every integer or number query and path parameter as `0x10`, `0b11`, ` 5`, `1e309`,
 *   and integers also as `1e3` → 400.
 * Every answer must be below 500, declared for the operation, in the documented error shape when it is an
 * error, and free of stack traces; afterwards `Object.prototype` must be unpolluted.
 */
import fc from 'fast-check';
import request from 'supertest';
import { deref, type Schema, type Spec } from '../fuzz/openapi-arbitraries';
import { errorShapeProblem, operationsOf, requestArb, type BuiltRequest, type Operation } from '../fuzz/spec-fuzz';

/** The variants of {@link attackSpec}. */
type HostileVariant = 'prototype-keys' | 'mass-assignment' | 'deep-nesting' | 'oversized' | 'wrong-role' | 'forbidden-text' | 'typed-body' | 'lenient-number';

/** Variants whose every request must be refused by validation. */
const MUST_BE_400 = new Set<HostileVariant>(['forbidden-text', 'typed-body', 'lenient-number']);
/** Text the `forbidden-text` variant puts into a value: NUL, CR/LF (not in `text` fields), a bidi override. */
const FORBIDDEN = { nul: 'a\u0000b', crlf: 'Erika\r\nBcc: x@example.com', bidi: 'Erika\u202Eexe.pdf' };
/** Integer texts a strict parser refuses (hex, binary, exponent, leading space, beyond a double). */
const LENIENT_NUMBERS = ['0x10', '0b11', '1e3', ' 5', '1e309'];

/** Options of {@link attackSpec}. */
export interface HostileOptions {
  /** The Express app under test. */
  app: Parameters<typeof request>[0];
  spec: Spec;
  /** Headers of a caller every operation admits (admin), so hostile bodies reach validation and handlers. */
  privilegedHeaders: Record<string, string>;
  /** A low-privilege caller: its role name as in `x-roles`, and its headers. */
  lowRole: { name: string; headers: Record<string, string> };
  seed: number;
  /** operationIds whose requests are not sent with a valid-looking body (endless streams). */
  skip?: string[];
  /** operationIds sent last (they reconfigure the service). */
  runLast?: string[];
  /** Query/header parameter values to force (e.g. `{ wait: '0' }`). */
  forcedParams?: Record<string, string>;
}

/** One finding of {@link attackSpec}. */
export interface HostileFinding {
  operationId: string;
  variant: HostileVariant;
  status: number | 'error';
  problem: string;
  /** The parameter or body property the case changed (input-rule variants). */
  where?: string;
  body?: string;
}

/** Outcome of {@link attackSpec}. */
export interface HostileReport {
  requests: number;
  /** Count per variant and status, e.g. `{ 'deep-nesting 400': 80 }`. */
  statuses: Record<string, number>;
  findings: HostileFinding[];
}

/** Nesting depth of the deep-nesting variant. */
export const DEEP = 5_000;
/** Size of the oversized variant's body: above the largest body limit of either service (10 MiB uploads). */
const OVERSIZED_BYTES = 11 * 1024 * 1024;
const SENTINEL = 987_654_321;
const PROTO_KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];
const SERVER_OWNED = [
  'id',
  'oid',
  'userId',
  'ownerId',
  'owner',
  'roles',
  'role',
  'isAdmin',
  'status',
  'createdAt',
  'updatedAt',
  'paid',
  'verified',
  'emailVerified',
];
/** Traces of a stack or of internals in an answer. */
const LEAK = /\bat [\w$.<>]+ \(|node_modules|\.[jt]s:\d+:\d+|\b(TypeError|ReferenceError|RangeError|SyntaxError): /;

type Case = { variant: HostileVariant; req: BuiltRequest; headers: Record<string, string>; method?: string; where?: string };

/** The schema's texts the `forbidden-text` variant tries: every one for single-line fields, no CR/LF in `text`. */
function forbiddenFor(schema: Schema | undefined): string[] {
  return schema?.format === 'text' ? [FORBIDDEN.nul, FORBIDDEN.bidi] : Object.values(FORBIDDEN);
}

/** Leaves of a JSON value with their schema: `[path, schema, value]`, through objects, arrays and `$ref`s, 5 levels. */
function leaves(
  spec: Spec,
  schema: unknown,
  v: unknown,
  path: (string | number)[] = [],
  out: [(string | number)[], Schema, unknown][] = [],
): [(string | number)[], Schema, unknown][] {
  const s = deref<Schema>(spec, schema) ?? {};
  if (path.length > 5) return out;
  if (Array.isArray(v)) {
    if (v.length > 0) leaves(spec, s.items, v[0], [...path, 0], out);
  } else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      const ps = s.properties?.[k] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
      if (ps !== undefined) leaves(spec, ps, x, [...path, k], out);
    }
  } else if (path.length > 0) out.push([path, s, v]);
  return out;
}

/** `body` with the value at `path` replaced by `value` (a copy). */
function withValue(body: unknown, path: (string | number)[], value: unknown): unknown {
  const copy = structuredClone(body) as Record<string | number, unknown>;
  let parent = copy;
  for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
  parent[path[path.length - 1]] = value;
  return copy;
}

/** The `url` of `req` with path parameter `name` (of template `template`) or query parameter `name` set to `value`. */
function withParam(template: string, url: string, p: Schema, value: string): string {
  const [pathPart, queryPart] = url.split('?');
  if (p.in === 'path') {
    const names = template.split('/');
    const parts = pathPart.split('/');
    const at = names.indexOf(`{${p.name}}`);
    if (at < 0) return url;
    parts[at] = encodeURIComponent(value);
    return parts.join('/') + (queryPart === undefined ? '' : `?${queryPart}`);
  }
  const q = new URLSearchParams(queryPart ?? '');
  q.set(p.name, value);
  return `${pathPart}?${q.toString()}`;
}

/** The cases of the input-rule variants (`forbidden-text`, `typed-body`, `lenient-number`) of one operation. */
function inputRuleCases(opts: HostileOptions, o: Operation, valid: BuiltRequest, admin: Record<string, string>): Case[] {
  const out: Case[] = [];
  const add = (variant: HostileVariant, where: string, req: BuiltRequest) => out.push({ variant, req, headers: admin, where });
  for (const p of o.params) {
    const schema = deref<Schema>(opts.spec, p.schema) ?? {};
    if (p.in !== 'path' && p.in !== 'query') continue;
    if (schema.type === 'string' || schema.oneOf)
      for (const text of forbiddenFor(schema)) add('forbidden-text', p.name, { ...valid, url: withParam(o.path, valid.url, p, text) });
    // An exponent is a decimal number's own notation (`5e-3`), not an integer's.
    if (schema.type === 'integer' || schema.type === 'number')
      for (const text of LENIENT_NUMBERS.filter((x) => schema.type === 'integer' || x !== '1e3'))
        add('lenient-number', p.name, { ...valid, url: withParam(o.path, valid.url, p, text) });
  }
  const { mediaType, schema } = bodySchemaOf(opts.spec, o);
  if (!mediaType || valid.body === undefined) return out;
  if (mediaType === 'application/json') {
    const body = JSON.parse(valid.body) as unknown;
    for (const [path, s, v] of leaves(opts.spec, schema, body)) {
      const where = path.join('.');
      const json = (x: unknown) => ({ ...valid, body: JSON.stringify(withValue(body, path, x)) });
      if (typeof v === 'string' || s.type === 'string') for (const text of forbiddenFor(s)) add('forbidden-text', where, json(text));
      if (s.oneOf) continue;
      if (s.type === 'string') add('typed-body', where, json(12345));
      if (s.type === 'integer' || s.type === 'number') add('typed-body', where, json(typeof v === 'number' ? String(v) : '1'));
      if (s.type === 'boolean') {
        add('typed-body', where, json(typeof v === 'boolean' ? String(v) : 'true'));
        if (!s.nullable) add('typed-body', where, json(null));
      }
    }
  } else if (mediaType === 'application/x-www-form-urlencoded') {
    for (const [k] of new URLSearchParams(valid.body)) {
      const s = deref<Schema>(opts.spec, schema?.properties?.[k]);
      for (const text of forbiddenFor(s)) {
        const f = new URLSearchParams(valid.body);
        f.set(k, text);
        add('forbidden-text', k, { ...valid, body: f.toString() });
      }
    }
  } else if (mediaType.startsWith('text/') && schema?.type === 'string') {
    for (const text of forbiddenFor(schema)) add('forbidden-text', '(body)', { ...valid, body: `${valid.body}${text}` });
  }
  return out;
}

function bodySchemaOf(spec: Spec, o: Operation): { mediaType?: string; schema?: Schema } {
  const content = deref(spec, o.op.requestBody)?.content as Record<string, Schema> | undefined;
  if (!content) return {};
  const mediaType =
    Object.keys(content).find((t) => t === 'application/json') ??
    Object.keys(content).find((t) => t === 'application/x-www-form-urlencoded') ??
    Object.keys(content)[0];
  return { mediaType, schema: deref(spec, content[mediaType].schema) };
}

/** Inserts `"k": v` members at the start of a JSON object text (so `__proto__` stays a literal own key). */
function withLeadingMembers(objectText: string, members: string): string {
  const rest = objectText.slice(1).trim();
  return `{${members}${rest === '}' ? '' : ','}${rest}`;
}

/** Container values of a body (objects and arrays) with the path to them, up to `maxDepth` levels. */
function containers(v: unknown, path: (string | number)[] = [], out: (string | number)[][] = [], maxDepth = 4): (string | number)[][] {
  if (path.length >= maxDepth || v === null || typeof v !== 'object') return out;
  const entries: [string | number, unknown][] = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v as Record<string, unknown>);
  for (const [k, x] of entries) {
    if (x !== null && typeof x === 'object') {
      if (typeof k === 'string') out.push([...path, k]);
      containers(x, [...path, k], out, maxDepth);
    }
  }
  return out;
}

/** The body text with the value at `path` (a key of an object) nested into itself `DEEP` times. */
function selfNested(body: unknown, path: (string | number)[]): string {
  const key = path[path.length - 1] as string;
  const MARK = '"\u0000deep\u0000"';
  const copy = structuredClone(body) as Record<string | number, unknown>;
  let parent: Record<string | number, unknown> = copy;
  for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
  const inner = JSON.stringify(parent[key]);
  parent[key] = '\u0000deep\u0000';
  const isArray = Array.isArray(JSON.parse(inner));
  const open = isArray ? `[{${JSON.stringify(key)}:` : `{${JSON.stringify(key)}:`;
  const close = isArray ? '}]' : '}';
  return JSON.stringify(copy).replace(MARK, open.repeat(DEEP) + inner + close.repeat(DEEP));
}

function casesOf(opts: HostileOptions, o: Operation): Case[] {
  const forced = opts.forcedParams ?? {};
  const arb = requestArb(opts.spec, o, forced, false);
  if (!arb) return [];
  const [valid] = fc.sample(arb, { seed: opts.seed, numRuns: 1 });
  const admin = opts.privilegedHeaders;
  const out: Case[] = [];
  const roles = (o.op['x-roles'] ?? ['admin']) as string[];
  const admitsLow = roles.includes('anonymous') || roles.includes('authenticated') || roles.includes(opts.lowRole.name);
  if (!admitsLow) out.push({ variant: 'wrong-role', req: valid, headers: opts.lowRole.headers });
  if (opts.skip?.includes(o.operationId)) return out;

  out.push(...inputRuleCases(opts, o, valid, admin));
  const sep = valid.url.includes('?') ? '&' : '?';
  out.push({ variant: 'prototype-keys', req: { ...valid, url: `${valid.url}${sep}${PROTO_KEYS.map((k) => `${k}=1`).join('&')}` }, headers: admin });

  const { mediaType, schema } = bodySchemaOf(opts.spec, o);
  if (!mediaType || valid.body === undefined) return out;
  const json = mediaType === 'application/json';
  const form = mediaType === 'application/x-www-form-urlencoded';
  if (form) {
    const fields = PROTO_KEYS.map((k) => `${k}=1`).join('&') + '&__proto__[polluted]=yes&constructor[prototype][polluted]=yes';
    out.push({ variant: 'prototype-keys', req: { ...valid, body: `${valid.body}&${fields}` }, headers: admin });
  }
  if (json) {
    const body = JSON.parse(valid.body) as unknown;
    const protoMembers = `"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"toString":1,"hasOwnProperty":1,"valueOf":"x"`;
    if (body && typeof body === 'object' && !Array.isArray(body)) {
      out.push({ variant: 'prototype-keys', req: { ...valid, body: withLeadingMembers(valid.body, protoMembers) }, headers: admin });
      const declared = new Set(Object.keys(schema?.properties ?? {}));
      const extra = SERVER_OWNED.filter((k) => !declared.has(k)).map(
        (k) => `${JSON.stringify(k)}:${k === 'roles' ? '["admin"]' : k.endsWith('At') ? '"1999-09-09T09:09:09Z"' : SENTINEL}`,
      );
      if (extra.length > 0) {
        out.push({ variant: 'mass-assignment', req: { ...valid, body: withLeadingMembers(valid.body, extra.join(',')) }, headers: admin });
        out.push({ variant: 'mass-assignment', req: { ...valid, body: withLeadingMembers(valid.body, extra.join(',')) }, headers: opts.lowRole.headers });
      }
    } else if (Array.isArray(body) && body.length > 0 && body[0] && typeof body[0] === 'object') {
      const first = withLeadingMembers(JSON.stringify(body[0]), protoMembers);
      out.push({
        variant: 'prototype-keys',
        req: { ...valid, body: `[${first}${body.length > 1 ? ',' + JSON.stringify(body.slice(1)).slice(1, -1) : ''}]` },
        headers: admin,
      });
    }
    for (const path of containers(body).slice(0, 6)) out.push({ variant: 'deep-nesting', req: { ...valid, body: selfNested(body, path) }, headers: admin });
    out.push({ variant: 'deep-nesting', req: { ...valid, body: '['.repeat(DEEP) + ']'.repeat(DEEP) }, headers: admin });
  }
  const filler = 'a'.repeat(OVERSIZED_BYTES);
  out.push({ variant: 'oversized', req: { ...valid, body: json ? `{"x":"${filler}"}` : form ? `x=${filler}` : filler }, headers: admin });
  return out;
}

/** Sends every hostile variant of every operation of `opts.spec` and checks the answers (see the module doc). */
export async function attackSpec(opts: HostileOptions): Promise<HostileReport> {
  const report: HostileReport = { requests: 0, statuses: {}, findings: [] };
  const last = new Set(opts.runLast ?? []);
  const ops = operationsOf(opts.spec);
  for (const o of [...ops.filter((x) => !last.has(x.operationId)), ...ops.filter((x) => last.has(x.operationId))]) {
    const responses = o.op.responses as Record<string, Schema>;
    for (const c of casesOf(opts, o)) {
      report.requests++;
      const fail = (status: HostileFinding['status'], problem: string, body?: string) =>
        report.findings.push({ operationId: o.operationId, variant: c.variant, status, problem, where: c.where, body: body?.slice(0, 300) });
      let r = request(opts.app)
        [o.method as 'get'](c.req.url)
        .set({ ...c.req.headers, ...c.headers })
        .timeout({ deadline: 30_000 });
      if (c.req.body !== undefined) r = r.set('Content-Type', c.req.contentType!).send(c.req.body);
      let res: request.Response;
      try {
        res = await r;
      } catch (err) {
        const e = err as { response?: request.Response; message?: string; code?: string };
        if (e.response) res = e.response;
        // The server may close the connection while an oversized body is still being written: that is a refusal.
        else if (c.variant === 'oversized' && (e.code === 'EPIPE' || e.code === 'ECONNRESET')) continue;
        else {
          fail('error', String(e.message));
          continue;
        }
      }
      const key = `${c.variant} ${res.status}`;
      report.statuses[key] = (report.statuses[key] ?? 0) + 1;
      const text = res.text ?? JSON.stringify(res.body);
      if (res.status >= 500) fail(res.status, 'server error', text);
      else if (!responses[String(res.status)]) fail(res.status, 'status not documented for the operation', text);
      else if (res.status >= 400) {
        const shape = errorShapeProblem(opts.spec, responses[String(res.status)], res);
        if (shape) fail(res.status, shape, text);
      }
      if (LEAK.test(text ?? '')) fail(res.status, 'answer shows a stack trace or internals', text);
      if (c.variant === 'wrong-role' && res.status !== 403) fail(res.status, `role ${opts.lowRole.name} is outside x-roles but was not refused with 403`, text);
      if (c.variant === 'oversized' && res.status !== 413) fail(res.status, 'oversized body not refused with 413', text);
      if (c.variant === 'mass-assignment' && res.status < 300 && (text.includes(String(SENTINEL)) || text.includes('1999-09-09T09:09')))
        fail(res.status, 'an undeclared server-owned field was stored or echoed', text);
      if (MUST_BE_400.has(c.variant) && res.status !== 400) fail(res.status, `${c.where}: refused input not answered 400`, text);
      if (c.variant === 'deep-nesting' && res.status < 300) fail(res.status, `a body nested ${DEEP} levels deep was accepted`, text);
    }
  }
  const probe = {} as Record<string, unknown>;
  if (probe.polluted !== undefined || Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted'))
    report.findings.push({ operationId: '*', variant: 'prototype-keys', status: 'error', problem: 'Object.prototype was polluted' });
  return report;
}

/** One line per operation × variant × problem, for test output. */
export function summarizeFindings(findings: HostileFinding[]): string[] {
  const groups = new Map<string, HostileFinding>();
  for (const f of findings) {
    const k = `${f.operationId} [${f.variant}${f.where ? ` ${f.where}` : ''}] ${f.status}: ${f.problem}`;
    if (!groups.has(k)) groups.set(k, f);
  }
  return [...groups.entries()].map(([k, f]) => `${k}${f.body ? ` — ${f.body.replace(/\s+/g, ' ').slice(0, 200)}` : ''}`);
}
