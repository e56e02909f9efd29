/**
 * Conversion of the real VeNotte 2020 punch file (`demo/venotte2020-punches.csv`, columns
 * `card,code,time,type`, local wall-clock ISO times without offset) into punches as a radio set-up would
 * have delivered them (see demo/README.md):
 *
 * - `time`: the local wall-clock time as milliseconds "as if UTC" (`Date.UTC` of its components, no
 *   time-zone shift), which is what the API's local-time fields mean.
 * - modems: one per radio control, with a numeric serial as real LTE modems have (MeOS's modem mode only
 *   takes positive integer unit ids): `2020000 + code`, so control 54 comes from modem `2020054`. Start rows
 *   (no code in the file) get code 1 and come from modem `2020001`, Finish rows code 2 from `2020002` (no
 *   control of the event uses codes 1 or 2).
 * - `receptionTimeUtc`: the real UTC instant (local CET = UTC+1 on 2020-02-01) plus a radio delay of
 *   2–6 s, derived from the row so that every conversion gives the same values.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import type { PunchUpload } from '../punches/punches.service';

/** The shipped file. */
export const VENOTTE_FILE = path.join(__dirname, '../../demo/venotte2020-punches.csv');

/** Serial number of the demo modem at the control with `code`: `2020000 + code` (a positive integer, see above). */
function venotteModemSerial(code: number): string {
  return String(2_020_000 + code);
}
/** Code given to Start punches (modem 2020001). */
const VENOTTE_START_CODE = 1;
/** Code given to Finish punches (modem 2020002). */
const VENOTTE_FINISH_CODE = 2;

/** CET offset on the event day: local = UTC + 1 h. */
const CET_OFFSET_MS = 60 * 60 * 1000;

/** Event window: the event day 2020-02-01 in local wall-clock ms (inclusive bounds). */
export const VENOTTE_WINDOW = { from: Date.UTC(2020, 1, 1), to: Date.UTC(2020, 1, 2) - 1 } as const;

/** `2020-02-01T19:16:03` (local, no offset) → local wall-clock ms written as if UTC. @internal */
export function localIsoToMs(iso: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?$/.exec(iso);
  if (!m) throw new Error(`not a local ISO date-time: ${iso}`);
  const [, y, mo, d, h, mi, s, frac] = m;
  return Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), frac ? Number(frac.padEnd(3, '0')) : 0);
}

/** Deterministic 2000–6000 ms delay from a row's text (FNV-1a). */
function radioDelayMs(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return 2000 + (h % 4001);
}

/** One row of the file as a punch (with its historical reception time). @internal */
export function venotteRowToPunch(row: { card: string; code: string; time: string; type: string }): PunchUpload {
  const time = localIsoToMs(row.time);
  let modem: string;
  let code: number;
  let type: PunchUpload['type'];
  if (row.type === 'Start') {
    [modem, code, type] = [venotteModemSerial(VENOTTE_START_CODE), VENOTTE_START_CODE, 'Start'];
  } else if (row.type === 'Finish') {
    [modem, code, type] = [venotteModemSerial(VENOTTE_FINISH_CODE), VENOTTE_FINISH_CODE, 'Finish'];
  } else if (row.type === 'Control' && /^\d+$/.test(row.code)) {
    [modem, code, type] = [venotteModemSerial(Number(row.code)), Number(row.code), 'Control'];
  } else {
    throw new Error(`unexpected VeNotte row: ${JSON.stringify(row)}`);
  }
  const receptionTimeUtc = time - CET_OFFSET_MS + radioDelayMs(`${row.card},${row.code},${row.time},${row.type}`);
  return { card: row.card, time, code, type, modem, receptionTimeUtc };
}

/** All punches of the file, in time order (file order among equal times). */
export function readVenottePunches(file = VENOTTE_FILE): PunchUpload[] {
  const rows = parse(readFileSync(file, 'utf8'), { columns: true, bom: true, trim: true, skip_empty_lines: true }) as {
    card: string;
    code: string;
    time: string;
    type: string;
  }[];
  return rows
    .map(venotteRowToPunch)
    .map((p, i) => ({ p, i }))
    .sort((a, b) => a.p.time - b.p.time || a.i - b.i)
    .map(({ p }) => p);
}
