/**
 * The ROC protocol beside the SPORTident Center API (docs/roc.md), against the real app on real HTTP and a real
 * PostgreSQL: the read's exact text, `lastId` polling, the `date`/`time` bound, access with the key in the path
 * (never in a log line), radio-unit uploads (yaroc's form) with idempotent re-sends and clear refusals. Both
 * directions across protocols: roc.both-ways.test.ts.
 */
import { Writable } from 'node:stream';
import request from 'supertest';
import { createApp } from '../src/app';
import { createLogger } from '@sports-timing/shared';
import { localMs, startTiming, upload, type TestUser, type TimingTestContext } from './helpers';
import { rocRows, UNIT, yarocForm } from './roc-clients';
import { testTime } from '@sports-timing/shared/src/test-time';

let ctx: TimingTestContext;
let owner: TestUser;
let other: TestUser;
/** A public event with modems and the ROC unit b827eb000001 (no window). */
let publicEvent: number;
/** A private event of `owner` with modem P-1. */
let privateEvent: number;

async function createEvent(key: string, body: object): Promise<number> {
  const res = await request(ctx.app).post('/api/rest/v1/events').set('apikey', key).send(body).expect(201);
  return res.body.id as number;
}

function postForm(key: string, form: Record<string, string>, file = 'sendpunches_v2.php') {
  return request(ctx.app).post(`/roc/key/${key}/${file}`).type('form').send(form);
}

beforeAll(async () => {
  ctx = await startTiming();
  owner = await ctx.createUser('roc-owner');
  other = await ctx.createUser('roc-other');
  publicEvent = await createEvent(owner.key, { name: 'ROC public', public: true, modems: ['R-1', 'R-2', UNIT] });
  privateEvent = await createEvent(owner.key, { name: 'ROC private', public: false, modems: ['P-1'] });
}, testTime(60_000));
afterAll(async () => ctx?.close());

