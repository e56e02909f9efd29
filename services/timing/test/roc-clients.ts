/**
 * Ports of the ROC clients' request and parsing code, written line by line from their published sources, for
 * real-clients.roc.test.ts (see that file and docs/roc.md): MeOS's ROC online input, RadioSender's ROC source,
 * fartOLa's ROC poller and parser, yaroc's ROC sender. Each talks real HTTP to the URL it is given.
 */
import { parse } from 'csv-parse/sync';

// ---------------------------------------------------------------------------------------------------------
// MeOS (code/onlineinput.cpp, Type::ROC; code/csvparser.cpp)
// ---------------------------------------------------------------------------------------------------------

/** `OnlineInput::sanitizeId`: whitespace skipped, letters and digits kept up to the first other character; "0" when empty. */
function sanitizeId(input: string): string {
  let out = '';
  for (const w of input) {
    if (/\s/.test(w)) continue;
    if (/[0-9a-zA-Z]/.test(w)) out += w;
    else break;
  }
  return out === '' ? '0' : out;
}

/** Windows `_wtoi`: leading digits (after blanks and a sign), 0 when there are none; 32-bit. */
function wtoi(text: string): number {
  const m = /^\s*([+-]?\d+)/.exec(text);
  if (!m) return 0;
  const v = Number(m[1]);
  if (v > 2 ** 31 - 1 || v < -(2 ** 31)) throw new Error(`_wtoi overflow: ${text}`);
  return v;
}

/**
 * `csvparser::split`: fields separated by `;` outside double quotes; a quote toggles quoting and is dropped,
 * a field's text ends at the first dropped character. A port of the character loop.
 */
function meosSplit(line: string): string[] {
  const chars = [...line];
  const NUL = '\0';
  const out: string[] = [];
  let cite = false;
  for (let m = 0; m < chars.length; m++) {
    let ptr = m;
    if (chars[ptr] === '"') ptr++;
    while (m < chars.length && chars[m] !== NUL) {
      if (!cite && chars[m] === ';') chars[m] = NUL;
      else {
        if (chars[m] === '"') {
          cite = !cite;
          chars[m] = NUL;
          if (cite) ptr = m + 1;
        }
        m++;
      }
    }
    if (m < chars.length) chars[m] = NUL;
    const end = chars.indexOf(NUL, ptr);
    out.push(chars.slice(ptr, end < 0 ? chars.length : end).join(''));
  }
  return out;
}

/**
 * `csvparser::parse` of the downloaded file: `std::getline` per line of an `ifstream` opened in text mode
 * (Windows turns CRLF into `\n`), a UTF-8 byte-order mark skipped, lines without fields left out.
 */
function meosCsvParse(body: string): string[][] {
  const text = body.replace(/\r\n/g, '\n').replace(/^\uFEFF/, '');
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map(meosSplit).filter((sp) => sp.length > 0);
}

/** `oEvent::convertAbsoluteTime` for `H:MM:SS`: seconds of the day, -1 when it is not a time. */
function convertAbsoluteTime(m: string): number {
  const t = /^(\d{1,2}):(\d{2}):(\d{2})$/.exec(m);
  if (!t) return -1;
  return Number(t[1]) * 3600 + Number(t[2]) * 60 + Number(t[3]);
}

/** A MeOS online input with the ROC protocol: URL typed in, competition id, the event's date and zero time. */
export class MeosRocInput {
  lastImportedId = 0;
  /** Punches added (`oe.addFreePunch`), with the relative time in seconds. */
  readonly punches: { punchId: number; code: number; card: number; time: number }[] = [];
  invalidTimes = 0;

  constructor(
    private readonly url: string,
    private readonly cmpId: string,
    private readonly date: string,
    private readonly zeroTime: string,
    /** "Använd enhets-id istället för tävlings-id": `cmpId` is then the unit id, sent as typed. */
    private readonly useUnitId = false,
  ) {}

