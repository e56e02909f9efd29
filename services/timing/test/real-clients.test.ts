/**
 * The real client software of the field, replayed request by request against a running timing service (real
 * HTTP on a port) holding the real demo event (VeNotte 2020, 7,759 punches): each client's exact request
 * (path, query, headers) and its parsing rules, written from the clients' published source. Every client
 * must receive every punch of the event exactly once. See the client table in the service README.
 *
 * Also the HTTP details those stacks depend on: `Accept` parameters, HEAD, cache busters on public reads,
 * CORS preflights, and the card-number range that keeps 32-bit parsers alive.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { createLogger } from '@sports-timing/shared';
import { loadDemoData } from '../src/demo/load';
import { VENOTTE_WINDOW } from '../src/demo/venotte';
import { startTiming, waitUntilVisible, type TestUser, type TimingTestContext } from './helpers';
import { testTime } from '@sports-timing/shared/src/test-time';

let ctx: TimingTestContext;
let server: Server;
let base: string;
let eventId: number;
let reader: TestUser;
/** Every punch id of the event, from the database. */
let allIds: number[];

beforeAll(async () => {
  ctx = await startTiming();
  const demo = await loadDemoData(ctx.timing, createLogger('demo'));
  eventId = demo.eventId;
  reader = await ctx.createUser('result-software');
  await waitUntilVisible(ctx);
  allIds = (await ctx.database.pool.query<{ id: string }>('select id from punches order by id')).rows.map((r) => Number(r.id));
  server = ctx.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, testTime(120_000));
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await ctx?.close();
});

/** C++ `std::stoi` / `std::stoll`: leading digits of the text, out_of_range beyond the type (MeOS). */
function stoi(text: string, bits: 32 | 64 = 32): number {
  const m = /^\s*([+-]?\d+)/.exec(text);
  if (!m) throw new Error(`std::invalid_argument: ${JSON.stringify(text)}`);
  const v = BigInt(m[1]);
  const max = bits === 32 ? 2n ** 31n - 1n : 2n ** 63n - 1n;
  if (v > max || v < -max - 1n) throw new Error(`std::out_of_range: ${text}`);
  return Number(v);
}

/** Windows `_wtoi`: leading digits, 0 when there are none (MeOS's modem ids). */
function wtoi(text: string): number {
  const m = /^\s*([+-]?\d+)/.exec(text);
  return m ? Number(m[1]) : 0;
}

/** .NET `uint.Parse`: the whole text, 0 … 4,294,967,295, FormatException/OverflowException otherwise (SIRAPimport). */
function uintParse(text: string): number {
  if (!/^\s*\+?\d+\s*$/.test(text)) throw new Error(`FormatException: ${text}`);
  const v = Number(text.trim());
  if (v > 4_294_967_295) throw new Error(`OverflowException: ${text}`);
  return v;
}

/** Counts of each id: every punch once means every count is 1 and the set is `allIds`. */
function expectEachPunchOnce(ids: number[]): void {
  expect(ids.length).toBe(allIds.length);
  expect([...ids].sort((a, b) => a - b)).toEqual(allIds);
}

/** Polls with `next(afterId)` until a poll returns nothing; returns every id received. */
async function pollAll(next: (afterId: number) => Promise<number[]>, advance: (ids: number[], afterId: number) => number): Promise<number[]> {
  const received: number[] = [];
  let afterId = 0;
  for (let i = 0; i < 100; i++) {
    const ids = await next(afterId);
    if (ids.length === 0) return received;
    received.push(...ids);
    afterId = advance(ids, afterId);
  }
  throw new Error('the client never caught up');
}

