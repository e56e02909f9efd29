/**
 * weclapp's published contract, executable: validators over weclapp's own OpenAPI v1 description, vendored in
 * `packages/shared/contracts/weclapp-v1.structure.json` (provenance in `contracts/README.md`), for the contract
 * tests of the ERP client and the ERP simulator (docs/weclapp.md, "Contract").
 *
 * weclapp's description marks no JSON-Schema `required` lists; it flags properties with `readOnly`,
 * `deprecated` and `x-weclapp.required` (the property is never empty on a stored entity). The rules built from
 * it:
 * - Every object is closed: a property the description does not have fails (requests and answers).
 * - Requests: a `readOnly` property fails, except `id` and `version` in a `PUT` body (weclapp's optimistic
 *   lock reads them); a `deprecated` property fails (the product must not build on what weclapp is removing);
 *   what a creation cannot do without ({@link CREATION_REQUIRED}) must be there.
 * - Answers: every `x-weclapp.required` property must be there (weclapp leaves out only empty properties,
 *   `serializeNulls` aside); `null` is never a value (weclapp omits empty properties instead).
 * - Types, enums, patterns and maximum lengths as described; `format: decimal` strings by their pattern.
 * Paths are matched below the API root (`…/webapp/api/v1`); list filters (`articleNumber-eq`, …) are
 * weclapp's generic query syntax and are not described per path, so queries are not validated here.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';

type Json = Record<string, unknown>;
interface Schema extends Json {
  $ref?: string;
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  items?: Schema;
  readOnly?: boolean;
  deprecated?: boolean;
  'x-weclapp'?: { required?: boolean };
}

/** The vendored description (OpenAPI 3.0 JSON). */
const WECLAPP_CONTRACT_FILE = path.join(__dirname, '../contracts/weclapp-v1.structure.json');

/**
 * What weclapp cannot create a document without (a customer, positions, and per position the article and
 * quantity), by schema name: the part of "required" that holds for creation requests.
 */
const CREATION_REQUIRED: Readonly<Record<string, readonly string[]>> = {
  salesOrder: ['customerId', 'orderItems'],
  salesOrderItem: ['articleId', 'quantity'],
  quotation: ['customerId', 'quotationItems'],
  quotationItem: ['articleId', 'quantity'],
};

type Mode = 'post' | 'put' | 'answer';

/** One operation of the description: its path as a pattern, request body schema and success answer schema. */
interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  requestSchema: string | null;
  answer: Schema | null;
}

/** Outcome of a check: `null` when the call is not in the contract, else the violations (empty = conforms). */
export type ContractCheck = string[] | null;

/** Validators of requests and answers against weclapp's description; build once with {@link loadWeclappContract}. */
export class WeclappContract {
  private readonly ajv = new Ajv({ allErrors: true, strict: false, verbose: true });
  private readonly schemas: Record<string, Schema>;
  private readonly operations: Operation[] = [];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(document: Json) {
    this.ajv
      .addFormat('decimal', true)
      .addFormat('timestamp', true)
      .addFormat('int32', true)
      .addFormat('int64', true)
      .addFormat('html', true)
      .addFormat('email', true)
      .addFormat('uuid', true);
    this.schemas = ((document.components as Json).schemas ?? {}) as Record<string, Schema>;
    for (const [template, item] of Object.entries(document.paths as Record<string, Record<string, Json>>)) {
      const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}/?$`);
      for (const [method, op] of Object.entries(item)) {
        const body = ((op.requestBody as Json | undefined)?.content as Json | undefined)?.['application/json'] as { schema?: Schema } | undefined;
        const responses = (op.responses ?? {}) as Record<string, Json>;
        const ok = responses['200'] ?? responses['201'];
        const answer = ((ok?.content as Json | undefined)?.['application/json'] as { schema?: Schema } | undefined)?.schema ?? null;
        this.operations.push({ method: method.toUpperCase(), template, pattern, requestSchema: body?.schema?.$ref?.split('/').pop() ?? null, answer });
      }
    }
  }

  private operation(method: string, apiPath: string): Operation | undefined {
    const p = apiPath.replace(/^.*\/webapp\/api\/v1/, '').replace(/\?.*$/, '');
    return this.operations.find((o) => o.method === method.toUpperCase() && o.pattern.test(p));
  }

  /** The description's path template of a call (`/salesOrder/id/{id}`), or null when it has none. */
  templateOf(method: string, apiPath: string): string | null {
    return this.operation(method, apiPath)?.template ?? null;
  }

  /** Violations of a request body (`null`: the call is not in the contract). */
  requestErrors(method: string, apiPath: string, body: unknown): ContractCheck {
    const op = this.operation(method, apiPath);
    if (!op) return null;
    if (!op.requestSchema) return body === undefined || body === '' ? [] : ['a body where the operation takes none'];
    return this.run(this.validator(op.requestSchema, method.toUpperCase() === 'PUT' ? 'put' : 'post'), body);
  }

  /** Violations of a success answer body (`null`: the call is not in the contract). */
  answerErrors(method: string, apiPath: string, body: unknown): ContractCheck {
    const op = this.operation(method, apiPath);
    if (!op) return null;
    if (!op.answer) return body === undefined || body === '' ? [] : ['a body where the operation answers none'];
    const key = `answer:${method} ${op.template}`;
    let v = this.compiled.get(key);
    if (!v) {
      this.register('answer');
      v = this.ajv.compile(this.convert(op.answer, 'answer'));
      this.compiled.set(key, v);
    }
    return this.run(v, body);
  }

  /** Violations of an entity as weclapp would answer it (schema by name, e.g. `salesOrder`). */
  entityErrors(schemaName: string, entity: unknown): string[] {
    return this.run(this.validator(schemaName, 'answer'), entity);
  }

  private validator(schemaName: string, mode: Mode): ValidateFunction {
    const key = `${mode}:${schemaName}`;
    let v = this.compiled.get(key);
    if (!v) {
      this.register(mode);
      v = this.ajv.compile({ $ref: `weclapp-${mode}-${schemaName}` });
      this.compiled.set(key, v);
    }
    return v;
  }

  private readonly registered = new Set<Mode>();

  /**
   * Adds every schema of the description, converted for `mode`, to ajv once, each under its own id: a validator
   * compiles only the schemas it reaches, each once.
   */
  private register(mode: Mode): void {
    if (this.registered.has(mode)) return;
    for (const name of Object.keys(this.schemas))
      this.ajv.addSchema({ $id: `weclapp-${mode}-${name}`, ...this.convert({ $ref: `#/components/schemas/${name}` }, mode, true) });
    this.registered.add(mode);
  }