  /** `OnlineInput::process`: one download and `processPunches`; returns the number of lines read. */
  async process(): Promise<number> {
    const unit = this.useUnitId ? this.cmpId : sanitizeId(this.cmpId);
    const q = `?unitId=${unit}&lastId=${this.lastImportedId}&date=${this.date}&time=${this.zeroTime}`;
    const res = await fetch(this.url + q);
    if (res.status !== 200) throw new Error(`download failed: ${res.status} ${await res.text()}`);
    const rocData = meosCsvParse(await res.text());
    const zero = convertAbsoluteTime(this.zeroTime);
    for (const line of rocData) {
      if (line.length !== 4) throw new Error('Onlineservern svarade felaktigt.');
      const punchId = wtoi(line[0]);
      const code = wtoi(line[1]);
      const card = wtoi(line[2]);
      const timeS = line[3].substring(11);
      const abs = convertAbsoluteTime(timeS);
      if (abs < 0) throw new Error(`not a time: ${timeS}`);
      let time = abs - zero;
      if (time < 0) {
        time = 0;
        this.invalidTimes++;
      }
      this.punches.push({ punchId, code, card, time });
      this.lastImportedId = Math.max(this.lastImportedId, punchId);
    }
    return rocData.length;
  }
}

/** Earliest punch time of the demo event (local ms) and the zero time MeOS would have: that hour, `HH:00:00`. */

// ---------------------------------------------------------------------------------------------------------
// RadioSender (RadioSender/Hosts/Source/ROC/ROCEvent.cs, ConfigureRoc.cs)
// ---------------------------------------------------------------------------------------------------------

/** `ROCPunch(long Id, int Code, long Card, DateTime Time)` as CsvHelper reads a headerless `;` row by position. */
type RocPunch = { Id: number; Code: number; Card: number; Time: number };

/** .NET `Int32.Parse` / `Int64.Parse` with the invariant culture (NumberStyles.Integer). */
function dotnetInt(text: string, bits: 32 | 64): number {
  if (!/^\s*[+-]?\d+\s*$/.test(text)) throw new Error(`FormatException: ${text}`);
  const v = BigInt(text.trim());
  const max = bits === 32 ? 2n ** 31n - 1n : 2n ** 63n - 1n;
  if (v > max || v < -max - 1n) throw new Error(`OverflowException: ${text}`);
  return Number(v);
}

/** `DateTime.Parse(text, InvariantCulture)` for the forms a ROC answer may hold; ms since an arbitrary epoch. */
function dotnetDateTime(text: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})$/.exec(text.trim());
  if (!m) throw new Error(`FormatException: ${text}`);
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
}

/** RadioSender's ROC source for one configured event (`Source:ROC:Events[]`: `EventId`, `Host`). */
export class RadioSenderRoc {
  private lastReceivedId = 0;
  readonly received: RocPunch[] = [];

  constructor(
    private readonly host: string,
    private readonly eventIdConfigured: number,
  ) {}

  /** `GetData`: the request relative to `HttpClient.BaseAddress`, CsvHelper, OrderBy(Time), last id. */
  async getData(): Promise<number> {
    // A path starting with `/` replaces the base address's path (Uri resolution): the file sits at the root.
    const url = new URL(`/getPunches.asp?unitId=${this.eventIdConfigured}&lastId=${this.lastReceivedId}`, this.host);
    const res = await fetch(url);
    if (!res.ok) throw new Error(`Error getting data from ROC: response code ${res.status}`);
    const records = parse(await res.text(), {
      delimiter: ';',
      skip_empty_lines: true,
      relax_column_count: true,
    }) as string[][];
    const list = records
      .map((r): RocPunch => {
        if (r.length < 4) throw new Error('MissingFieldException');
        return {
          Id: dotnetInt(r[0], 64),
          Code: dotnetInt(r[1], 32),
          Card: dotnetInt(r[2], 64),
          Time: dotnetDateTime(r[3]),
        };
      })
      .map((p, i) => ({ p, i }))
      .sort((a, b) => a.p.Time - b.p.Time || a.i - b.i)
      .map(({ p }) => p);
    if (list.length > 0) {
      this.received.push(...list);
      this.lastReceivedId = list[list.length - 1].Id;
    }
    return list.length;
  }
}