describe('MeOS (SPORTident Center online input, OnlineInput::process / processPunchesSICenter)', () => {
  // MeOS sends the competition's zero time as `after`, in ms since the epoch; here the start of the event day.
  const zero = VENOTTE_WINDOW.from;

  /** One MeOS poll: its query, `Accept: text/csv`, no key; the CSV parsed as MeOS parses it. */
  async function meosPoll(query: string): Promise<{ id: number; card: number; code: number; type: string }[]> {
    const res = await fetch(`${base}/api/rest/v1/punches${query}`, { headers: { Accept: 'text/csv' } });
    expect(res.status).toBe(200);
    const lines = (await res.text()).split('\n');
    // Skip the header; then std::getline on ',' and std::stoi / std::stoll for id, card, time, code.
    return lines
      .slice(1)
      .filter((l) => l.length > 0)
      .map((line) => {
        const f = line.split(',');
        const id = stoi(f[0]);
        const card = stoi(f[1]);
        stoi(f[2], 64);
        const code = stoi(f[3]);
        return { id, card, code, type: f[4] };
      });
  }

  it('event mode: ?eventId=&afterId=&after= receives every punch once', async () => {
    const ids = await pollAll(
      async (afterId) => (await meosPoll(`?eventId=${eventId}&afterId=${afterId}&after=${zero}`)).map((p) => p.id),
      (ids, last) => Math.max(last, ...ids),
    );
    expectEachPunchOnce(ids);
  });

  it('modem mode: unit ids typed with spaces, commas and semicolons become ?modem=<ints> (the demo serials are positive integers)', async () => {
    const typed = '2020054, 2020056;2020001 2020002';
    // OnlineInput::save: split on " ,;", keep _wtoi(m) > 0, join with ",".
    const modems = typed
      .split(/[ ,;]/)
      .map(wtoi)
      .filter((m) => m > 0)
      .join(',');
    expect(modems).toBe('2020054,2020056,2020001,2020002');
    const expected = Number(
      (await ctx.database.pool.query<{ n: string }>(`select count(*) n from punches where modem = any($1)`, [modems.split(',')])).rows[0].n,
    );
    const ids = await pollAll(
      async (afterId) => (await meosPoll(`?modem=${modems}&afterId=${afterId}&after=${zero}`)).map((p) => p.id),
      (ids, last) => Math.max(last, ...ids),
    );
    expect(ids.length).toBe(expected);
    expect(new Set(ids).size).toBe(expected);
  });

  it('every serial of the demo event survives MeOS modem mode (_wtoi of the serial is the serial)', async () => {
    const event = (await (await fetch(`${base}/api/rest/v1/events/${eventId}`)).json()) as { modems: string[] };
    expect(event.modems.length).toBe(30);
    for (const serial of event.modems) expect(String(wtoi(serial))).toBe(serial);
  });
});

describe('SIRAPimport (SportIdentCenter action)', () => {
  // Its request carries only afterId, after (when -After is given) and modem (-Modem): -EventId and -User are never sent.
  it("?afterId=&after=<local date-time as ms, decimal>&modem=<the event's modems>, no Accept, no key: a bare JSON array whose cards uint.Parse", async () => {
    const after = `${VENOTTE_WINDOW.from}.0`;
    const modems = ((await (await fetch(`${base}/api/rest/v1/events/${eventId}`)).json()) as { modems: string[] }).modems.join(',');
    const ids = await pollAll(
      async (afterId) => {
        const res = await fetch(`${base}/api/rest/v1/punches?afterId=${afterId}&after=${after}&modem=${modems}`);
        expect(res.status).toBe(200);
        const text = await res.text();
        expect(text[0]).toBe('[');
        const punches = JSON.parse(text) as { id: number; card: string; code: number; time: number }[];
        for (const p of punches) uintParse(p.card);
        return punches.map((p) => p.id);
      },
      (ids, last) => Math.max(last, ...ids),
    );
    expectEachPunchOnce(ids);
  });
});

describe("Pirilä's SICenterJson parser (parseSIPunches)", () => {
  it('parses the JSON array into its fixed-size struct: card < 24, type < 10, modem < 24 chars, id a 32-bit long', async () => {
    const ids = await pollAll(
      async (afterId) => {
        const text = await (
          await fetch(`${base}/api/rest/v1/punches?eventId=${eventId}&afterId=${afterId}`, { headers: { Accept: 'application/json' } })
        ).text();
        expect(text.trimStart()[0]).toBe('['); // -1 (not a JSON array) otherwise
        const punches = JSON.parse(text) as { id: number; card: string; type: string; modem: string; time: number; receptionTimeUtc: number }[];
        for (const p of punches) {
          expect(p.id).toBeLessThanOrEqual(2 ** 31 - 1);
          expect(p.card.length).toBeLessThan(24);
          expect(p.type.length).toBeLessThan(10);
          expect(p.modem.length).toBeLessThan(24);
          expect(Number.isSafeInteger(p.time) && Number.isSafeInteger(p.receptionTimeUtc)).toBe(true);
        }
        return punches.map((p) => p.id);
      },
      (ids, last) => Math.max(last, ...ids),
    );
    expectEachPunchOnce(ids);
  });
});

