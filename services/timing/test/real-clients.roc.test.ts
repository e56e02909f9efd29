/**
 * The real ROC client software, replayed request by request against a running timing service (real HTTP on a
 * port) holding the real demo event (VeNotte 2020, 7,759 punches), as test/real-clients.test.ts does for the
 * SPORTident Center clients: each client's exact request and parsing rules, written from its published source
 * (docs/roc.md names the places):
 *
 * - MeOS, online input with the ROC protocol (`OnlineInput::process`, `csvparser::parse`/`split`,
 *   `OnlineInput::processPunches`);
 * - RadioSender's ROC source (`ROCEvent.GetData`, CsvHelper without a header, `;`);
 * - fartOLa's ROC poller and parser (`fetchRows`, `pollOnce`, `parseRocResponse`);
 * - yaroc's ROC sender (`RocClient.send_punch`).
 *
 * Every reader must receive every punch of the event exactly once, also while modems and ROC units upload
 * concurrently; a punch sent by a ROC unit must reach the SPORTident Center readers and the live status.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { parse } from 'csv-parse/sync';
import { createLogger } from '@sports-timing/shared';
import { loadDemoData } from '../src/demo/load';
import { VENOTTE_WINDOW } from '../src/demo/venotte';
import { startTiming, waitUntilVisible, type TestUser, type TimingTestContext } from './helpers';

let ctx: TimingTestContext;
let server: Server;
let base: string;
let eventId: number;
let club: TestUser;

beforeAll(async () => {
  ctx = await startTiming();
  const demo = await loadDemoData({ db: ctx.database.db, pool: ctx.database.pool }, createLogger('demo'));
  eventId = demo.eventId;
  club = await ctx.createUser('radio-club');
  await waitUntilVisible(ctx);
  server = ctx.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 120_000);
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await ctx?.close();
});

/** The event's modems (as the service holds them now). */
async function eventModems(): Promise<string[]> {
  return ((await (await fetch(`${base}/api/rest/v1/events/${eventId}`)).json()) as { modems: string[] }).modems;
}

/** Every punch id of the event now (its modems, inside its window), from the database; optionally from `fromMs` (local ms) on. */
async function eventPunchIds(fromMs: number = VENOTTE_WINDOW.from): Promise<number[]> {
  const { rows } = await ctx.database.pool.query<{ id: string }>('select id from punches where modem = any($1) and time between $2 and $3 order by id', [
    await eventModems(),
    fromMs,
    VENOTTE_WINDOW.to,
  ]);
  return rows.map((r) => Number(r.id));
}

/** Each id exactly once and the set is `expected`. */
function expectEachOnce(received: number[], expected: number[]): void {
  expect(received.length).toBe(expected.length);
  expect([...received].sort((a, b) => a - b)).toEqual(expected);
}

/** Uploads punches of the demo modems as a modem would (admin key: the demo modems belong to user `demo`). */
async function modemUpload(punches: { modem: string; card: string; time: number; code: number; type: string }[]): Promise<void> {
  const res = await fetch(`${base}/api/rest/v1/punches`, { method: 'POST', headers: { apikey: ctx.adminKey, 'Content-Type': 'application/json' }, body: JSON.stringify(punches) });
  expect(res.status).toBe(200);
}

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
class MeosRocInput {
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
async function demoZero(): Promise<{ zeroMs: number; zeroTime: string }> {
  const { rows } = await ctx.database.pool.query<{ t: string }>('select min(time) t from punches');
  const first = new Date(Number(rows[0].t));
  const zeroMs = Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), first.getUTCDate(), first.getUTCHours());
  return { zeroMs, zeroTime: `${String(first.getUTCHours()).padStart(2, '0')}:00:00` };
}