// ---------------------------------------------------------------------------------------------------------
// fartOLa (its ROC poller and parser)
// ---------------------------------------------------------------------------------------------------------

/** `parseRocResponse`: CRLF lines, blank ones ignored, a line that does not match the row pattern counted as malformed. */
function parseRocResponse(body: string): {
  rows: { id: number; code: number; card: number; date: string; time: string }[];
  malformed: number;
} {
  const rowRe = /^(\d+);(\d+);(\d+);(\d{4}-\d{2}-\d{2}) ([01]\d|2[0-3]):([0-5]\d):([0-5]\d)$/;
  const rows: { id: number; code: number; card: number; date: string; time: string }[] = [];
  let malformed = 0;
  for (const raw of body.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '') continue;
    const m = rowRe.exec(line);
    if (m === null) {
      malformed++;
      continue;
    }
    rows.push({
      id: Number(m[1]),
      code: Number(m[2]),
      card: Number(m[3]),
      date: m[4],
      time: `${m[5]}:${m[6]}:${m[7]}`,
    });
  }
  return { rows, malformed };
}

/** fartOLa's ROC poller for one competition: `fetchRows` (unitId + lastId only) and `pollOnce`'s cursor rules. */
export class FartolaRoc {
  lastId: number | null = null;
  readonly stored = new Map<string, { code: number; card: number; dateMismatch: boolean }>();
  duplicates = 0;
  malformed = 0;
  skipped = 0;

  constructor(
    private readonly url: string,
    private readonly unitId: string,
    private readonly competitionDate: string,
    /** The operator's explicit start id; null: the first poll takes everything there is as history. */
    private startId: number | null,
  ) {}

  async pollOnce(): Promise<number> {
    const lastId = this.lastId ?? (this.startId !== null ? this.startId - 1 : null);
    const baseline = lastId === null;
    const askedFrom = lastId ?? 0;
    const query = new URLSearchParams({ unitId: this.unitId, lastId: String(askedFrom) });
    const res = await fetch(`${this.url}?${query.toString()}`);
    if (!res.ok) throw new Error(`ROC HTTP ${res.status}`);
    const { rows, malformed } = parseRocResponse(await res.text());
    this.malformed += malformed;
    const fresh = rows.filter((r) => r.id > askedFrom).sort((a, b) => a.id - b.id);
    if (baseline) this.startId = (fresh.length > 0 ? fresh[fresh.length - 1].id : 0) + 1;
    for (const r of fresh) {
      if (this.startId !== null && r.id < this.startId) {
        this.skipped++;
        continue;
      }
      const key = `${this.unitId}:${r.id}`;
      if (this.stored.has(key)) this.duplicates++;
      else this.stored.set(key, { code: r.code, card: r.card, dateMismatch: r.date !== this.competitionDate });
    }
    const maxId = baseline ? this.startId! - 1 : fresh.length > 0 ? fresh[fresh.length - 1].id : null;
    if (maxId !== null) this.lastId = maxId;
    return fresh.length;
  }

  storedIds(): number[] {
    return [...this.stored.keys()].map((k) => Number(k.slice(k.indexOf(':') + 1)));
  }
}

// ---------------------------------------------------------------------------------------------------------
// yaroc (python/yaroc/clients/roc.py, RocClient.send_punch)
// ---------------------------------------------------------------------------------------------------------

