/**
 * fast-check arbitraries from OpenAPI 3.0 schemas (the subset our hand-written specs use: local `$ref`,
 * `allOf`/`oneOf`/`anyOf`, `nullable`, `enum`, string formats and `pattern`, numeric and length limits),
 * so the fuzz run generates requests the spec calls valid and, by mutation, ones it calls invalid.
 */
import fc from 'fast-check';

/** A parsed OpenAPI document. */
export type Spec = { paths: Record<string, Record<string, unknown>>; components?: Record<string, Record<string, unknown>> } & Record<string, unknown>;
/** An OpenAPI schema object (loosely typed: the specs are plain YAML). */
export type Schema = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Follows a local `$ref` (`#/components/...`) until a non-reference object is reached. */
export function deref<T = Schema>(spec: Spec, node: unknown): T {
  let cur = node as Schema;
  for (let i = 0; cur && typeof cur.$ref === 'string' && i < 20; i++) {
    const parts = cur.$ref
      .replace(/^#\//, '')
      .split('/')
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    cur = parts.reduce<Schema>((o, k) => o?.[k], spec as Schema);
  }
  return cur as T;
}

const ISO_DATE = fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2035-12-31T00:00:00Z'), noInvalidDate: true });

function stringArb(s: Schema): fc.Arbitrary<string> {
  const min = s.minLength ?? 0;
  const max = s.maxLength ?? Math.max(min, 40);
  const fit = (a: fc.Arbitrary<string>) => a.filter((v) => v.length >= min && v.length <= max);
  switch (s.format) {
    case 'date-time':
      return ISO_DATE.map((d) => d.toISOString());
    case 'date':
      return ISO_DATE.map((d) => d.toISOString().slice(0, 10));
    case 'email':
      return fit(fc.emailAddress());
    case 'uuid':
      return fc.uuid();
    case 'uri':
    case 'url':
      return fit(fc.webUrl());
    case 'ipv4':
      return fc.ipV4();
    default:
      break;
  }
  if (typeof s.pattern === 'string') {
    try {
      return fit(fc.stringMatching(new RegExp(s.pattern)));
    } catch {
      // A pattern JavaScript cannot compile is the spec's problem; fall back to plain strings.
    }
  }
  return fc
    .string({ minLength: min, maxLength: Math.min(max, min + 40), unit: 'grapheme-ascii' })
    .filter((v) => v.trim().length >= Math.min(min, 1) || min === 0);
}

function numberArb(s: Schema, integer: boolean): fc.Arbitrary<number> {
  const lo = s.minimum ?? (integer ? -1000 : -1e6);
  const hi = s.maximum ?? (integer ? 100_000 : 1e6);
  const min = s.exclusiveMinimum === true ? lo + (integer ? 1 : 1e-6) : lo;
  const max = s.exclusiveMaximum === true ? hi - (integer ? 1 : 1e-6) : hi;
  if (integer) return fc.integer({ min: Math.ceil(min), max: Math.floor(max) });
  const arb = fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
  return s.multipleOf ? arb.map((v) => Math.round(v / s.multipleOf) * s.multipleOf) : arb;
}

/**
 * An arbitrary of values valid for `schema` (best effort: cross-field rules the schema cannot express are
 * the handlers' business and show up as documented 4xx). `depth` bounds recursive schemas.
 */
export function valueArb(spec: Spec, schema: unknown, depth = 0): fc.Arbitrary<unknown> {
  const s = deref(spec, schema) ?? {};
  const base = ((): fc.Arbitrary<unknown> => {
    if (s.enum) return fc.constantFrom(...(s.enum as unknown[]));
    if (s.allOf) {
      const merged: Schema = { type: 'object', properties: {}, required: [] };
      for (const part of s.allOf as unknown[]) {
        const p = deref(spec, part);
        Object.assign(merged.properties, p.properties ?? {});
        merged.required.push(...(p.required ?? []));
        if (p.type) merged.type = p.type;
        if (p.enum) merged.enum = p.enum;
      }
      return valueArb(spec, merged, depth);
    }
    if (s.oneOf || s.anyOf) return fc.oneof(...(s.oneOf ?? s.anyOf).map((x: unknown) => valueArb(spec, x, depth + 1)));
    const type = s.type ?? (s.properties ? 'object' : undefined);
    switch (type) {
      case 'string':
        return stringArb(s);
      case 'integer':
        return numberArb(s, true);
      case 'number':
        return numberArb(s, false);
      case 'boolean':
        return fc.boolean();
      case 'array': {
        const minLength = s.minItems ?? 0;
        const maxLength = depth > 2 ? minLength : Math.min(s.maxItems ?? 3, minLength + 3);
        const items = valueArb(spec, s.items ?? {}, depth + 1);
        return s.uniqueItems ? fc.uniqueArray(items, { minLength, maxLength, selector: (v) => JSON.stringify(v) }) : fc.array(items, { minLength, maxLength });
      }
      case 'object': {
        const props = (s.properties ?? {}) as Record<string, unknown>;
        const required = new Set<string>(s.required ?? []);
        const keys = Object.keys(props).filter((k) => !deref(spec, props[k])?.readOnly && (required.has(k) || depth < 3));
        const model: Record<string, fc.Arbitrary<unknown>> = {};
        for (const k of keys) model[k] = valueArb(spec, props[k], depth + 1);
        if (keys.length === 0 && s.additionalProperties && typeof s.additionalProperties === 'object') {
          return fc.dictionary(fc.stringMatching(/^[a-z]{1,8}$/), valueArb(spec, s.additionalProperties, depth + 1), { maxKeys: 3 });
        }
        return fc.record(model, { requiredKeys: keys.filter((k) => required.has(k)) });
      }
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  })();
  return s.nullable ? fc.option(base, { nil: null, freq: 5 }) : base;
}

/**
 * An arbitrary of values certainly invalid for an object or array schema: another JSON type, an object
 * missing a required property, or one with a required property of a wrong type. Returns undefined when no
 * certain mutation exists (e.g. a schema without type).
 */
export function invalidBodyArb(spec: Spec, schema: unknown): fc.Arbitrary<unknown> | undefined {
  const s = deref(spec, schema) ?? {};
  const type = s.type ?? (s.properties ? 'object' : undefined);
  if (type === 'object' && !s.oneOf && !s.anyOf) {
    const wrongType = fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.array(fc.integer(), { maxLength: 2 }));
    const required: string[] = s.required ?? [];
    if (required.length === 0) return wrongType;
    const valid = valueArb(spec, s) as fc.Arbitrary<Record<string, unknown>>;
    const missing = fc.tuple(valid, fc.constantFrom(...required)).map(([v, k]) => {
      const copy = { ...v };
      delete copy[k];
      return copy;
    });
    const mistyped = fc.tuple(valid, fc.constantFrom(...required)).map(([v, k]) => {
      const propType = deref(spec, s.properties?.[k])?.type;
      return { ...v, [k]: propType === 'object' || propType === 'array' ? 12345 : propType === 'string' ? { not: 'a string' } : 'not-a-number' };
    });
    return fc.oneof(wrongType, missing, mistyped);
  }
  if (type === 'array') return fc.oneof(fc.integer(), fc.string(), fc.constant({ not: 'an array' }));
  return undefined;
}
