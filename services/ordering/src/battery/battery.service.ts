/**
 * Battery lookup of active cards (`getSiCardBattery`, `SiCardBatteryResponse`, `BatteryValidationProblem`;
 * docs/decisions.md §4, §6) and the maintenance import of battery dates.
 *
 * Active cards are SIAC, 8000001–8999999. `replaceBefore` = battery date + 3 calendar years (29 February
 * becomes 28 February, as PostgreSQL's and .NET's year arithmetic do); both dates null when the record
 * exists without a date.
 */
import { parse } from 'csv-parse/sync';
import type { Kysely } from 'kysely';
import { addFieldError, ApiError, validationError, type FieldErrors } from '@sports-timing/shared';
import type { DB } from '../db/schema';
import type { components } from '../generated/openapi';
import { CARD_NUMBER_RANGES } from '../siid/card-types';
import * as repo from './battery.repository';

/** Years after the battery date by which the battery should be replaced. */
const BATTERY_LIFE_YEARS = 3;

const ACTIVE = CARD_NUMBER_RANGES.siac1;

/** Spec `SiCardBatteryResponse`. */
export type SiCardBatteryResponse = components['schemas']['SiCardBatteryResponse'];
/** Spec `BatteryImportResult`. */
export type BatteryImportResult = components['schemas']['BatteryImportResult'];

/** The date `years` calendar years after `date` (`YYYY-MM-DD`), clamping 29 February to 28 February. @internal */
export function addYears(date: string, years: number): string {
  const [y, m, d] = date.split('-').map(Number);
  const year = y + years;
  const lastDay = new Date(Date.UTC(year, m, 0)).getUTCDate();
  return `${String(year).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(Math.min(d, lastDay)).padStart(2, '0')}`;
}

/** Whether `value` is a real calendar date written `YYYY-MM-DD`. @internal */
export function isCalendarDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 1900 || mo < 1 || mo > 12 || d < 1) return false;
  return d <= new Date(Date.UTC(y, mo, 0)).getUTCDate();
}

/** Messages about a card-number text, empty when it is an active card number. */
function cardNumberProblems(raw: string): string[] {
  if (!/^\d{1,10}$/.test(raw)) return [`The value '${raw}' is not valid.`];
  const n = Number(raw);
  if (n < ACTIVE.first || n > ACTIVE.last) return [`The card number must be between ${ACTIVE.first} and ${ACTIVE.last}.`];
  return [];
}

/**
 * The battery answer for a card number as sent in the path. 400 (ASP.NET validation problem with
 * `errors.cardNumber`) for a non-integer or a number outside 8000001–8999999; 404 "SI-Card not found."
 * without a record.
 */
export async function lookupBattery(db: Kysely<DB>, raw: string): Promise<SiCardBatteryResponse> {
  const text = raw.trim();
  const problems = cardNumberProblems(text);
  if (problems.length > 0) throw validationError({ cardNumber: problems });
  const cardNumber = Number(text);
  const record = await repo.findBatteryRecord(db, cardNumber);
  if (!record) throw new ApiError(404, undefined, { title: 'SI-Card not found.' });
  const batteryDate = record.battery_date;
  return {
    cardNumber: String(cardNumber),
    batteryDate,
    replaceBefore: batteryDate === null ? null : addYears(batteryDate, BATTERY_LIFE_YEARS),
  };
}

/** Most field errors reported for one import (the rest are summarized in `detail`). */
const MAX_REPORTED_ERRORS = 50;

/** A validated battery CSV: distinct card numbers and their dates (null = unknown). */
interface BatteryRows {
  cardNumbers: number[];
  batteryDates: (string | null)[];
}

/**
 * Parses and validates a battery CSV (header `cardNumber,batteryDate`). Every row is checked before
 * anything is stored; problems answer 400 with `errors` keyed `rows[<n>].<column>` (n = 1-based data row).
 */
function parseBatteryCsv(text: string): BatteryRows {
  let records: string[][];
  try {
    records = parse(text, { bom: true, trim: true, skip_empty_lines: true, relax_column_count: true }) as string[][];
  } catch (err) {
    throw validationError({ $: [`The CSV cannot be parsed: ${err instanceof Error ? err.message : 'syntax error'}`] });
  }
  const [header, ...rows] = records;
  if (!header || header.length !== 2 || header[0] !== 'cardNumber' || header[1] !== 'batteryDate') {
    throw validationError({ $: ['The first row must be the header "cardNumber,batteryDate".'] });
  }
  const errors: FieldErrors = {};
  let errorCount = 0;
  const report = (field: string, message: string) => {
    errorCount++;
    if (Object.keys(errors).length < MAX_REPORTED_ERRORS) addFieldError(errors, field, message);
  };
  const seen = new Map<number, number>();
  const result: BatteryRows = { cardNumbers: [], batteryDates: [] };
  rows.forEach((cols, i) => {
    const row = i + 1;
    if (cols.length !== 2) {
      report(`rows[${row}]`, `Expected 2 columns, found ${cols.length}.`);
      return;
    }
    const [cardText, dateText] = cols;
    const cardProblems = cardNumberProblems(cardText);
    cardProblems.forEach((p) => report(`rows[${row}].cardNumber`, p));
    if (dateText !== '' && !isCalendarDate(dateText)) report(`rows[${row}].batteryDate`, `'${dateText}' is not a date (YYYY-MM-DD).`);
    if (cardProblems.length > 0) return;
    const cardNumber = Number(cardText);
    const first = seen.get(cardNumber);
    if (first !== undefined) {
      report(`rows[${row}].cardNumber`, `Card ${cardNumber} already appears in row ${first}.`);
      return;
    }
    seen.set(cardNumber, row);
    result.cardNumbers.push(cardNumber);
    result.batteryDates.push(dateText === '' ? null : dateText);
  });
  if (errorCount > 0) throw validationError(errors, `${errorCount} problem(s) in the CSV; nothing was imported.`);
  return result;
}

/**
 * Maintenance import of battery dates (spec `importBatteryDates`): validates the whole CSV, then upserts
 * all rows in one statement (atomic). Records of cards not in the file are kept.
 */
export async function importBatteryDates(db: Kysely<DB>, csvText: string): Promise<BatteryImportResult> {
  const rows = parseBatteryCsv(csvText);
  const { inserted, updated } = await repo.upsertBatteryRecords(db, rows.cardNumbers, rows.batteryDates);
  const total = rows.cardNumbers.length;
  return { rows: total, inserted, updated, unchanged: total - inserted - updated };
}