/** Python `datetime` of a naive local time, as yaroc's `SiPunch.time` holds it. */
export interface PyDateTime {
  y: number;
  mo: number;
  d: number;
  h: number;
  mi: number;
  s: number;
  us: number;
}
const pad = (n: number, w = 2) => String(n).padStart(w, '0');
/** `strftime` for the directives yaroc uses (`%Y-%m-%d`, `%H:%M:%S`, `%f`). */
function strftime(t: PyDateTime, format: string): string {
  return format.replace(/%([YmdHMSf])/g, (_, c: string) =>
    c === 'Y' ? pad(t.y, 4) : c === 'm' ? pad(t.mo) : c === 'd' ? pad(t.d) : c === 'H' ? pad(t.h) : c === 'M' ? pad(t.mi) : c === 'S' ? pad(t.s) : pad(t.us, 6),
  );
}
/** `str(datetime)`: `YYYY-MM-DD HH:MM:SS[.ffffff]`. */
function pyStr(t: PyDateTime): string {
  return `${strftime(t, '%Y-%m-%d %H:%M:%S')}${t.us ? `.${pad(t.us, 6)}` : ''}`;
}

/** yaroc's `RocClient` with `ROC_SEND_PUNCH` pointed at our service (the constant is the one setting). */
export class YarocRocClient {
  constructor(
    private readonly rocSendPunch: string,
    private readonly macOverrideMap: Record<string, string> = {},
  ) {}

  async sendPunch(punchLog: { punch: { code: number; card: number; mode: number; time: PyDateTime }; macAddress: string }, now: PyDateTime): Promise<void> {
    const length = (x: number): number => {
      if (x === 0) return 1;
      if (x < 0) return length(-x) + 1;
      return Math.floor(Math.log10(x)) + 1;
    };
    const punch = punchLog.punch;
    const macAddress = this.macOverrideMap[punchLog.macAddress] ?? punchLog.macAddress;
    const data: Record<string, string> = {
      control1: String(punch.code),
      sinumber1: String(punch.card),
      stationmode1: String(punch.mode),
      date1: strftime(punch.time, '%Y-%m-%d'),
      sitime1: strftime(punch.time, '%H:%M:%S'),
      ms1: strftime(punch.time, '%f').slice(0, 3),
      roctime1: pyStr(now).slice(0, 19),
      macaddr: macAddress,
      '1': 'f',
      length: String(118 + [punch.code, punch.card, punch.mode].map(length).reduce((a, b) => a + b, 0)),
    };
    // aiohttp `data=dict`: an urlencoded form; `raise_for_status=True`.
    const res = await fetch(this.rocSendPunch, { method: 'POST', body: new URLSearchParams(data) });
    if (res.status >= 400) throw new Error(`ConnectionError: ${res.status} ${await res.text()}`);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Shared by the ROC tests (roc.test.ts, roc.both-ways.test.ts)
// ---------------------------------------------------------------------------------------------------------

/** The ROC unit of the ROC tests' public event. */
export const UNIT = 'b827eb000001';

/** A line of the ROC read format. */
const ROC_LINE = /^(\d+);(\d+);(\d+);(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})$/;

/** yaroc's form for one punch (RocClient.send_punch): fields with the index 1, the MAC, `1=f` and `length`. */
export function yarocForm(p: { code: number; card: number; mode: number; date: string; time: string; ms: string; mac?: string }): Record<string, string> {
  const length = (x: number) => String(x).length;
  return {
    control1: String(p.code),
    sinumber1: String(p.card),
    stationmode1: String(p.mode),
    date1: p.date,
    sitime1: p.time,
    ms1: p.ms,
    roctime1: '2020-02-01 19:16:05',
    macaddr: p.mac ?? UNIT,
    '1': 'f',
    length: String(118 + length(p.code) + length(p.card) + length(p.mode)),
  };
}

/** Parses a ROC answer strictly: every line ends in CRLF and matches {@link ROC_LINE}. */
export function rocRows(text: string): { id: number; code: number; card: number; at: string }[] {
  if (text === '') return [];
  expect(text.endsWith('\r\n')).toBe(true);
  return text
    .slice(0, -2)
    .split('\r\n')
    .map((line) => {
      const m = ROC_LINE.exec(line);
      if (!m) throw new Error(`not a ROC line: ${JSON.stringify(line)}`);
      return { id: Number(m[1]), code: Number(m[2]), card: Number(m[3]), at: m[4] };
    });
}