  /** All properties of a schema with its `allOf` bases merged (weclapp composes entities from base schemas). */
  private flatten(s: Schema): { properties: Record<string, Schema>; open: boolean; rest: Schema } | null {
    if (s.$ref) return this.flatten(this.schemas[s.$ref.split('/').pop()!]);
    if (!s.allOf && !s.properties) return null;
    const properties: Record<string, Schema> = {};
    let open = false;
    for (const part of s.allOf ?? [s]) {
      const f = part.$ref || part.allOf ? this.flatten(part) : { properties: part.properties ?? {}, open: false, rest: part };
      if (!f) continue;
      Object.assign(properties, f.properties);
      open ||= f.open;
    }
    return { properties, open, rest: s };
  }

  /** JSON Schema (draft 7) of a description schema under the rules of `mode` (see the module comment). */
  private convert(s: Schema, mode: Mode, expand = false): Json {
    const name = s.$ref?.split('/').pop();
    if (name && !expand) return { $ref: `weclapp-${mode}-${name}` };
    const target = name ? this.schemas[name] : s;
    const flat = target.allOf || target.properties ? this.flatten(target) : null;
    if (!flat) {
      const { readOnly: _r, deprecated: _d, 'x-weclapp': _x, format, ...rest } = target;
      const out: Json = { ...rest };
      if (format !== undefined && typeof format === 'string') out.format = format;
      if (target.items) out.items = this.convert(target.items, mode);
      if (target.type === 'object' && !target.properties) out.type = 'object';
      return out;
    }
    const properties: Record<string, Json> = {};
    const required: string[] = [];
    for (const [key, p] of Object.entries(flat.properties)) {
      const lockField = mode === 'put' && (key === 'id' || key === 'version');
      if (mode !== 'answer' && p.readOnly && !lockField) {
        properties[key] = { not: {}, errorMessage: 'readOnly' };
        continue;
      }
      if (mode !== 'answer' && p.deprecated) {
        properties[key] = { not: {}, errorMessage: 'deprecated' };
        continue;
      }
      const { readOnly: _r, deprecated: _d, 'x-weclapp': _x, ...inner } = p;
      properties[key] = inner.$ref ? this.convert(inner, mode) : this.convert(inner, mode, true);
      if (mode === 'answer' && p['x-weclapp']?.required) required.push(key);
    }
    if (mode === 'post' && name && CREATION_REQUIRED[name]) required.push(...CREATION_REQUIRED[name]);
    return { type: 'object', properties, additionalProperties: false, ...(required.length > 0 ? { required } : {}) };
  }

  private run(v: ValidateFunction, value: unknown): string[] {
    return v(value) ? [] : (v.errors ?? []).map(describe);
  }
}

function describe(e: ErrorObject): string {
  const where = e.instancePath || '/';
  if (e.keyword === 'additionalProperties') return `${where}: unknown property ${String((e.params as { additionalProperty: string }).additionalProperty)}`;
  if (e.keyword === 'not') return `${where}: ${String((e.parentSchema as { errorMessage?: string } | undefined)?.errorMessage ?? 'forbidden')} property`;
  if (e.keyword === 'required') return `${where}: missing ${String((e.params as { missingProperty: string }).missingProperty)}`;
  return `${where}: ${e.message ?? e.keyword}`;
}

let loaded: WeclappContract | undefined;

/** The vendored contract (read and compiled once per process). */
export function loadWeclappContract(): WeclappContract {
  loaded ??= new WeclappContract(JSON.parse(readFileSync(WECLAPP_CONTRACT_FILE, 'utf8')) as Json);
  return loaded;
}
