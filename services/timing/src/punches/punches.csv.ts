/**
 * CSV upload parsing (docs/decisions.md §5): the download's columns, header row required. `card,time,code,type,modem`
 * must be present (any order); `id` and `receptionTimeUtc` are accepted and ignored (the service assigns
 * them); any other column is an error. Rows are checked against the spec's `NewPunch` schema, compiled from the
 * loaded spec (the spec cannot describe CSV content itself), errors keyed `[index].field` like the JSON validator's.
 */
import { parse } from 'csv-parse/sync';
import { addFieldError, compileTextCheck, resolveRef, validationError, type FieldErrors, type OpenApiDocument } from '@sports-timing/shared';
import type { components } from '../generated/openapi';

/** API `NewPunch`. */
export type NewPunch = components['schemas']['NewPunch'];
/** API `PunchType`. */
type PunchType = components['schemas']['PunchType'];

/**
 * Largest card number (spec `NewPunch.card`): SPORTident card numbers are 24-bit values, so no card carries
 * a number above 16,777,215, and result software parses them into 32-bit integers (MeOS `std::stoi`,
 * SIRAPimport `uint.Parse`): a larger number would make those clients fail on every poll from that punch on.
 */
const MAX_CARD_NUMBER = 16_777_215;

/** What is wrong with a card number (text of 1–10 digits, or a JSON number), or undefined when it is valid. */
export function cardNumberProblem(card: string | number): string | undefined {
  const text = String(card);
  if (!/^[0-9]{1,10}$/.test(text)) return 'must be 1 to 10 decimal digits';
  if (Number(text) > MAX_CARD_NUMBER) return `must be at most ${MAX_CARD_NUMBER}: no SPORTident card carries a larger number`;
  return undefined;
}

const REQUIRED = ['card', 'time', 'code', 'type', 'modem'] as const;
const IGNORED = new Set(['id', 'receptionTimeUtc']);
/** Invalid rows listed in a 400 at most; the detail gives the total. */
const MAX_REPORTED_ERRORS = 100;

type Column = (typeof REQUIRED)[number];

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
export type PunchCsvParser = (text: string, maxRows: number) => NewPunch[];

/**
 * The CSV upload parser with each column held to its `NewPunch` property schema in the loaded spec (the
 * document the request validator uses), compiled once when the app is built with the fast lane's
 * `compileTextCheck` (shared fast-lane.ts; a cell is checked as text, as the lane checks a query value), so
 * a change of the spec changes CSV uploads with it. Card numbers are also held to the 24-bit limit
 * ({@link cardNumberProblem}, stated in the spec's prose only). Throws at build time when the spec uses a
 * keyword the check cannot apply.
 */
export function compilePunchCsvParser(spec: OpenApiDocument): PunchCsvParser {
  const properties = (resolveRef(spec, (spec.components as { schemas: Record<string, Record<string, unknown>> }).schemas.NewPunch).properties ?? {}) as Record<string, Record<string, unknown>>;
  const checks = Object.fromEntries(
    REQUIRED.map((col): [Column, FieldCheck] => {
      const schema = properties[col];
      if (schema === undefined) throw new Error(`CSV upload: the spec's NewPunch has no property ${col}`);
      const valid = compileTextCheck(spec, schema, `NewPunch.${col}`);
      // A property the spec takes in several JSON forms (`card`: text or integer) is described by its text form.
      const resolved = resolveRef(spec, schema);
      const rule = schemaRule(Array.isArray(resolved.oneOf) ? resolveRef(spec, (resolved.oneOf as Record<string, unknown>[]).find((s) => resolveRef(spec, s).type === 'string') ?? resolved) : resolved);
      if (col === 'card') return [col, (v) => cardNumberProblem(v) ?? (valid(v) ? undefined : rule)];
      return [col, (v) => (valid(v) ? undefined : rule)];
    }),
  ) as Record<Column, FieldCheck>;
  return (text, maxRows) => parsePunchCsv(checks, text, maxRows);
}

/**
 * Parses an uploaded CSV text into punches. Throws a 400 problem (nothing stored) on a malformed file,
 * a bad header, more than `maxRows` rows, or any invalid field.
 */
function parsePunchCsv(checks: Record<Column, FieldCheck>, text: string, maxRows: number): NewPunch[] {
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
  if (rows.length > maxRows) throw validationError({ $: [`at most ${maxRows} punches per upload`] }, `The batch has ${rows.length} punches; the limit is ${maxRows}.`);

  const at = Object.fromEntries(REQUIRED.map((c) => [c, header.indexOf(c)])) as Record<Column, number>;
  const errors: FieldErrors = {};
  let invalidRows = 0;
  const punches: NewPunch[] = [];
  rows.forEach((row, i) => {
    let rowInvalid = false;
    for (const c of REQUIRED) {
      const problem = checks[c](row[at[c]]);
      if (!problem) continue;
      rowInvalid = true;
      if (invalidRows < MAX_REPORTED_ERRORS) addFieldError(errors, `[${i}].${c}`, problem);
    }
    if (rowInvalid) {
      invalidRows += 1;
      return;
    }
    punches.push({ card: row[at.card], time: Number(row[at.time]), code: Number(row[at.code]), type: row[at.type] as PunchType, modem: row[at.modem] });
  });
  if (invalidRows > 0) {
    const listed = invalidRows > MAX_REPORTED_ERRORS ? `; the first ${MAX_REPORTED_ERRORS} are listed` : '';
    throw validationError(errors, `${invalidRows} of ${rows.length} punches are invalid${listed}; nothing was stored.`);
  }
  return punches;
}
