/**
 * The real ROC client software (ported in roc-clients.ts), replayed request by request against a running timing service (real HTTP on a
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
import { createLogger } from '@sports-timing/shared';
import { loadDemoData } from '../src/demo/load';
import { internalPrincipal } from '../src/auth/principal';
import { createKey } from '../src/users/users.service';
import { VENOTTE_WINDOW } from '../src/demo/venotte';
import { startTiming, waitUntilVisible, type TestUser, type TimingTestContext } from './helpers';
import { FartolaRoc, MeosRocInput, RadioSenderRoc, YarocRocClient, type PyDateTime } from './roc-clients';
import { testTime } from '@sports-timing/shared/src/test-time';

let ctx: TimingTestContext;
let server: Server;
let base: string;
let eventId: number;
let club: TestUser;

beforeAll(async () => {
  ctx = await startTiming();
  const demo = await loadDemoData(ctx.timing, createLogger('demo'));
  eventId = demo.eventId;
  // The radio units are the demo event's owner's (user `demo`): an event covers the modems registered to its
  // owner (docs/decisions.md §5), so the units upload with a key of that user.
  const owner = (await ctx.database.pool.query<{ id: number }>(`select id from users where user_name = 'demo'`)).rows[0];
  const key = await createKey(ctx.database.db, internalPrincipal(owner.id, 'demo', 'user'), 'radio units', 100);
  club = { id: owner.id, userName: 'demo', key: key.key };
  await waitUntilVisible(ctx);
  server = ctx.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, testTime(120_000));
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
  const res = await fetch(`${base}/api/rest/v1/punches`, {
    method: 'POST',
    headers: { apikey: ctx.adminKey, 'Content-Type': 'application/json' },
    body: JSON.stringify(punches),
  });
  expect(res.status).toBe(200);
}

async function demoZero(): Promise<{ zeroMs: number; zeroTime: string }> {
  const { rows } = await ctx.database.pool.query<{ t: string }>('select min(time) t from punches');
  const first = new Date(Number(rows[0].t));
  const zeroMs = Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), first.getUTCDate(), first.getUTCHours());
  return { zeroMs, zeroTime: `${String(first.getUTCHours()).padStart(2, '0')}:00:00` };
}

describe('MeOS online input, ROC protocol (OnlineInput::process / processPunches)', () => {
  it(
    'reads the demo event (unitId=1) with every punch exactly once, in the exact line format; a punch uploaded meanwhile arrives on the next poll',
    async () => {
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
      expectEachOnce(
        meos.punches.map((p) => p.punchId),
        expected,
      );
      expect(polls).toBe(1); // the whole event in one answer
      expect(meos.invalidTimes).toBe(0);

      // Meanwhile a modem uploads a punch (a minute after the last one, at a whole second + 123 ms): the next
      // poll (and only it) brings it.
      const last = Number((await ctx.database.pool.query<{ t: string }>('select max(time) t from punches')).rows[0].t);
      const later = Math.floor(last / 1000) * 1000 + 60_000 + 123;
      await modemUpload([{ modem: '2020054', card: '9999001', time: later, code: 54, type: 'Control' }]);
      await waitUntilVisible(ctx);
      expect(await meos.process()).toBe(1);
      expect(meos.punches[meos.punches.length - 1]).toMatchObject({
        code: 54,
        card: 9999001,
        time: Math.floor((later - zeroMs) / 1000),
      });
      expect(await meos.process()).toBe(0);
      expectEachOnce(
        meos.punches.map((p) => p.punchId),
        await eventPunchIds(zeroMs),
      );
    },
    testTime(60_000),
  );

  it('date and time: a later zero time reads exactly the punches from then on (the event clock)', async () => {
    const { zeroMs } = await demoZero();
    const later = zeroMs + 90 * 60_000;
    const hhmmss = new Date(later).toISOString().slice(11, 19);
    const meos = new MeosRocInput(`${base}/getpunches.asp`, '1', '2020-02-01', hhmmss);
    while ((await meos.process()) > 0);
    const expected = await eventPunchIds(later);
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan((await eventPunchIds()).length);
    expectEachOnce(
      meos.punches.map((p) => p.punchId),
      expected,
    );
    expect(meos.invalidTimes).toBe(0);
  });
});

describe("RadioSender's ROC source (ROCEvent.GetData)", () => {
  it('GET {Host root}/getPunches.asp?unitId=&lastId=, CsvHelper without header, ";": every punch once (a path in Host is dropped)', async () => {
    const rs = new RadioSenderRoc(`${base}/whatever/path/`, eventId);
    for (let i = 0; i < 20 && (await rs.getData()) > 0; i++);
    expectEachOnce(
      rs.received.map((p) => p.Id),
      await eventPunchIds(),
    );
    for (const p of rs.received) expect(Number.isSafeInteger(p.Card) && p.Code >= 0).toBe(true);
  });
});

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

describe("yaroc's ROC sender (RocClient.send_punch)", () => {
  const mac = 'b827eb5a0001';

  it("posts sendpunches_v2.php's form; the punch (ms kept) reaches the SPORTident Center read, getPunches, the live status and ROC readers, once", async () => {
    const yaroc = new YarocRocClient(`${base}/roc/key/${club.key}/sendpunches_v2.php`);
    const time: PyDateTime = { y: 2020, mo: 2, d: 1, h: 21, mi: 30, s: 15, us: 456_789 };
    const now: PyDateTime = { ...time, s: 17, us: 120_000 };
    await yaroc.sendPunch({ punch: { code: 77, card: 8_621_484, mode: 2, time }, macAddress: mac }, now);
    await yaroc.sendPunch({ punch: { code: 77, card: 8_621_484, mode: 2, time }, macAddress: mac }, now); // retried
    // The organiser adds its unit to the event (admin here; the owner in real life).
    const ev = (await (await fetch(`${base}/api/rest/v1/events/${eventId}`)).json()) as {
      name: string;
      public: boolean;
      modems: string[];
      from: number;
      to: number;
    };
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

    const simple = (
      await (
        await fetch(`${base}/api/rest/v1/public/events/${eventId}/punches?afterId=${id - 1}&projection=simple`, {
          headers: { Accept: 'text/csv' },
        })
      ).text()
    ).split('\n');
    expect(simple[1]).toBe(`${id},${mac},8621484,${Date.UTC(2020, 1, 1, 21, 30, 15, 456)},77,BcControl,${simple[1].split(',')[6]}`);
    const center = (await (await fetch(`${base}/api/rest/v1/punches?eventId=${eventId}&afterId=${id - 1}`)).json()) as {
      id: number;
    }[];
    expect(center.map((p) => p.id)).toEqual([id]);
    const status = (await (await fetch(`${base}/api/rest/v1/events/${eventId}/status`)).json()) as {
      recent: { id: number }[];
      modems: { serial: string }[];
    };
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
  it(
    'MeOS (ROC), fartOLa and an SI Center poller each receive every punch exactly once',
    async () => {
      const macs = ['b827eb5a0101', 'b827eb5a0102'];
      // Register the units (first post) and add them to the event before the run.
      for (const m of macs) {
        const y = new YarocRocClient(`${base}/roc/key/${club.key}/sendpunches_v2.php`);
        await y.sendPunch(
          {
            punch: { code: 80, card: 1, mode: 3, time: { y: 2020, mo: 2, d: 1, h: 22, mi: 0, s: 0, us: 0 } },
            macAddress: m,
          },
          { y: 2020, mo: 2, d: 1, h: 22, mi: 0, s: 0, us: 0 },
        );
      }
      const ev = (await (await fetch(`${base}/api/rest/v1/events/${eventId}`)).json()) as {
        name: string;
        public: boolean;
        modems: string[];
        from: number;
        to: number;
      };
      await fetch(`${base}/api/rest/v1/events/${eventId}`, {
        method: 'PUT',
        headers: { apikey: ctx.adminKey, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          name: ev.name,
          public: ev.public,
          modems: [...ev.modems, ...macs],
          from: ev.from,
          to: ev.to,
        }),
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
          const page = (await (await fetch(`${base}/api/rest/v1/public/events/${eventId}/punches?afterId=${centerAfter}&projection=simple`)).json()) as {
            id: number;
          }[];
          for (const p of page) center.push(p.id);
          if (page.length > 0) centerAfter = page[page.length - 1].id;
          return page.length;
        }),
      ];
      let clock = Date.UTC(2020, 1, 1, 22, 30);
      const demoModems = (await eventModems())
        .filter((m) => /^2020\d{3}$/.test(m))
        .slice(0, 3)
        .map(Number);
      expect(demoModems.length).toBe(3);
      const modems = demoModems.map(async (serial) => {
        for (let b = 0; b < 8; b++) {
          const batch = Array.from({ length: 10 }, (_, i) => ({
            modem: String(serial),
            card: String(7_000_000 + b * 10 + i),
            time: (clock += 1000),
            code: serial - 2_020_000,
            type: 'Control',
          }));
          await modemUpload(batch);
        }
      });
      const units = macs.map(async (mac, u) => {
        const y = new YarocRocClient(`${base}/roc/key/${club.key}/sendpunches_v2.php`);
        for (let i = 0; i < 25; i++) {
          const t = new Date((clock += 1000) + u);
          const time: PyDateTime = {
            y: 2020,
            mo: 2,
            d: 1,
            h: t.getUTCHours(),
            mi: t.getUTCMinutes(),
            s: t.getUTCSeconds(),
            us: t.getUTCMilliseconds() * 1000,
          };
          await y.sendPunch({ punch: { code: 90 + u, card: 6_000_000 + i, mode: 2, time }, macAddress: mac }, time);
        }
      });
      await Promise.all([...modems, ...units]);
      await waitUntilVisible(ctx);
      done = true;
      await Promise.all(readers);

      const expected = await eventPunchIds();
      expect(expected.length).toBeGreaterThanOrEqual(7759 + 3 * 80 + 2 * 25);
      expectEachOnce(
        meos.punches.map((p) => p.punchId),
        expected,
      );
      expectEachOnce(f.storedIds(), expected);
      expectEachOnce(center, expected);
      expect(f.malformed + f.duplicates + meos.invalidTimes).toBe(0);
    },
    testTime(120_000),
  );
});
