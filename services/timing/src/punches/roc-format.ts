/**
 * The ROC protocol's text and form shapes (docs/roc.md; spec operations `getRocPunches`,
 * `getRocPunchesWithKey`, `postRocPunches`), as pure conversions:
 *
 * - read: a page in the service's CSV (`id,card,time,code,type,modem,receptionTimeUtc`, built by PostgreSQL;
 *   no field can hold a comma, see simple-format.ts) → ROC lines `punchId;controlCode;cardNumber;YYYY-MM-DD
 *   HH:MM:SS` ending in CRLF, the time in the punch's local wall clock (the API keeps local time as
 *   milliseconds "as if UTC", so the UTC fields of that instant are the wall-clock fields);
 * - the `date`/`time` lower bound of a read → local wall-clock milliseconds;
 * - a radio unit's form fields (index 1) → a punch upload.
 */
import { validationError } from '@sports-timing/shared';
import type { components } from '../generated/openapi';
import type { PunchUpload } from './punches.service';

/** Line end of the ROC text format. */
const CRLF = '\r\n';

/** `YYYY-MM-DD HH:MM:SS` of local wall-clock milliseconds (whole seconds; the ROC format has none finer). */
function rocTimestamp(localMs: number): string {
  const iso = new Date(localMs).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

/**
 * ROC lines of a page in the service's CSV (header row first, lines ending in `\n`): the text (empty for no
 * punch), the number of punches and the last (highest) id, 0 when there is none.
 */
export function rocPunchLines(csvPage: string): { text: string; count: number; lastId: number } {
  const rows = csvPage.split('\n').slice(1);
  let text = '';
  let count = 0;
  let lastId = 0;
  for (const row of rows) {
    if (row.length === 0) continue;
    const [id, card, time, code] = row.split(',');
    text += `${id};${code};${card};${rocTimestamp(Number(time))}${CRLF}`;
    count++;
    lastId = Number(id);
  }
  return { text, count, lastId };
}

/**
 * Local wall-clock ms of `YYYY-MM-DD` at `HH:MM:SS` (or `H:MM:SS`, `HH:MM`), or undefined when the text is not
 * a calendar date (2020-02-30) or lies before 1970 (punch times are not negative). Inputs already match the
 * spec's patterns.
 */
function localMsOf(date: string, time: string, ms = 0): number | undefined {
  const [y, mo, d] = date.split('-').map(Number);
  const [h, mi, s = 0] = time.split(':').map(Number);
  const at = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0–99 to 1900–1999.
  at.setUTCFullYear(y, mo - 1, d);
  at.setUTCHours(h, mi, s, ms);
  const value = at.getTime();
  if (at.getUTCFullYear() !== y || at.getUTCMonth() !== mo - 1 || at.getUTCDate() !== d || value < 0) return undefined;
  return value;
}

/**
 * The inclusive lower bound on the punch time of a ROC read, in local wall-clock ms: MeOS sends the
 * competition's date and zero time, meaning "punches from the zero time on" in the event's own clock, which is
 * the clock punch times are kept in. `date` alone is its midnight; `time` alone is a 400 (no day to put it on).
 */
export function rocLowerBound(date: string | undefined, time: string | undefined): number | undefined {
  if (date === undefined) {
    if (time !== undefined) throw validationError({ date: ['required with time'] }, 'time needs a date.');
    return undefined;
  }
  const at = localMsOf(date, time ?? '00:00:00');
  if (at === undefined) throw validationError({ date: ['must be a calendar date from 1970-01-01 on'] });
  return at;
}

/** Form fields of one ROC punch after spec validation (spec `RocPunchForm`). */
type RocPunchForm = components['schemas']['RocPunchForm'];

/** SPORTident station mode (the low nibble yaroc sends as `stationmode1`) → `PunchType`. */
const STATION_MODES: Record<string, PunchUpload['type']> = {
  '2': 'Control',
  '3': 'Start',
  '4': 'Finish',
  '7': 'Clear',
  '10': 'Check',
};

/** Indexed punch fields (`control2`, `sinumber12`, …): a second punch in one post, which is refused, not dropped. */
const INDEXED_FIELD = /^(control|sinumber|stationmode|date|sitime|ms|roctime)([0-9]+)$/;

/**
 * The punch of a radio unit's post: `modem` = `macaddr` as sent, `code` = `control1`, `card` = `sinumber1`,
 * `time` = `date1` + `sitime1` + `ms1` (local wall-clock ms, milliseconds kept), `type` from `stationmode1`.
 * 400 (`validationError`, keyed by field) for punch fields with another index than 1, a code above 65535 or a
 * date that is not a calendar date from 1970 on. The card's range is checked by the upload (`uploadRocPunch`).
 */
export function punchOfRocForm(form: RocPunchForm): PunchUpload {
  const errors: Record<string, string[]> = {};
  for (const field of Object.keys(form)) {
    const m = INDEXED_FIELD.exec(field);
    if (m && m[2] !== '1') errors[field] = ['one punch per post: only fields with the index 1 are read'];
  }
  const code = Number(form.control1);
  if (code > 65_535) errors.control1 = ['must be at most 65535'];
  const time = localMsOf(form.date1, form.sitime1, Number(form.ms1 ?? 0));
  if (time === undefined) errors.date1 = ['must be a calendar date from 1970-01-01 on'];
  if (Object.keys(errors).length > 0 || time === undefined) throw validationError(errors, 'The punch was not stored.');
  return {
    modem: form.macaddr,
    card: form.sinumber1,
    code,
    time,
    type: STATION_MODES[String(Number(form.stationmode1 ?? ''))] ?? 'Unknown',
  };
}