describe('MeOS online input, ROC protocol (OnlineInput::process / processPunches)', () => {
  it('reads the demo event (unitId=1) with every punch exactly once, in the exact line format; a punch uploaded meanwhile arrives on the next poll', async () => {
    expect(eventId).toBe(1);
    const { zeroMs, zeroTime } = await demoZero();
    const meos = new MeosRocInput(`${base}/getpunches.asp`, ' 1 ', '2020-02-01', zeroTime);
    // The exact line format, checked on the raw answer MeOS downloads.
    const raw = await (await fetch(`${base}/getpunches.asp?unitId=1&lastId=0&date=2020-02-01&time=${zeroTime}`)).text();
    expect(raw).toMatch(/^(\d+;\d+;\d+;2020-02-01 \d{2}:\d{2}:\d{2}\r\n)+$/);
    const first = raw.slice(0, raw.indexOf('\r\n'));
    const [id, code, card, at] = first.split(';');
    const row = (await ctx.database.pool.query('select card, code, time from punches where id = $1', [id])).rows[0];
    expect([Number(code), card, at]).toEqual([row.code, row.card, new Date(Number(row.time)).toISOString().slice(0, 19).replace('T', ' ')]);

    let polls = 0;
    while ((await meos.process()) > 0) polls++;
    const expected = await eventPunchIds(zeroMs);
    expect(expected.length).toBe(7759);
    expectEachOnce(meos.punches.map((p) => p.punchId), expected);
    expect(polls).toBe(1); // the whole event in one answer
    expect(meos.invalidTimes).toBe(0);

    // Meanwhile a modem uploads a punch (a minute after the last one, at a whole second + 123 ms): the next
    // poll (and only it) brings it.
    const last = Number((await ctx.database.pool.query<{ t: string }>('select max(time) t from punches')).rows[0].t);
    const later = Math.floor(last / 1000) * 1000 + 60_000 + 123;
    await modemUpload([{ modem: '2020054', card: '9999001', time: later, code: 54, type: 'Control' }]);
    await waitUntilVisible(ctx);
    expect(await meos.process()).toBe(1);
    expect(meos.punches[meos.punches.length - 1]).toMatchObject({ code: 54, card: 9999001, time: Math.floor((later - zeroMs) / 1000) });
    expect(await meos.process()).toBe(0);
    expectEachOnce(meos.punches.map((p) => p.punchId), await eventPunchIds(zeroMs));
  }, 60_000);

  it('date and time: a later zero time reads exactly the punches from then on (the event clock)', async () => {
    const { zeroMs } = await demoZero();
    const later = zeroMs + 90 * 60_000;
    const hhmmss = new Date(later).toISOString().slice(11, 19);
    const meos = new MeosRocInput(`${base}/getpunches.asp`, '1', '2020-02-01', hhmmss);
    while ((await meos.process()) > 0);
    const expected = await eventPunchIds(later);
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan((await eventPunchIds()).length);
    expectEachOnce(meos.punches.map((p) => p.punchId), expected);
    expect(meos.invalidTimes).toBe(0);
  });
});

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
class RadioSenderRoc {
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
    const records = parse(await res.text(), { delimiter: ';', skip_empty_lines: true, relax_column_count: true }) as string[][];
    const list = records
      .map((r): RocPunch => {
        if (r.length < 4) throw new Error('MissingFieldException');
        return { Id: dotnetInt(r[0], 64), Code: dotnetInt(r[1], 32), Card: dotnetInt(r[2], 64), Time: dotnetDateTime(r[3]) };
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

describe("RadioSender's ROC source (ROCEvent.GetData)", () => {
  it('GET {Host root}/getPunches.asp?unitId=&lastId=, CsvHelper without header, ";": every punch once (a path in Host is dropped)', async () => {
    const rs = new RadioSenderRoc(`${base}/whatever/path/`, eventId);
    for (let i = 0; i < 20 && (await rs.getData()) > 0; i++);
    expectEachOnce(rs.received.map((p) => p.Id), await eventPunchIds());
    for (const p of rs.received) expect(Number.isSafeInteger(p.Card) && p.Code >= 0).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------------------
// fartOLa (its ROC poller and parser)
// ---------------------------------------------------------------------------------------------------------

/** `parseRocResponse`: CRLF lines, blank ones ignored, a line that does not match the row pattern counted as malformed. */
function parseRocResponse(body: string): { rows: { id: number; code: number; card: number; date: string; time: string }[]; malformed: number } {
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
    rows.push({ id: Number(m[1]), code: Number(m[2]), card: Number(m[3]), date: m[4], time: `${m[5]}:${m[6]}:${m[7]}` });
  }
  return { rows, malformed };
}

/** fartOLa's ROC poller for one competition: `fetchRows` (unitId + lastId only) and `pollOnce`'s cursor rules. */
class FartolaRoc {
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

describe("fartOLa's ROC poller (fetchRows / pollOnce / parseRocResponse)", () => {
  it('with the start id set: every punch stored once, no malformed line, no date mismatch', async () => {
    const f = new FartolaRoc(`${base}/getpunches.asp`, String(eventId), '2020-02-01', 1);
    for (let i = 0; i < 20 && (await f.pollOnce()) > 0; i++);
    expect(f.malformed).toBe(0);
    expect(f.duplicates).toBe(0);
    expectEachOnce(f.storedIds(), await eventPunchIds());
    expect([...f.stored.values()].some((p) => p.dateMismatch)).toBe(false);
  });

  it('switched on mid-event (no start id): the first answer is the whole history, then only new punches', async () => {
    const f = new FartolaRoc(`${base}/getpunches.asp`, String(eventId), '2020-02-01', null);
    await f.pollOnce();
    expect(f.stored.size).toBe(0);
    expect(await f.pollOnce()).toBe(0);
    await modemUpload([{ modem: '2020056', card: '9999002', time: Date.UTC(2020, 1, 1, 21, 0, 0), code: 56, type: 'Control' }]);
    await waitUntilVisible(ctx);
    expect(await f.pollOnce()).toBe(1);
    expect([...f.stored.values()]).toEqual([{ code: 56, card: 9999002, dateMismatch: false }]);
  });
});

// ---------------------------------------------------------------------------------------------------------
// yaroc (python/yaroc/clients/roc.py, RocClient.send_punch)
// ---------------------------------------------------------------------------------------------------------

/** Python `datetime` of a naive local time, as yaroc's `SiPunch.time` holds it. */
interface PyDateTime {
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
class YarocRocClient {
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

describe("yaroc's ROC sender (RocClient.send_punch)", () => {
  const mac = 'b827eb5a0001';

  it("posts sendpunches_v2.php's form; the punch (ms kept) reaches the SPORTident Center read, getPunches, the live status and ROC readers, once", async () => {
    const yaroc = new YarocRocClient(`${base}/roc/key/${club.key}/sendpunches_v2.php`);
    const time: PyDateTime = { y: 2020, mo: 2, d: 1, h: 21, mi: 30, s: 15, us: 456_789 };
    const now: PyDateTime = { ...time, s: 17, us: 120_000 };
    await yaroc.sendPunch({ punch: { code: 77, card: 8_621_484, mode: 2, time }, macAddress: mac }, now);
    await yaroc.sendPunch({ punch: { code: 77, card: 8_621_484, mode: 2, time }, macAddress: mac }, now); // retried
    // The organiser adds the unit to the event (admin here; the owner in real life).
    const ev = (await (await fetch(`${base}/api/rest/v1/events/${eventId}`)).json()) as { name: string; public: boolean; modems: string[]; from: number; to: number };
    const put = await fetch(`${base}/api/rest/v1/events/${eventId}`, {
      method: 'PUT',
      headers: { apikey: ctx.adminKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: ev.name, public: ev.public, modems: [...ev.modems, mac], from: ev.from, to: ev.to }),
    });
    expect(put.status).toBe(200);
    await waitUntilVisible(ctx);
    const stored = (await ctx.database.pool.query('select id, time, type from punches where modem = $1', [mac])).rows;
    expect(stored.length).toBe(1);
    const id = Number(stored[0].id);
    expect([Number(stored[0].time), stored[0].type]).toEqual([Date.UTC(2020, 1, 1, 21, 30, 15, 456), 'Control']);

    const simple = (await (await fetch(`${base}/api/rest/v1/public/events/${eventId}/punches?afterId=${id - 1}&projection=simple`, { headers: { Accept: 'text/csv' } })).text()).split('\n');
    expect(simple[1]).toBe(`${id},${mac},8621484,${Date.UTC(2020, 1, 1, 21, 30, 15, 456)},77,BcControl,${simple[1].split(',')[6]}`);
    const center = (await (await fetch(`${base}/api/rest/v1/punches?eventId=${eventId}&afterId=${id - 1}`)).json()) as { id: number }[];
    expect(center.map((p) => p.id)).toEqual([id]);
    const status = (await (await fetch(`${base}/api/rest/v1/events/${eventId}/status`)).json()) as { recent: { id: number }[]; modems: { serial: string }[] };
    expect(status.recent.some((p) => p.id === id)).toBe(true);
    const roc = await (await fetch(`${base}/getpunches.asp?unitId=${eventId}&lastId=${id - 1}`)).text();
    expect(roc).toBe(`${id};77;8621484;2020-02-01 21:30:15\r\n`);
  });

  it('MeOS with "use unit id" reads that unit by its MAC', async () => {
    const meos = new MeosRocInput(`${base}/getpunches.asp`, mac, '2020-02-01', '00:00:00', true);
    while ((await meos.process()) > 0);
    expect(meos.punches.map((p) => [p.code, p.card, p.time])).toEqual([[77, 8621484, 21 * 3600 + 30 * 60 + 15]]);
  });

  it('a unit of another user is refused (yaroc raises), nothing stored', async () => {
    const stranger = await ctx.createUser('stranger');
    const yaroc = new YarocRocClient(`${base}/roc/key/${stranger.key}/sendpunches_v2.php`);
    const time: PyDateTime = { y: 2020, mo: 2, d: 1, h: 21, mi: 31, s: 0, us: 0 };
    await expect(yaroc.sendPunch({ punch: { code: 77, card: 1, mode: 2, time }, macAddress: mac }, time)).rejects.toThrow(/403/);
    expect((await ctx.database.pool.query('select count(*)::int n from punches where modem = $1', [mac])).rows[0].n).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------------------------
// Everything at once
// ---------------------------------------------------------------------------------------------------------

describe('all readers during concurrent uploads of both kinds', () => {
  // RadioSender is left out here: it resumes after the id of the punch with the latest *time* in an answer, so
  // when concurrent uploads commit punches out of time order it reads some twice (with any server; the same
  // holds for its SPORTident Center source). Its ROC read is checked above on the event as stored.
  it('MeOS (ROC), fartOLa and an SI Center poller each receive every punch exactly once', async () => {
    const macs = ['b827eb5a0101', 'b827eb5a0102'];
    // Register the units (first post) and add them to the event before the run.
    for (const m of macs) {
      const y = new YarocRocClient(`${base}/roc/key/${club.key}/sendpunches_v2.php`);
      await y.sendPunch({ punch: { code: 80, card: 1, mode: 3, time: { y: 2020, mo: 2, d: 1, h: 22, mi: 0, s: 0, us: 0 } }, macAddress: m }, { y: 2020, mo: 2, d: 1, h: 22, mi: 0, s: 0, us: 0 });
    }
    const ev = (await (await fetch(`${base}/api/rest/v1/events/${eventId}`)).json()) as { name: string; public: boolean; modems: string[]; from: number; to: number };
    await fetch(`${base}/api/rest/v1/events/${eventId}`, {
      method: 'PUT',
      headers: { apikey: ctx.adminKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: ev.name, public: ev.public, modems: [...ev.modems, ...macs], from: ev.from, to: ev.to }),
    });

    const meos = new MeosRocInput(`${base}/getpunches.asp`, '1', '2020-02-01', '00:00:00');
    const f = new FartolaRoc(`${base}/getpunches.asp`, String(eventId), '2020-02-01', 1);
    const center: number[] = [];
    let done = false;
    const loop = async (poll: () => Promise<number>) => {
      for (;;) {
        const finished = done;
        const n = await poll();
        if (n === 0 && finished) return;
        if (n === 0) await new Promise((r) => setTimeout(r, 5));
      }
    };
    let centerAfter = 0;
    const readers = [
      loop(() => meos.process()),
      loop(() => f.pollOnce()),
      loop(async () => {
        const page = (await (await fetch(`${base}/api/rest/v1/public/events/${eventId}/punches?afterId=${centerAfter}&projection=simple`)).json()) as { id: number }[];
        for (const p of page) center.push(p.id);
        if (page.length > 0) centerAfter = page[page.length - 1].id;
        return page.length;
      }),
    ];
    let clock = Date.UTC(2020, 1, 1, 22, 30);
    const demoModems = (await eventModems()).filter((m) => /^2020\d{3}$/.test(m)).slice(0, 3).map(Number);
    expect(demoModems.length).toBe(3);
    const modems = demoModems.map(async (serial) => {
      for (let b = 0; b < 8; b++) {
        const batch = Array.from({ length: 10 }, (_, i) => ({ modem: String(serial), card: String(7_000_000 + b * 10 + i), time: (clock += 1000), code: serial - 2_020_000, type: 'Control' }));
        await modemUpload(batch);
      }
    });
    const units = macs.map(async (mac, u) => {
      const y = new YarocRocClient(`${base}/roc/key/${club.key}/sendpunches_v2.php`);
      for (let i = 0; i < 25; i++) {
        const t = new Date((clock += 1000) + u);
        const time: PyDateTime = { y: 2020, mo: 2, d: 1, h: t.getUTCHours(), mi: t.getUTCMinutes(), s: t.getUTCSeconds(), us: t.getUTCMilliseconds() * 1000 };
        await y.sendPunch({ punch: { code: 90 + u, card: 6_000_000 + i, mode: 2, time }, macAddress: mac }, time);
      }
    });
    await Promise.all([...modems, ...units]);
    await waitUntilVisible(ctx);
    done = true;
    await Promise.all(readers);

    const expected = await eventPunchIds();
    expect(expected.length).toBeGreaterThanOrEqual(7759 + 3 * 80 + 2 * 25);
    expectEachOnce(meos.punches.map((p) => p.punchId), expected);
    expectEachOnce(f.storedIds(), expected);
    expectEachOnce(center, expected);
    expect(f.malformed + f.duplicates + meos.invalidTimes).toBe(0);
  }, 120_000);
});