describe('ROC read (getRocPunches)', () => {
  it('answers the exact text: id;code;card;local time, CRLF, no header, ascending, only ids above lastId', async () => {
    await upload(ctx, owner.key, [
      { modem: 'R-1', card: '9790916', time: localMs(9, 0, 5) + 250, code: 31, type: 'Control' },
      { modem: 'R-2', card: '0123', time: localMs(9, 1), code: 32, type: 'Control' },
      { modem: 'X-9', card: '5', time: localMs(9, 2), code: 33, type: 'Control' },
    ]);
    const ids = (await ctx.database.pool.query<{ id: string }>(`select id from punches where modem in ('R-1','R-2') order by id`)).rows.map((r) =>
      Number(r.id),
    );
    const res = await request(ctx.app).get(`/getpunches.asp?unitId=${publicEvent}&lastId=0`).expect(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.text).toBe(`${ids[0]};31;9790916;2020-02-01 09:00:05\r\n${ids[1]};32;123;2020-02-01 09:01:00\r\n`);
    const after = await request(ctx.app).get(`/getpunches.asp?unitId=${publicEvent}&lastId=${ids[0]}`).expect(200);
    expect(after.text).toBe(`${ids[1]};32;123;2020-02-01 09:01:00\r\n`);
    const caughtUp = await request(ctx.app).get(`/getpunches.asp?unitId=${publicEvent}&lastId=${ids[1]}`).expect(200);
    expect(caughtUp.text).toBe('');
  });

  it('date and time bound the punch time in local wall clock, inclusive; date alone is its midnight', async () => {
    const all = rocRows((await request(ctx.app).get(`/getpunches.asp?unitId=${publicEvent}&lastId=0`).expect(200)).text);
    const at = async (q: string) => {
      const res = await request(ctx.app).get(`/getpunches.asp?unitId=${publicEvent}&lastId=0&${q}`);
      expect([q, res.status, res.status === 200 ? '' : res.text]).toEqual([q, 200, '']);
      return res;
    };
    expect(rocRows((await at('date=2020-02-01&time=09:01:00')).text).map((r) => r.code)).toEqual([32]);
    expect(rocRows((await at('date=2020-02-01&time=9:00:05')).text).length).toBe(all.length);
    expect(rocRows((await at('date=2020-02-01&time=09:01:01')).text)).toEqual([]);
    expect(rocRows((await at('date=2020-02-01')).text).length).toBe(all.length);
    expect(rocRows((await at('date=2020-02-02')).text)).toEqual([]);
  });

  it('refuses bad parameters with 400 and an unknown event with 404; ignores cache busters; any case of the file name', async () => {
    const bad = [
      'lastId=0',
      `unitId=${publicEvent}`,
      `unitId=a,b&lastId=0`,
      `unitId=-x&lastId=0`,
      `unitId=${publicEvent}&lastId=-1`,
      `unitId=${publicEvent}&lastId=0&time=09:00:00`,
      `unitId=${publicEvent}&lastId=0&date=2020-02-30`,
      `unitId=${publicEvent}&lastId=0&date=2020-13-01`,
      `unitId=${publicEvent}&lastId=0&date=2020-02-01&time=25:00:00`,
    ];
    for (const q of bad) {
      const res = await request(ctx.app).get(`/getpunches.asp?${q}`);
      expect([q, res.status, res.headers['content-type']]).toEqual([q, 400, expect.stringContaining('application/problem+json')]);
    }
    await request(ctx.app).get('/getpunches.asp?unitId=999999&lastId=0').expect(404);
    const plain = (await request(ctx.app).get(`/getpunches.asp?unitId=${publicEvent}&lastId=0`).expect(200)).text;
    expect((await request(ctx.app).get(`/getpunches.asp?unitId=${publicEvent}&lastId=0&_=1700000000`).expect(200)).text).toBe(plain);
    expect((await request(ctx.app).get(`/getPunches.asp?unitId=${publicEvent}&lastId=0`).expect(200)).text).toBe(plain);
    expect((await request(ctx.app).get(`/GETPUNCHES.ASP?unitId=${publicEvent}&lastId=0`).expect(200)).text).toBe(plain);
    await request(ctx.app).head(`/getpunches.asp?unitId=${publicEvent}&lastId=0`).expect(200);
  });

  it('a private event: 404 without a key, read with the key in the path, 401 for an unknown key, 404 for another user', async () => {
    await upload(ctx, owner.key, [{ modem: 'P-1', card: '77', time: localMs(10), code: 40, type: 'Control' }]);
    await request(ctx.app).get(`/getpunches.asp?unitId=${privateEvent}&lastId=0`).expect(404);
    const withKey = await request(ctx.app).get(`/roc/key/${owner.key}/getpunches.asp?unitId=${privateEvent}&lastId=0`).expect(200);
    expect(rocRows(withKey.text).map((r) => [r.code, r.card])).toEqual([[40, 77]]);
    await request(ctx.app).get(`/roc/key/${ctx.adminKey}/getPunches.asp?unitId=${privateEvent}&lastId=0`).expect(200);
    const unknown = await request(ctx.app)
      .get(`/roc/key/tk_${'A'.repeat(43)}/getpunches.asp?unitId=${privateEvent}&lastId=0`)
      .expect(401);
    expect(unknown.text).not.toContain('A'.repeat(43));
    await request(ctx.app).get(`/roc/key/${other.key}/getpunches.asp?unitId=${privateEvent}&lastId=0`).expect(404);
    // The header works on the keyless path too.
    await request(ctx.app).get(`/getpunches.asp?unitId=${privateEvent}&lastId=0`).set('apikey', owner.key).expect(200);
  });

  it('unitId that is not all digits names one unit (modem or ROC unit): readable as getPunches by modem', async () => {
    await postForm(owner.key, yarocForm({ code: 35, card: 42, mode: 2, date: '2020-02-01', time: '08:00:00', ms: '001' })).expect(200);
    await upload(ctx, owner.key, [{ modem: 'R-1', card: '43', time: localMs(8), code: 36, type: 'Control' }]);
    const unit = rocRows((await request(ctx.app).get(`/getpunches.asp?unitId=${UNIT}&lastId=0`).expect(200)).text);
    const expected = (await ctx.database.pool.query<{ id: string }>('select id from punches where modem = $1 order by id', [UNIT])).rows.map((r) =>
      Number(r.id),
    );
    expect(unit.map((r) => r.id)).toEqual(expected);
    expect(unit.some((r) => r.code === 35 && r.card === 42 && r.at === '2020-02-01 08:00:00')).toBe(true);
    // A unit of no public event answers nothing without its owner's key, as an unknown one.
    expect((await request(ctx.app).get('/getpunches.asp?unitId=P-1&lastId=0').expect(200)).text).toBe('');
    expect((await request(ctx.app).get('/getpunches.asp?unitId=NO-SUCH&lastId=0').expect(200)).text).toBe('');
    expect(rocRows((await request(ctx.app).get(`/roc/key/${owner.key}/getpunches.asp?unitId=P-1&lastId=0`).expect(200)).text).length).toBe(1);
    // MeOS sends a typed MAC as it is, colons unencoded.
    await request(ctx.app).get('/getpunches.asp?unitId=b8:27:eb:00:00:01&lastId=0').expect(200, '');
  });

  it(
    'the first answer holds the whole event beyond 10,000 punches (gap-free pages); the next poll only the new punches',
    async () => {
      const ev = await createEvent(owner.key, { name: 'ROC big', public: true, modems: ['BIG-1'] });
      const punches = Array.from({ length: 10_500 }, (_, i) => ({
        modem: 'BIG-1',
        card: String(10_000 + i),
        time: localMs(8) + i * 1000,
        code: 99,
        type: 'Control',
      }));
      await upload(ctx, owner.key, punches.slice(0, 6000));
      await upload(ctx, owner.key, punches.slice(6000));
      const ids = async () =>
        (await ctx.database.pool.query<{ id: string }>(`select id from punches where modem = 'BIG-1' order by id`)).rows.map((r) => Number(r.id));
      const expected = await ids();
      const first = rocRows((await request(ctx.app).get(`/getpunches.asp?unitId=${ev}&lastId=0`).expect(200)).text);
      expect(first.length).toBe(10_500);
      expect(first.map((r) => r.id)).toEqual(expected);
      const last = first[first.length - 1].id;
      await upload(ctx, owner.key, [
        { modem: 'BIG-1', card: '1', time: localMs(12), code: 98, type: 'Control' },
        { modem: 'BIG-1', card: '2', time: localMs(12, 1), code: 98, type: 'Control' },
      ]);
      const rest = rocRows((await request(ctx.app).get(`/getpunches.asp?unitId=${ev}&lastId=${last}`).expect(200)).text);
      expect(rest.map((r) => r.id)).toEqual((await ids()).slice(10_500));
      expect(rest.map((r) => r.card)).toEqual([1, 2]);
    },
    testTime(60_000),
  );

  it('the key in the path never reaches a log line', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const app = createApp({ database: ctx.database, logger: createLogger('roc-log', 'info', sink), fastLane: true });
    await request(app).get(`/roc/key/${owner.key}/getpunches.asp?unitId=${privateEvent}&lastId=0`).expect(200);
    await request(app).get(`/roc/key/${owner.key}/getpunches.asp?unitId=a,b&lastId=0`).expect(400);
    await request(app).post(`/roc/key/${owner.key}/sendpunches_v2.php`).type('form').send({ macaddr: UNIT }).expect(400);
    const log = lines.join('');
    expect(log).toContain('/roc/key/***/getpunches.asp');
    expect(log).toContain('/roc/key/***/sendpunches_v2.php');
    expect(log).not.toContain(owner.key);
    expect(log).not.toContain(owner.key.slice(3, 20));
  });
});

