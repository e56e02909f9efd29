/**
 * CSV upload parsing (docs/decisions.md §5): the download's columns, header row required. `card,time,code,type,modem`
 * must be present (any order); `id` and `receptionTimeUtc` are accepted and ignored (the service assigns
 * them); any other column is an error. Rows are checked with the same rules as the JSON `NewPunch` schema
 * (the spec cannot describe CSV content), errors keyed `[index].field` like the JSON validator's.
 */
import { parse } from 'csv-parse/sync';
import { addFieldError, validationError, type FieldErrors } from '@sports-timing/shared';
import type { components } from '../generated/openapi';

/** API `NewPunch`. */
export type NewPunch = components['schemas']['NewPunch'];
/** API `PunchType`. */
type PunchType = components['schemas']['PunchType'];

/** Values of `PunchType` in this version of the API. */
const PUNCH_TYPES: readonly PunchType[] = ['Unknown', 'Control', 'Start', 'Finish', 'Check', 'Clear'];

/** Most time value accepted: 9999-12-31T23:59:59.999 as local ms (matches the spec's maximum). */
const MAX_TIME = 253402300799999;

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

/** Same pattern as the spec's `ModemSerial`. */
const MODEM_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;

const REQUIRED = ['card', 'time', 'code', 'type', 'modem'] as const;
const IGNORED = new Set(['id', 'receptionTimeUtc']);
/** Invalid rows listed in a 400 at most; the detail gives the total. */
const MAX_REPORTED_ERRORS = 100;

type Column = (typeof REQUIRED)[number];

function checkField(col: Column, v: string): string | undefined {
  switch (col) {
    case 'card':
      return cardNumberProblem(v);
    case 'time':
      return /^[0-9]{1,15}$/.test(v) && Number(v) <= MAX_TIME ? undefined : `must be an integer from 0 to ${MAX_TIME}`;
    case 'code':
      return /^[0-9]{1,5}$/.test(v) && Number(v) <= 65535 ? undefined : 'must be an integer from 0 to 65535';
    case 'type':
      return (PUNCH_TYPES as readonly string[]).includes(v) ? undefined : `must be one of ${PUNCH_TYPES.join(', ')}`;
    case 'modem':
      return MODEM_PATTERN.test(v) ? undefined : 'must match ^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$';
  }
}

/**
 * Parses an uploaded CSV text into punches. Throws a 400 problem (nothing stored) on a malformed file,
 * a bad header, more than `maxRows` rows, or any invalid field.
 */
export function parsePunchCsv(text: string, maxRows: number): NewPunch[] {
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
      const problem = checkField(c, row[at[c]]);
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