describe('RadioSender (SportidentCenterEvent.GetData)', () => {
  /** RadioSender's `SimplePunch(long Id, long Card, long Time, int Code, string Mode)`, mapped by lower-cased header names. */
  type RadioSenderPunch = { Id: number; Card: number; Time: number; Code: number; Mode: string };

  it('GET /api/rest/v1/public/events/{id}/punches?projection=simple&afterId=N, apikey, Accept: text/csv; CSV by header names incl. Mode', async () => {
    let lastReceivedId = 0;
    const received: number[] = [];
    for (let poll = 0; poll < 100; poll++) {
      const res = await fetch(`${base}/api/rest/v1/public/events/${eventId}/punches?projection=simple&afterId=${lastReceivedId}`, {
        headers: { apikey: reader.key, Accept: 'text/csv' },
      });
      expect(res.status).toBe(200);
      // CsvHelper with PrepareHeaderForMatch = ToLower: every constructor parameter needs its column.
      const rows = parse(await res.text(), { columns: (header: string[]) => header.map((h) => h.toLowerCase()) }) as Record<string, string>[];
      const list: RadioSenderPunch[] = rows
        .map((r) => {
          for (const column of ['id', 'card', 'time', 'code', 'mode']) if (!(column in r)) throw new Error(`HeaderValidationException: ${column}`);
          return { Id: Number(r.id), Card: Number(r.card), Time: Number(r.time), Code: Number(r.code), Mode: r.mode };
        })
        // OrderBy(p => p.Time) (stable), then _lastReceivedId = list.Last().Id.
        .map((p, i) => ({ p, i }))
        .sort((a, b) => a.p.Time - b.p.Time || a.i - b.i)
        .map(({ p }) => p);
      if (list.length === 0) break;
      for (const p of list) {
        expect(Number.isSafeInteger(p.Card) && Number.isInteger(p.Code)).toBe(true);
        // MapControlType: the mode must name the control type.
        expect(['control', 'finish', 'start', 'check', 'clear'].some((t) => p.Mode.toLowerCase().includes(t))).toBe(true);
      }
      received.push(...list.map((p) => p.Id));
      lastReceivedId = list[list.length - 1].Id;
    }
    expectEachPunchOnce(received);
  });
});

