/**
 * The check of uploaded punches, one by one (spec `postPunches`, docs/decisions.md §5): each JSON element and
 * each CSV row is held to the spec's `NewPunch` schema, compiled from the loaded spec; a valid punch is kept,
 * an invalid one becomes a `RejectedPunch` (its zero-based index in the batch and the reason, field by field),
 * so one bad punch never costs the batch its good ones.
 *
 * CSV: the download's columns, header row required. The fields a client sends (the punch row's `client`
 * fields, db/punch-row.ts: `card,time,code,type,modem`) must be present (any order); the ones the service
 * assigns (`id`, `receptionTimeUtc`) are accepted and ignored; any other column, a malformed file or too many
 * rows refuse the whole batch with 400 (the spec cannot describe CSV content itself).
 */
import { parse } from 'csv-parse/sync';
import { compileJsonCheck, compileTextCheck, resolveRef, validationError, type OpenApiDocument } from '@sports-timing/shared';
import { CLIENT_FIELDS, PUNCH_ROW, SERVICE_FIELDS, type ClientField } from '../db/punch-row';
import type { components } from '../generated/openapi';
import { maxCardNumber } from './punch-spec';

/** API `NewPunch`. */
export type NewPunch = components['schemas']['NewPunch'];
/** API `RejectedPunch`: a punch left out of an upload, its zero-based index in the batch and why. */
export type RejectedPunch = components['schemas']['RejectedPunch'];

/** An upload batch after the per-punch check: the valid punches (in batch order) and the rejected ones. */
export interface CheckedBatch {
  punches: NewPunch[];
  rejected: RejectedPunch[];
}

/**
 * What is wrong with a card number (text of 1–10 digits, or a JSON number), or undefined when it is valid;
 * `max` is the app's spec's `NewPunch.card` `x-value-maximum` (punch-spec.ts {@link maxCardNumber}).
 */
export function cardNumberProblem(card: string | number, max: number): string | undefined {
  const text = String(card);
  if (!/^[0-9]{1,10}$/.test(text)) return 'must be 1 to 10 decimal digits';
  if (Number(text) > max) return `must be at most ${max}: no SPORTident card carries a larger number`;
  return undefined;
}

/** Columns every upload row has: the fields a client sends, in the punch row's order. */
const REQUIRED: readonly ClientField[] = CLIENT_FIELDS;
/** Columns of a download that an upload may carry and that are ignored: the fields the service assigns. */
const IGNORED: ReadonlySet<string> = new Set(SERVICE_FIELDS);

type Column = ClientField;

/** What is wrong with a field's text, or undefined when it is valid. */
type FieldCheck = (value: string) => string | undefined;

/** The message for a value its schema refuses, in the schema's own terms (bounds, values, pattern). */
function schemaRule(schema: Record<string, unknown>): string {
  if (schema.type === 'integer') return `must be an integer from ${String(schema.minimum)} to ${String(schema.maximum)}`;
  if (Array.isArray(schema.enum)) return `must be one of ${schema.enum.join(', ')}`;
  if (typeof schema.pattern === 'string') return `must match ${schema.pattern}`;
  return `must be a valid ${String(schema.type)}`;
}

/** A CSV upload parser (see {@link compilePunchCsvParser}): the text and the most rows allowed. */
export type PunchCsvParser = (text: string, maxRows: number) => CheckedBatch;

/** The properties of the spec's `NewPunch`. */
function newPunchProperties(spec: OpenApiDocument): Record<string, Record<string, unknown>> {
  const schemas = (spec.components as { schemas: Record<string, Record<string, unknown>> }).schemas;
  return (resolveRef(spec, schemas.NewPunch).properties ?? {}) as Record<string, Record<string, unknown>>;
}

function propertySchema(properties: Record<string, Record<string, unknown>>, col: Column): Record<string, unknown> {
  const schema = properties[col];
  if (schema === undefined) throw new Error(`punch upload: the spec's NewPunch has no property ${col}`);
  return schema;
}

/**
 * The CSV upload parser with each column held to its `NewPunch` property schema in the loaded spec (the
 * document the request validator uses), compiled once when the app is built with the fast lane's
 * `compileTextCheck` (shared fast-lane.ts; a cell is checked as text, as the lane checks a query value), so
 * a change of the spec changes CSV uploads with it. Card numbers are also held to the 24-bit limit
 * ({@link cardNumberProblem}, the spec's `NewPunch.card` `x-value-maximum`). Throws at build time when the spec uses a
 * keyword the check cannot apply.
 */
export function compilePunchCsvParser(spec: OpenApiDocument): PunchCsvParser {
  const properties = newPunchProperties(spec);
  const maxCard = maxCardNumber(spec);
  const checks = Object.fromEntries(
    REQUIRED.map((col): [Column, FieldCheck] => {
      const schema = propertySchema(properties, col);
      const valid = compileTextCheck(spec, schema, `NewPunch.${col}`);
      // A property the spec takes in several JSON forms (`card`: text or integer) is described by its text form.
      const resolved = resolveRef(spec, schema);
      const rule = schemaRule(
        Array.isArray(resolved.oneOf)
          ? resolveRef(spec, (resolved.oneOf as Record<string, unknown>[]).find((s) => resolveRef(spec, s).type === 'string') ?? resolved)
          : resolved,
      );
      if (col === 'card') return [col, (v) => cardNumberProblem(v, maxCard) ?? (valid(v) ? undefined : rule)];
      return [col, (v) => (valid(v) ? undefined : rule)];
    }),
  ) as Record<Column, FieldCheck>;
  return (text, maxRows) => parsePunchCsv(checks, text, maxRows);
}

