/**
 * Fast lanes: a service's hottest plain requests (timing's punch reads and uploads, the shop's
 * article list) served before Express sets the request up — Express's per-request set-up and pipeline cost
 * more CPU than a poll's page statement (bench/README.md, finding 14) — and answered the way the pipeline
 * would answer them: the same request id, metrics and log line. A lane passes every request it does not
 * serve completely to the pipeline, which then answers it from scratch.
 *
 * What a lane takes as valid comes from the loaded spec (the document the request validator uses), compiled
 * once when the app is built: {@link compileTextCheck} for parameters, {@link compileJsonCheck} for bodies.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { assignRequestId, logCompletedRequest } from './logging';
import type { AppMetrics } from './metrics';
import { resolveRef, type OpenApiDocument } from './openapi';
import { TEXT_FORMATS } from './text-rules';

/** Serves a request, or calls `pipeline` (nothing sent yet) to have the Express app answer it. */
export type FastLane = (req: IncomingMessage, res: ServerResponse, pipeline: () => void) => void;

/** Express's entry point of an app (untyped in @types/express): the app function and `listen` call it. */
interface AppEntry {
  handle(req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): void;
}

/** Puts `lane` in front of `app`, before Express touches the request; `app` stays an Express app. */
export function runBeforeExpress(app: Express, lane: FastLane): void {
  const entry = app as unknown as AppEntry;
  const expressHandle = entry.handle.bind(app);
  entry.handle = (req, res, next) => lane(req, res, () => expressHandle(req, res, next));
}

/** What a lane records its answers with: the app's metrics and logger, and `HTTP_LOG` as read when the app was built (logging.ts `httpLogEnabled`). */
export interface FastLaneRecorder {
  metrics: AppMetrics;
  logger: Logger;
  httpLog: boolean;
}

/**
 * Sends `status` (200 unless given, e.g. 304) with `headers` and `body` and records it as the pipeline would: `X-Request-Id`, the request
 * metrics of `operation` (duration from `start`, `process.hrtime.bigint()` at arrival) and, when `recorder.httpLog`
 * is on, the request log line.
 */
export function sendFastLaneAnswer(
  recorder: FastLaneRecorder,
  req: IncomingMessage,
  res: ServerResponse,
  start: bigint,
  operation: string,
  body: string | Buffer,
  headers: Record<string, string | number>,
  status = 200,
): void {
  const requestId = assignRequestId(req, res);
  res.writeHead(status, headers);
  res.end(body);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  recorder.metrics.record(operation, req.method ?? '', status, seconds);
  if (recorder.httpLog) logCompletedRequest(recorder.logger, req, res, requestId, seconds * 1000);
}

/** Keywords that only annotate a schema: they change no answer of the validator. */
const ANNOTATIONS = new Set(['description', 'example', 'examples', 'default', 'title', 'deprecated']);

/** Longest run of digits the lanes take in a number: up to 15 digits a decimal is exact as a JavaScript number. */
const PLAIN_INTEGER = /^-?[0-9]{1,15}$/;
const PLAIN_NUMBER = /^-?[0-9]{1,15}(\.[0-9]{1,6})?$/;

/** Value range of the OpenAPI integer formats that bound it (`int64` is within the 15-digit plain shape). */
const FORMAT_RANGES: Record<string, [number, number] | undefined> = { int32: [-(2 ** 31), 2 ** 31 - 1] };

function unsupported(where: string, keyword: string): Error {
  return new Error(`fast lane: ${where} uses \`${keyword}\`, which the fast-lane rules do not check (packages/shared/src/fast-lane.ts)`);
}

type Schema = Record<string, unknown>;

/** Bounds of a numeric schema (`minimum`, `maximum`, `exclusive*`, an int32 `format`) as one predicate. */
function numericBounds(schema: Schema): (n: number) => boolean {
  const range = typeof schema.format === 'string' ? FORMAT_RANGES[schema.format] : undefined;
  const min = Math.max(typeof schema.minimum === 'number' ? schema.minimum : -Infinity, range?.[0] ?? -Infinity);
  const max = Math.min(typeof schema.maximum === 'number' ? schema.maximum : Infinity, range?.[1] ?? Infinity);
  // OpenAPI 3.0 marks `minimum`/`maximum` exclusive with `true`; 3.1 gives the exclusive bound as a number.
  const exclusive = (v: unknown, bound: unknown, none: number) => (typeof v === 'number' ? v : v === true && typeof bound === 'number' ? bound : none);
  const exMin = exclusive(schema.exclusiveMinimum, schema.minimum, -Infinity);
  const exMax = exclusive(schema.exclusiveMaximum, schema.maximum, Infinity);
  return (n) => n >= min && n <= max && n > exMin && n < exMax;
}