describe('web live-result clients of the Center API (SportIdentService.fetchPunches)', () => {
  it('JSON with afterId, projection=simple, limit=1000 and a JSON Content-Type on the GET: numeric card, mode, receptionTime', async () => {
    const ids = await pollAll(
      async (afterId) => {
        const res = await fetch(`${base}/api/rest/v1/public/events/${eventId}/punches?afterId=${afterId}&projection=simple&limit=1000`, {
          headers: { apikey: reader.key, Accept: 'application/json', 'Content-Type': 'application/json;charset=UTF-8' },
        });
        expect(res.status).toBe(200);
        const punches = (await res.json()) as Record<string, unknown>[];
        for (const p of punches) {
          expect(Object.keys(p).sort()).toEqual(['card', 'code', 'id', 'mode', 'modem', 'receptionTime', 'time']);
          expect(typeof p.card).toBe('number');
          expect(typeof p.mode).toBe('string');
          expect(Number.isSafeInteger(p.receptionTime)).toBe(true);
        }
        return punches.map((p) => p.id as number);
      },
      // "Update highest ID for next poll"
      (ids, last) => Math.max(last, ...ids),
    );
    expectEachPunchOnce(ids);
  });

  it('the simple format carries the same punches as getPunches: mode from the type, receptionTime = receptionTimeUtc', async () => {
    const simple = (await (await fetch(`${base}/api/rest/v1/public/events/${eventId}/punches?afterId=0&limit=5`)).json()) as Record<string, unknown>[];
    const plain = (await (await fetch(`${base}/api/rest/v1/punches?eventId=${eventId}&afterId=0`)).json()) as Record<string, number & string>[];
    const modes: Record<string, string> = { Control: 'BcControl', Start: 'BcStart', Finish: 'BcFinish' };
    expect(simple).toHaveLength(5);
    simple.forEach((s, i) => {
      const p = plain[i];
      expect(s).toEqual({ id: p.id, modem: p.modem, card: Number(p.card), time: p.time, code: p.code, mode: modes[p.type], receptionTime: p.receptionTimeUtc });
    });
  });

  it('limit bounds the page (1..1000), X-Total-Count counts every punch after afterId, projection other than simple is 400', async () => {
    const res = await fetch(`${base}/api/rest/v1/public/events/${eventId}/punches?afterId=0&limit=7`);
    expect(await res.json()).toHaveLength(7);
    expect(res.headers.get('x-total-count')).toBe(String(allIds.length));
    for (const bad of ['limit=0', 'limit=1001', 'projection=full', 'afterId=-1']) {
      const r = await fetch(`${base}/api/rest/v1/public/events/${eventId}/punches?${bad}`);
      expect(r.status).toBe(400);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    expect((await fetch(`${base}/api/rest/v1/public/events/999999/punches`)).status).toBe(404);
  });

  it('a private event needs the owner key: without it, the answer of a missing event', async () => {
    const owner = await ctx.createUser('private-owner');
    const created = await fetch(`${base}/api/rest/v1/events`, {
      method: 'POST',
      headers: { apikey: owner.key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Private', public: false, modems: ['3000001'] }),
    });
    const { id } = (await created.json()) as { id: number };
    expect((await fetch(`${base}/api/rest/v1/public/events/${id}/punches`)).status).toBe(404);
    expect((await fetch(`${base}/api/rest/v1/public/events/${id}/punches`, { headers: { apikey: reader.key } })).status).toBe(404);
    expect((await fetch(`${base}/api/rest/v1/public/events/${id}/punches`, { headers: { apikey: owner.key } })).status).toBe(200);
  });
});

describe('HTTP details real stacks send', () => {
  it('Accept with parameters (our own content type, charset in any case) is served, not 406', async () => {
    for (const accept of ['application/json; charset=utf-8', 'application/json;charset=UTF-8', 'text/csv; charset=utf-8', 'application/json; foo=bar']) {
      const res = await fetch(`${base}/api/rest/v1/punches?eventId=${eventId}&afterId=${allIds.length - 2}`, { headers: { Accept: accept } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(accept.startsWith('text/csv') ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8');
    }
    expect((await fetch(`${base}/api/rest/v1/punches?eventId=${eventId}`, { headers: { Accept: 'text/html' } })).status).toBe(406);
  });

  it('HEAD answers every GET with its status and headers and no body (curl -sI)', async () => {
    const get = await fetch(`${base}/api/rest/v1/punches?eventId=${eventId}`);
    const head = await fetch(`${base}/api/rest/v1/punches?eventId=${eventId}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('x-total-count')).toBe(get.headers.get('x-total-count'));
    expect(head.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await head.text()).toBe('');
    for (const path of ['/api/rest/v1/public/versions', `/api/rest/v1/events/${eventId}`, `/api/rest/v1/public/events/${eventId}/punches`, '/healthz']) {
      expect((await fetch(`${base}${path}`, { method: 'HEAD' })).status).toBe(200);
    }
    // A stream answers HEAD with its headers at once instead of holding the connection.
    const stream = await fetch(`${base}/api/rest/v1/punches/stream?eventId=${eventId}`, { method: 'HEAD', signal: AbortSignal.timeout(testTime(5_000)) });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    // HEAD errors are the GET's errors.
    expect((await fetch(`${base}/api/rest/v1/punches`, { method: 'HEAD' })).status).toBe(400);
  });

  it('public reads ignore a jQuery cache buster and other undeclared parameters; a case typo of a declared one is 400', async () => {
    expect((await fetch(`${base}/api/rest/v1/public/versions?_=1700000000`)).status).toBe(200);
    expect((await fetch(`${base}/api/rest/v1/punches?eventId=${eventId}&afterId=7700&_=1700000000`)).status).toBe(200);
    expect((await fetch(`${base}/api/rest/v1/public/events/${eventId}/punches?afterId=7700&_=1700000000`)).status).toBe(200);
    const typo = await fetch(`${base}/api/rest/v1/punches?eventId=${eventId}&afterid=7700`);
    expect(typo.status).toBe(400);
    expect(((await typo.json()) as { errors: Record<string, string[]> }).errors.afterid[0]).toMatch(/did you mean 'afterId'/);
    // Operations that need a key stay strict.
    const strict = await fetch(`${base}/api/rest/v1/modems?_=1700000000`, { headers: { apikey: ctx.adminKey } });
    expect(strict.status).toBe(400);
  });

  it('CORS: a live-result page on any origin polls public punches; preflights are 204; private operations refuse unknown origins', async () => {
    const origin = 'https://live.example.org';
    const res = await fetch(`${base}/api/rest/v1/public/events/${eventId}/punches?afterId=7750`, { headers: { Origin: origin } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-expose-headers')).toMatch(/X-Total-Count/);
    const preflight = await fetch(`${base}/api/rest/v1/punches?eventId=${eventId}`, {
      method: 'OPTIONS',
      headers: { Origin: origin, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'apikey' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toBe('GET,HEAD');
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/apikey/);
    // Uploads are not a public read: no CORS_ORIGINS configured here, so no origin may use them.
    const upload = await fetch(`${base}/api/rest/v1/punches`, {
      method: 'OPTIONS',
      headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'apikey,content-type' },
    });
    expect(upload.headers.get('access-control-allow-origin')).toBeNull();
    expect(upload.headers.get('vary')).toMatch(/Origin/);
  });
});

describe('card numbers that would freeze clients', () => {
  const punch = (card: string | number) => ({ card, time: VENOTTE_WINDOW.from + 1000, code: 31, type: 'Control', modem: '3100001' });

  it('a punch with a card above 16,777,215 is rejected alone (index and reason), in JSON, gzipped JSON and CSV; the valid ones are stored', async () => {
    const uploader = await ctx.createUser('uploader');
    const count = async () => Number((await ctx.database.pool.query<{ n: string }>('select count(*) n from punches')).rows[0].n);
    const before = await count();
    const json = await fetch(`${base}/api/rest/v1/punches`, {
      method: 'POST',
      headers: { apikey: uploader.key, 'Content-Type': 'application/json' },
      body: JSON.stringify([punch('16777215'), punch('16777216')]),
    });
    expect(json.status).toBe(200);
    const answer = (await json.json()) as { stored: number; rejected: { index: number; reason: string }[] };
    expect(answer.stored).toBe(1);
    expect(answer.rejected.map((r) => r.index)).toEqual([1]);
    expect(answer.rejected[0].reason).toMatch(/^card: .*16777215/);
    const gzipped = await fetch(`${base}/api/rest/v1/punches`, {
      method: 'POST',
      headers: { apikey: uploader.key, 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      body: gzipSync(JSON.stringify([punch(2_147_483_648)])),
    });
    expect(gzipped.status).toBe(200);
    expect((await gzipped.json()) as { stored: number; rejected: unknown[] }).toMatchObject({ stored: 0, rejected: [{ index: 0 }] });
    const csv = await fetch(`${base}/api/rest/v1/punches`, {
      method: 'POST',
      headers: { apikey: uploader.key, 'Content-Type': 'text/csv' },
      body: `card,time,code,type,modem\n4294967296,${VENOTTE_WINDOW.from},31,Control,3100001\n`,
    });
    expect(csv.status).toBe(200);
    expect(((await csv.json()) as { rejected: { reason: string }[] }).rejected[0].reason).toMatch(/16777215/);
    // Only the valid punch of the three uploads was stored.
    expect(await count()).toBe(before + 1);
    // The largest card number is stored.
    const ok = await fetch(`${base}/api/rest/v1/punches`, {
      method: 'POST',
      headers: { apikey: uploader.key, 'Content-Type': 'application/json' },
      body: JSON.stringify([punch('16777215')]),
    });
    expect(ok.status).toBe(200);
  });
});