describe('ROC write (postRocPunches, yaroc form)', () => {
  it('stores the punch with its milliseconds, registers the unit to the key owner, answers OK; a re-send is stored once', async () => {
    const form = yarocForm({ code: 31, card: 8621484, mode: 2, date: '2020-02-01', time: '19:16:03', ms: '125' });
    const res = await postForm(owner.key, form).expect(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.text).toBe('OK\r\n');
    await postForm(owner.key, form).expect(200, 'OK\r\n');
    const rows = (await ctx.database.pool.query(`select card, code, time, type, modem from punches where modem = $1 and code = 31`, [UNIT])).rows;
    expect(rows).toEqual([{ card: '8621484', code: 31, time: Date.UTC(2020, 1, 1, 19, 16, 3, 125), type: 'Control', modem: UNIT }]);
    const modems = await request(ctx.app).get('/api/rest/v1/modems').set('apikey', owner.key).expect(200);
    expect(modems.body.map((m: { serial: string }) => m.serial)).toContain(UNIT);
  });

  it('station modes give the type; ms1 absent is 0', async () => {
    const mac = 'b827eb0000aa';
    for (const [mode, code] of [
      [3, 1],
      [4, 2],
      [7, 3],
      [10, 4],
      [5, 5],
    ] as const) {
      const { ms1: _ms, ...form } = yarocForm({
        code,
        card: 500,
        mode,
        date: '2020-02-01',
        time: '10:00:00',
        ms: '0',
        mac,
      });
      await postForm(owner.key, form).expect(200);
    }
    const rows = (await ctx.database.pool.query(`select code, type, time from punches where modem = $1 order by code`, [mac])).rows;
    expect(rows.map((r) => r.type)).toEqual(['Start', 'Finish', 'Clear', 'Check', 'Unknown']);
    expect(new Set(rows.map((r) => r.time))).toEqual(new Set([localMs(10)]));
  });

  it('refuses clearly and stores nothing: missing or bad fields, a second punch index, a card above 24 bits, no or unknown key, another user’s unit', async () => {
    const before = Number((await ctx.database.pool.query('select count(*) n from punches')).rows[0].n);
    const good = yarocForm({
      code: 44,
      card: 1234,
      mode: 2,
      date: '2020-02-01',
      time: '11:00:00',
      ms: '5',
      mac: 'b827eb0000bb',
    });
    const cases: [Record<string, string>, string][] = [
      [{ ...good, control1: '' }, 'control1'],
      [{ ...good, control1: '70000' }, 'control1'],
      [{ ...good, sinumber1: '16777216' }, 'sinumber1'],
      [{ ...good, date1: '2020-02-30' }, 'date1'],
      [{ ...good, date1: '1969-12-31' }, 'date1'],
      [{ ...good, sitime1: '24:00:00' }, 'sitime1'],
      [{ ...good, ms1: '1000' }, 'ms1'],
      [{ ...good, macaddr: 'b8:27,eb' }, 'macaddr'],
      [{ ...good, control2: '45', sinumber2: '1', date2: '2020-02-01', sitime2: '11:00:01' }, 'control2'],
    ];
    for (const [form, field] of cases) {
      const res = await postForm(owner.key, form);
      expect([field, res.status]).toEqual([field, 400]);
      expect(Object.keys(res.body.errors ?? {}).join(' ')).toContain(field);
    }
    const { sinumber1: _c, ...noCard } = good;
    expect((await postForm(owner.key, noCard).expect(400)).body.errors).toBeDefined();
    await request(ctx.app).post(`/roc/key/${owner.key}/sendpunches_v2.php`).set('Content-Type', 'application/json').send(JSON.stringify(good)).expect(415);
    await postForm(`tk_${'B'.repeat(43)}`, good).expect(401);
    await postForm('nokey', good).expect(401);
    const foreign = await postForm(other.key, yarocForm({ code: 31, card: 1, mode: 2, date: '2020-02-01', time: '12:00:00', ms: '0' })).expect(403);
    expect(foreign.body.modems).toEqual([UNIT]);
    expect(Number((await ctx.database.pool.query('select count(*) n from punches')).rows[0].n)).toBe(before);
    await postForm(owner.key, good, 'SendPunches_V2.php').expect(200);
    // Field names like Object.prototype members are plain unknown fields: ignored, never a 500.
    const hostile = `__proto__=x&constructor=y&hasOwnProperty=z&${new URLSearchParams({ ...good, control1: '46' }).toString()}`;
    await request(ctx.app).post(`/roc/key/${owner.key}/sendpunches_v2.php`).type('form').send(hostile).expect(200);
  });
});
