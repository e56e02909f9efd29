/**
 * weclapp list semantics: filters `<property>-<operator>=<value>` (operators eq, ne, lt, gt, le, ge, like,
 * ilike, in, notin, null, notnull; `in` takes a JSON array), custom attribute filters
 * `customAttribute<definitionId>-<operator>=<value>` (compared with the boolean, selected-value id or string
 * value), `sort=<property>,-<property>` and 1-based `page` with `pageSize` (default 100, at most 1000).
 */
import type { CustomAttributeValue } from './types';

/** Parameters that are not filters. */
const RESERVED = new Set(['page', 'pageSize', 'sort', 'serializeNulls', 'properties', 'additionalProperties', 'ignoreMissingProperties']);

const OPERATORS = ['eq', 'ne', 'lt', 'gt', 'le', 'ge', 'like', 'ilike', 'in', 'notin', 'null', 'notnull'] as const;
type Operator = (typeof OPERATORS)[number];

/** A query that could not be understood (answered with 400). */
export class QueryError extends Error {}

interface Filter {
  /** Property path (`customerNumber`, `deliveryAddress.countryCode`) or `customAttribute<id>`. */
  property: string;
  operator: Operator;
  value: string;
}

/** A parsed list query. */
export interface ListQuery {
  filters: Filter[];
  sort: { property: string; descending: boolean }[];
  page: number;
  pageSize: number;
}

/** Parses the query string of a list or count request. */
export function parseListQuery(params: URLSearchParams): ListQuery {
  const filters: Filter[] = [];
  for (const [key, value] of params) {
    if (RESERVED.has(key)) continue;
    const m = /^([A-Za-z][\w.]*)-([a-z]+)$/.exec(key);
    if (!m || !(OPERATORS as readonly string[]).includes(m[2])) throw new QueryError(`unknown query parameter ${key}`);
    filters.push({ property: m[1], operator: m[2] as Operator, value });
  }
  const int = (name: string, fallback: number, max: number): number => {
    const v = params.get(name);
    if (v === null) return fallback;
    if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > max) throw new QueryError(`${name} must be an integer between 1 and ${max}`);
    return Number(v);
  };
  const sort = (params.get('sort') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => (s.startsWith('-') ? { property: s.slice(1), descending: true } : { property: s, descending: false }));
  return { filters, sort, page: int('page', 1, 1_000_000), pageSize: int('pageSize', 100, 1000) };
}

function valueAt(entity: object, path: string): unknown {
  const custom = /^customAttribute(\w+)$/.exec(path);
  if (custom) {
    const attrs = (entity as { customAttributes?: CustomAttributeValue[] }).customAttributes ?? [];
    const a = attrs.find((x) => x.attributeDefinitionId === custom[1]);
    if (!a) return null;
    return a.booleanValue ?? a.selectedValueId ?? a.stringValue ?? null;
  }
  let v: unknown = entity;
  for (const part of path.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

function compare(a: unknown, b: string): number {
  const an = typeof a === 'number' ? a : typeof a === 'string' && a.trim() !== '' ? Number(a) : NaN;
  const bn = Number(b);
  if (Number.isFinite(an) && Number.isFinite(bn) && b.trim() !== '') return an - bn;
  return String(a).localeCompare(b);
}

function likeToRegExp(pattern: string, flags: string): RegExp {
  const escaped = pattern
    .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    .replace(/%/g, '.*')
    .replace(/_/g, '.');
  return new RegExp(`^${escaped}$`, flags);
}

function parseList(value: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new QueryError(`expected a JSON array, got ${value}`);
  }
  if (!Array.isArray(parsed)) throw new QueryError(`expected a JSON array, got ${value}`);
  return parsed.map(String);
}

function matches(entity: object, f: Filter): boolean {
  const raw = valueAt(entity, f.property);
  const isNull = raw === null || raw === undefined;
  // weclapp filters compare scalars; an object-valued property never equals a filter's text.
  const v = typeof raw === 'object' ? JSON.stringify(raw) : `${raw as string | number | boolean}`;
  switch (f.operator) {
    case 'null':
      return isNull;
    case 'notnull':
      return !isNull;
    case 'eq':
      return !isNull && String(v) === f.value;
    case 'ne':
      return isNull || String(v) !== f.value;
    case 'lt':
      return !isNull && compare(raw, f.value) < 0;
    case 'gt':
      return !isNull && compare(raw, f.value) > 0;
    case 'le':
      return !isNull && compare(raw, f.value) <= 0;
    case 'ge':
      return !isNull && compare(raw, f.value) >= 0;
    case 'like':
      return !isNull && likeToRegExp(f.value, '').test(String(v));
    case 'ilike':
      return !isNull && likeToRegExp(f.value, 'i').test(String(v));
    case 'in':
      return !isNull && parseList(f.value).includes(String(v));
    case 'notin':
      return isNull || !parseList(f.value).includes(String(v));
  }
}

/** Filters and sorts `entities` (default order: numeric id ascending). */
export function applyFilters<T extends { id: string }>(entities: Iterable<T>, q: ListQuery): T[] {
  const rows = [...entities].filter((e) => q.filters.every((f) => matches(e, f)));
  rows.sort((a, b) => {
    for (const s of q.sort) {
      const av = valueAt(a, s.property);
      const bv = valueAt(b, s.property);
      const c = compare(av, String(bv));
      if (c !== 0) return s.descending ? -c : c;
    }
    return Number(a.id) - Number(b.id);
  });
  return rows;
}

/** One page of already filtered rows. */
export function pageOf<T>(rows: T[], q: ListQuery): T[] {
  const start = (q.page - 1) * q.pageSize;
  return rows.slice(start, start + q.pageSize);
}
