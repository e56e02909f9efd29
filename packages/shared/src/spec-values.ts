/**
 * Values the code takes from a loaded OpenAPI document instead of writing them a second time: an operation
 * found by its `operationId`, and a number or default a schema states (`maxItems`, `minLength`, `default`, or
 * an `x-` keyword for a rule JSON Schema cannot express). Each throws when the spec does not state the value,
 * so a spec that drops it stops the service at start-up rather than leaving the code to guess
 * (docs/architecture.md, "The spec is the single source").
 */
import { resolveRef, type OpenApiDocument } from './openapi';

/** A schema object of the spec (plain object, `$ref`s resolved by the caller where needed). */
type SchemaObject = Record<string, unknown>;

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** The path and method of the operation named `operationId`. Throws when the spec has none. */
export function findOperation(spec: OpenApiDocument, operationId: string): { path: string; method: string; operation: SchemaObject } {
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const method of METHODS) {
      const operation = item?.[method] as SchemaObject | undefined;
      if (operation?.operationId === operationId) return { path, method, operation };
    }
  }
  throw new Error(`the spec has no operation ${operationId}`);
}

/** The schema (refs resolved) of parameter `name` of `operationId`, path-level parameters included. Throws when absent. */
export function parameterSchemaOf(spec: OpenApiDocument, operationId: string, name: string): SchemaObject {
  const { path, operation } = findOperation(spec, operationId);
  const all = [...((spec.paths[path].parameters as SchemaObject[] | undefined) ?? []), ...((operation.parameters as SchemaObject[] | undefined) ?? [])];
  const param = all.map((p) => resolveRef(spec, p)).find((p) => p.name === name);
  if (!param?.schema) throw new Error(`the spec's ${operationId} has no parameter ${name}`);
  return resolveRef(spec, param.schema as SchemaObject);
}

/** The `mediaType` schema (refs resolved) of `operationId`'s request body. Throws when absent. */
export function requestBodySchemaOf(spec: OpenApiDocument, operationId: string, mediaType = 'application/json'): SchemaObject {
  const { operation } = findOperation(spec, operationId);
  const body = operation.requestBody ? resolveRef(spec, operation.requestBody as SchemaObject) : undefined;
  const schema = (body?.content as Record<string, { schema?: SchemaObject }> | undefined)?.[mediaType]?.schema;
  if (!schema) throw new Error(`the spec's ${operationId} has no ${mediaType} request body`);
  return resolveRef(spec, schema);
}

/** The `mediaType` schema (refs resolved) of `operationId`'s `status` response. Throws when absent. */
export function responseSchemaOf(spec: OpenApiDocument, operationId: string, status = '200', mediaType = 'application/json'): SchemaObject {
  const { operation } = findOperation(spec, operationId);
  const response = (operation.responses as Record<string, SchemaObject> | undefined)?.[status];
  const content = response ? (resolveRef(spec, response).content as Record<string, { schema?: SchemaObject }> | undefined) : undefined;
  const schema = content?.[mediaType]?.schema;
  if (!schema) throw new Error(`the spec's ${operationId} has no ${status} ${mediaType} response`);
  return resolveRef(spec, schema);
}

/** The schema (refs resolved) of `components.schemas[name]`. Throws when absent. */
export function componentSchemaOf(spec: OpenApiDocument, name: string): SchemaObject {
  const schema = (spec.components as { schemas?: Record<string, SchemaObject> } | undefined)?.schemas?.[name];
  if (!schema) throw new Error(`the spec has no schema ${name}`);
  return resolveRef(spec, schema);
}

/** The number `schema` states under `keyword` (e.g. `maxItems`, `default`); `where` names it in the error thrown when it is absent. */
export function specNumber(schema: SchemaObject, keyword: string, where: string): number {
  const value = schema[keyword];
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new Error(`the spec states no number ${keyword} for ${where}`);
  return value;
}

/** The value `schema` states under `keyword` (e.g. a string or boolean `default`); throws when absent. */
export function specValue<T>(schema: SchemaObject, keyword: string, where: string): T {
  if (!(keyword in schema)) throw new Error(`the spec states no ${keyword} for ${where}`);
  return schema[keyword] as T;
}

/**
 * The values of a spec enum as a runtime list, in the record's order, from a record holding `true` for each
 * value and typed by the enum's generated type (`enumValues<Role>({ admin: true, … })`): a value the spec adds
 * or drops is a type error at the record, so the list cannot drift from the spec (docs/architecture.md, "The
 * spec is the single source").
 */
export function enumValues<T extends string>(members: Record<T, true>): T[] {
  return Object.keys(members) as T[];
}

/**
 * The `default`s an object schema states for its properties, by property name (properties without one are
 * absent): what the request validator fills into a body that is present, for a handler whose body is optional
 * and absent.
 */
export function specDefaults(schema: SchemaObject): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, SchemaObject>;
  return Object.fromEntries(Object.entries(properties).flatMap(([name, p]) => ('default' in p ? [[name, p.default]] : [])));
}

/**
 * `value` of a parameter or body property whose `default` the spec states: the request validator has filled the
 * default in (ajv `useDefaults`), so the handler takes it as validated instead of writing the default a second
 * time. Throws (500) when it is missing, which only a request that bypassed the validator can cause; `name`
 * names it in the error.
 */
export function specFilled<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw new Error(`${name}: the request validator should have filled in the spec's default`);
  return value;
}
