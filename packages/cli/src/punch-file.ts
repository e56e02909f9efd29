/**
 * Punch files the CLI replays: the demo format `card,code,time,type` (local ISO wall-clock times, as in
 * `services/timing/demo/venotte2020-punches.csv`) and the download CSV format
 * `id,card,time,code,type,modem,receptionTimeUtc` (`time` local ms). Columns are found by name; neither
 * format quotes fields.
 */
import { readFileSync } from 'node:fs';
import { enumValues } from '@sports-timing/shared';
import type { NewPunch } from '@sports-timing/timing-client';

/** Codes given to Start/Finish rows without a code (as the demo loader does). */
const START_CODE = 1;
const FINISH_CODE = 2;

/** Punch types (spec `PunchType`). */
const TYPES = new Set<string>(enumValues<NewPunch['type']>({ Unknown: true, Control: true, Start: true, Finish: true, Check: true, Clear: true }));

/** `2020-02-01T19:16:03[.sss]` (local, no offset) or integer ms → local wall-clock ms written as if UTC. */
function parseLocalTime(text: string): number {
  if (/^\d+(\.0+)?$/.test(text)) return Math.trunc(Number(text));
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?$/.exec(text);
  if (!m) throw new Error(`not a local time: ${text}`);
  const [, y, mo, d, h, mi, s, frac] = m;
  return Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), frac ? Number(frac.padEnd(3, '0')) : 0);
}

/** Where the modem serial of each punch comes from when the file has no `modem` column (or to replace it). */
interface ModemAssignment {
  /**
   * Numeric serials, one modem per control as a radio set-up has them: `modemBase + code` (Start rows
   * without a code: code 1, Finish rows: code 2), e.g. base 3000000 → control 54 from modem `3000054`. The
   * demo event uses base 2020000. Numeric because MeOS's modem mode drops any other unit id.
   */
  modemBase?: number;
  /** `<prefix><code>` (`<prefix>START` / `<prefix>FINISH` for start and finish rows without a code). */
  modemPrefix?: string;
}

/**
 * Reads a punch file into punches sorted by time (file order among equal times). With `modemBase` or
 * `modemPrefix` (see {@link ModemAssignment}), every punch gets the modem of its control, as a radio set-up
 * with one modem per control would send them; without them the file's `modem` column is used (download
 * format). Throws on a malformed row (a wrong number of columns, an unknown type, a bad time), naming its line, and on a file without modems when neither is given.
 */
export function readPunchFile(file: string, modems: ModemAssignment = {}): NewPunch[] {
  const { modemBase, modemPrefix } = modems;
  const lines = readFileSync(file, 'utf8')
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/);
  const header = lines[0].split(',').map((h) => h.trim());
  const col = (name: string) => header.indexOf(name);
  const [iCard, iCode, iTime, iType, iModem] = [col('card'), col('code'), col('time'), col('type'), col('modem')];
  if (iCard < 0 || iTime < 0 || iType < 0) throw new Error(`${file}: header needs card, time, type (and code): ${lines[0]}`);
  if (iModem < 0 && modemPrefix === undefined && modemBase === undefined) {
    throw new Error(`${file}: no modem column; give --modem-base (numeric serials: base + control code, e.g. --modem-base 3000000)`);
  }
  const out: { p: NewPunch; i: number }[] = [];
  lines.slice(1).forEach((line, i) => {
    if (line.trim() === '') return;
    const f = line.split(',').map((s) => s.trim());
    // A short or long row would shift every field after the gap: name it instead of misreading it.
    if (f.length !== header.length) throw new Error(`${file}:${i + 2}: ${f.length} columns, expected ${header.length} (${header.join(',')}): ${line}`);
    const type = f[iType];
    if (!TYPES.has(type)) throw new Error(`${file}:${i + 2}: unknown type ${type}`);
    const codeText = iCode >= 0 ? f[iCode] : '';
    let code: number;
    if (/^\d+$/.test(codeText)) code = Number(codeText);
    else if (type === 'Start') code = START_CODE;
    else if (type === 'Finish') code = FINISH_CODE;
    else throw new Error(`${file}:${i + 2}: missing code`);
    let modem: string;
    if (modemBase !== undefined) {
      modem = String(modemBase + code);
    } else if (modemPrefix !== undefined) {
      modem = codeText === '' && (type === 'Start' || type === 'Finish') ? `${modemPrefix}${type.toUpperCase()}` : `${modemPrefix}${code}`;
    } else {
      modem = f[iModem];
    }
    try {
      out.push({ p: { card: f[iCard], time: parseLocalTime(f[iTime]), code, type: type as NewPunch['type'], modem }, i });
    } catch (err) {
      throw new Error(`${file}:${i + 2}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  });
  return out.sort((a, b) => a.p.time - b.p.time || a.i - b.i).map(({ p }) => p);
}