/** String rules of a schema (`pattern` as the validator compiles it, a text `format` of text-rules.ts, lengths, `enum`). */
function stringCheck(schema: Schema): (s: string) => boolean {
  const regexp = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : undefined;
  const format = typeof schema.format === 'string' ? TEXT_FORMATS[schema.format] : undefined;
  const pattern = format === undefined ? regexp : { test: (s: string) => format(s) && (regexp === undefined || regexp.test(s)) };
  const maxLength = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const allowed = Array.isArray(schema.enum) ? new Set(schema.enum as unknown[]) : undefined;
  // The validator counts code points; a UTF-16 length is at least that and at most twice that, so the
  // lengths are compared in code points only where the UTF-16 length leaves it open.
  const longEnough = (s: string) => s.length >= 2 * minLength || (s.length >= minLength && [...s].length >= minLength);
  return (s) => s.length <= maxLength && longEnough(s) && (pattern === undefined || pattern.test(s)) && (allowed === undefined || allowed.has(s));
}

const KEYWORDS: Record<string, readonly string[]> = {
  string: ['type', 'format', 'pattern', 'minLength', 'maxLength', 'enum'],
  integer: ['type', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'],
  number: ['type', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'],
  boolean: ['type'],
  object: ['type', 'properties', 'required', 'additionalProperties'],
  array: ['type', 'items', 'minItems', 'maxItems'],
};

/** `schema` with its `$ref` resolved, after checking that the lane knows every validating keyword in it. */
function knownSchema(spec: OpenApiDocument, raw: Schema, where: string): Schema & { type: string } {
  const schema = resolveRef(spec, raw);
  const type = schema.type;
  if (typeof type !== 'string' || !(type in KEYWORDS)) throw unsupported(where, `type: ${JSON.stringify(type)}`);
  for (const keyword of Object.keys(schema)) {
    // Extensions (`x-…`) do not validate; `x-items-checked-alone` only makes the validator more lenient than a lane.
    if (!ANNOTATIONS.has(keyword) && !keyword.startsWith('x-') && !KEYWORDS[type].includes(keyword)) throw unsupported(where, keyword);
  }
  if (
    type !== 'string' &&
    'format' in schema &&
    schema.format !== 'int32' &&
    schema.format !== 'int64' &&
    schema.format !== 'float' &&
    schema.format !== 'double'
  ) {
    throw unsupported(where, `format: ${String(schema.format)}`);
  }
  if (type === 'string' && 'format' in schema && !(typeof schema.format === 'string' && Object.hasOwn(TEXT_FORMATS, schema.format)))
    throw unsupported(where, `format: ${String(schema.format)}`);
  return schema as Schema & { type: string };
}

/**
 * Compiles the check of a parameter value as it arrives (query or header text) against its spec `schema`:
 * true when the value is plainly valid — the validator accepts it, in the plain shape the lane reads (numbers
 * as up to 15 digits with up to 6 decimals, booleans as `true`/`false`). A false answer only sends the
 * request to the pipeline, which answers it. Throws at start-up for a keyword the lanes cannot check, so a
 * spec change never leaves a lane taking what the validator would refuse. `where` names the schema in errors.
 */
export function compileTextCheck(spec: OpenApiDocument, raw: Schema, where: string): (value: string) => boolean {
  const resolved = resolveRef(spec, raw);
  if (Array.isArray(resolved.oneOf)) {
    // Text carries no JSON type: a value is plain when one form accepts it (a card number's digits are
    // both the text form and the integer form).
    for (const keyword of Object.keys(resolved))
      if (keyword !== 'oneOf' && !ANNOTATIONS.has(keyword) && !keyword.startsWith('x-')) throw unsupported(where, `${keyword} beside oneOf`);
    const alternatives = (resolved.oneOf as Schema[]).map((s, i) => compileTextCheck(spec, s, `${where}.oneOf[${i}]`));
    return (v) => alternatives.some((check) => check(v));
  }
  const schema = knownSchema(spec, raw, where);
  switch (schema.type) {
    case 'string':
      return stringCheck(schema);
    case 'boolean':
      return (v) => v === 'true' || v === 'false';
    case 'integer':
    case 'number': {
      const shape = schema.type === 'integer' ? PLAIN_INTEGER : PLAIN_NUMBER;
      const inBounds = numericBounds(schema);
      // A sign only where the schema admits negatives (as the pipeline's strict numbers, "Text and numbers").
      const unsigned = typeof schema.minimum === 'number' && schema.minimum >= 0;
      return (v) => shape.test(v) && !(unsigned && v.startsWith('-')) && inBounds(Number(v));
    }
    default:
      throw unsupported(where, `type: ${schema.type}`);
  }
}

/**
 * Compiles the check of a parsed JSON value against its spec `schema` (refs resolved; objects by
 * `properties`, `required` and `additionalProperties`, arrays by `items` and their length): true when the
 * validator accepts the value as it is, without coercing a type. Throws at start-up as {@link compileTextCheck}.
 */
export function compileJsonCheck(spec: OpenApiDocument, raw: Schema, where: string): (value: unknown) => boolean {
  const resolved = resolveRef(spec, raw);
  if (Array.isArray(resolved.oneOf)) {
    // `oneOf` (a value the spec takes in two forms, e.g. a card number as text or as an integer): exactly one
    // alternative must accept the value, as the validator requires.
    for (const keyword of Object.keys(resolved))
      if (keyword !== 'oneOf' && !ANNOTATIONS.has(keyword) && !keyword.startsWith('x-')) throw unsupported(where, `${keyword} beside oneOf`);
    const alternatives = (resolved.oneOf as Schema[]).map((s, i) => compileJsonCheck(spec, s, `${where}.oneOf[${i}]`));
    return (v) => alternatives.filter((check) => check(v)).length === 1;
  }
  const schema = knownSchema(spec, raw, where);
  switch (schema.type) {
    case 'string': {
      const check = stringCheck(schema);
      return (v) => typeof v === 'string' && check(v);
    }
    case 'boolean':
      return (v) => typeof v === 'boolean';
    case 'integer':
    case 'number': {
      const inBounds = numericBounds(schema);
      const integer = schema.type === 'integer';
      return (v) => typeof v === 'number' && Number.isFinite(v) && (!integer || Number.isInteger(v)) && inBounds(v);
    }
    case 'array': {
      const items = schema.items === undefined ? () => true : compileJsonCheck(spec, schema.items as Schema, `${where}.items`);
      const minItems = typeof schema.minItems === 'number' ? schema.minItems : 0;
      const maxItems = typeof schema.maxItems === 'number' ? schema.maxItems : Infinity;
      return (v) => Array.isArray(v) && v.length >= minItems && v.length <= maxItems && v.every(items);
    }
    case 'object': {
      const required = new Set((schema.required ?? []) as string[]);
      const properties = Object.entries((schema.properties ?? {}) as Record<string, Schema>).map(([name, s]) => ({
        name,
        required: required.has(name),
        check: compileJsonCheck(spec, s, `${where}.${name}`),
      }));
      // Only a closed object is plain: an extra property would need the validator's own handling.
      if (schema.additionalProperties !== false) throw unsupported(where, 'an open object (additionalProperties)');
      return (v) => {
        if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
        const o = v as Record<string, unknown>;
        let present = 0;
        for (const p of properties) {
          if (!Object.hasOwn(o, p.name)) {
            if (p.required) return false;
          } else if (!p.check(o[p.name])) return false;
          else present++;
        }
        // Any key beyond the declared properties: not plain.
        return Object.keys(o).length === present;
      };
    }
    default:
      throw unsupported(where, `type: ${schema.type}`);
  }
}

/** A parameter of an operation, `$ref` resolved. */
export interface SpecParameter {
  name: string;
  in: string;
  schema: Schema;
}

/** The parameters of `method` `path` in `spec` (path-level ones first, then the operation's), refs resolved. */
export function operationParameters(spec: OpenApiDocument, path: string, method: string): SpecParameter[] {
  const item = spec.paths[path];
  const operation = item?.[method] as { parameters?: Schema[] } | undefined;
  if (!operation) throw new Error(`fast lane: the spec has no ${method.toUpperCase()} ${path}`);
  return [...((item.parameters as Schema[] | undefined) ?? []), ...(operation.parameters ?? [])].map((p) => resolveRef(spec, p) as unknown as SpecParameter);
}

/** The `application/json` request body schema of `method` `path` in `spec`. */
export function jsonBodySchema(spec: OpenApiDocument, path: string, method: string): Schema {
  const operation = spec.paths[path]?.[method] as { requestBody?: Schema } | undefined;
  const body = operation?.requestBody && resolveRef(spec, operation.requestBody);
  const schema = (body?.content as Record<string, { schema?: Schema }> | undefined)?.['application/json']?.schema;
  if (!schema) throw new Error(`fast lane: the spec has no JSON body for ${method.toUpperCase()} ${path}`);
  return schema;
}