/**
 * The check of a JSON upload's elements, each against the spec's `NewPunch` (compiled once from the loaded
 * spec with the fast lane's `compileJsonCheck`, so the lane and this check agree): a closed object with every
 * property valid as it is, no type coerced. A card may also be a JSON integer, as the spec's prose allows, read
 * as its decimal text; card numbers are held to the 24-bit limit ({@link cardNumberProblem}). Reasons name the
 * fields, never echo the values. Throws at build time when the spec uses a keyword the check cannot apply.
 */
export function compileJsonPunchCheck(spec: OpenApiDocument): (elements: readonly unknown[]) => CheckedBatch {
  const properties = newPunchProperties(spec);
  const maxCard = maxCardNumber(spec);
  const fields = REQUIRED.map((col) => {
    const schema = propertySchema(properties, col);
    const valid = compileJsonCheck(spec, schema, `NewPunch.${col}`);
    const rule = schemaRule(resolveRef(spec, schema));
    const problem =
      col === 'card'
        ? (v: unknown) =>
            typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0)
              ? (cardNumberProblem(v, maxCard) ?? (valid(String(v)) ? undefined : rule))
              : 'must be a string of decimal digits (or a JSON integer)'
        : (v: unknown) => (valid(v) ? undefined : rule);
    return { col, problem };
  });
  const known = new Set<string>(REQUIRED);
  const check = (element: unknown): { punch: NewPunch } | { reason: string } => {
    if (typeof element !== 'object' || element === null || Array.isArray(element)) return { reason: `must be an object with ${REQUIRED.join(', ')}` };
    const o = element as Record<string, unknown>;
    const problems: string[] = [];
    for (const { col, problem } of fields) {
      if (!Object.hasOwn(o, col)) problems.push(`${col}: is required`);
      else {
        const p = problem(o[col]);
        if (p !== undefined) problems.push(`${col}: ${p}`);
      }
    }
    if (Object.keys(o).some((k) => !known.has(k))) problems.push(`unknown properties: a punch has only ${REQUIRED.join(', ')}`);
    if (problems.length > 0) return { reason: problems.join('; ') };
    // Only known properties, each valid as it is: the element is the punch, its card as text.
    return { punch: { ...o, card: String(o.card) } as NewPunch };
  };
  return (elements) => {
    const batch: CheckedBatch = { punches: [], rejected: [] };
    elements.forEach((element, index) => {
      const r = check(element);
      if ('punch' in r) batch.punches.push(r.punch);
      else batch.rejected.push({ index, reason: r.reason });
    });
    return batch;
  };
}

/**
 * Parses an uploaded CSV text into punches, rows with an invalid field rejected one by one. Throws a 400
 * problem (nothing stored) on a malformed file, a bad header or more than `maxRows` rows.
 */
function parsePunchCsv(checks: Record<Column, FieldCheck>, text: string, maxRows: number): CheckedBatch {
  let records: string[][];
  try {
    records = parse(text, { bom: true, trim: true, skip_empty_lines: true, relax_column_count: false }) as string[][];
  } catch (err) {
    throw validationError({ $: [err instanceof Error ? err.message : 'malformed CSV'] }, 'The CSV body cannot be parsed.');
  }
  if (records.length === 0) throw validationError({ header: ['a header row is required'] }, 'The CSV body is empty.');
  const [header, ...rows] = records;
  const headerErrors: string[] = [];
  for (const c of REQUIRED) if (!header.includes(c)) headerErrors.push(`column ${c} is required`);
  for (const c of header) if (!(REQUIRED as readonly string[]).includes(c) && !IGNORED.has(c)) headerErrors.push(`unknown column ${c}`);
  if (new Set(header).size !== header.length) headerErrors.push('duplicate column names');
  if (headerErrors.length > 0) throw validationError({ header: headerErrors }, 'The CSV header is invalid.');
  if (rows.length > maxRows)
    throw validationError({ $: [`at most ${maxRows} punches per upload`] }, `The batch has ${rows.length} punches; the limit is ${maxRows}.`);

  const at = Object.fromEntries(REQUIRED.map((c) => [c, header.indexOf(c)])) as Record<Column, number>;
  const batch: CheckedBatch = { punches: [], rejected: [] };
  rows.forEach((row, index) => {
    const problems: string[] = [];
    for (const c of REQUIRED) {
      const problem = checks[c](row[at[c]]);
      if (problem) problems.push(`${c}: ${problem}`);
    }
    if (problems.length > 0) batch.rejected.push({ index, reason: problems.join('; ') });
    else {
      const punch: Record<string, string | number> = {};
      for (const c of REQUIRED) punch[c] = PUNCH_ROW[c].kind === 'text' ? row[at[c]] : Number(row[at[c]]);
      batch.punches.push(punch as NewPunch);
    }
  });
  return batch;
}
