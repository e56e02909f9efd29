/**
 * Uploading punches (docs/decisions.md §5): JSON, CSV, gzip, duplicates, invalid punches rejected one by one, limits and encodings,
 * concurrent re-sends, and the NOTIFY after commit (modem ownership: punches.upload-modems.test.ts).
 */
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import request from 'supertest';
import { loadSpec, resolveRef } from '@sports-timing/shared';
import { compilePunchCsvParser } from '../src/punches/punches.csv';
import { uploadPunches } from '../src/punches/punches.service';
import { SPEC_FILE } from '../src/version';
import { authenticateKey } from '../src/users/users.service';
import {
  CSV_HEADER,
  expectPunchArray,
  localMs,
  postRaw,
  punchCount,
  startTiming,
  upload,
  waitUntilVisible,
  type TestUser,
  type TimingTestContext,
} from './helpers';

let ctx: TimingTestContext;
let alice: TestUser;

beforeAll(async () => {
  ctx = await startTiming();
  alice = await ctx.createUser('alice');
});
afterAll(async () => ctx.close());

const punch = (over: Record<string, unknown> = {}) => ({ card: '8000001', time: localMs(19), code: 31, type: 'Control', modem: 'A-1', ...over });

async function readModem(modem: string) {
  await waitUntilVisible(ctx);
  const res = await request(ctx.app).get(`/api/rest/v1/punches?modem=${modem}`).set('apikey', ctx.adminKey).expect(200);
  expectPunchArray(res.body);
  return res.body;
}

describe('JSON', () => {
  it('stores punches with server-assigned id and receptionTimeUtc', async () => {
    const before = Date.now();
    const res = await request(ctx.app)
      .post('/api/rest/v1/punches')
      .set('apikey', alice.key)
      .send([punch(), punch({ code: 32, time: localMs(19, 1) }), punch({ type: 'Finish', code: 100, time: localMs(19, 2) })])
      .expect(200);
    expect(res.body).toEqual({ received: 3, stored: 3, duplicates: 0, rejected: [] });
    const stored = await readModem('A-1');
    expect(stored.map((p) => p.code)).toEqual([31, 32, 100]);
    for (const p of stored) {
      expect(p.receptionTimeUtc).toBeGreaterThanOrEqual(before);
      expect(p.receptionTimeUtc).toBeLessThanOrEqual(Date.now());
      expect(p.card).toBe('8000001');
    }
  });

  it('stores a re-sent punch once, also within one batch and with the card as integer or with leading zeros', async () => {
    const p = punch({ modem: 'A-2' });
    expect(await upload(ctx, alice.key, [p])).toEqual({ received: 1, stored: 1, duplicates: 0, rejected: [] });
    expect(await upload(ctx, alice.key, [p])).toEqual({ received: 1, stored: 0, duplicates: 1, rejected: [] });
    const q = punch({ modem: 'A-2', code: 40 });
    expect(await upload(ctx, alice.key, [q, q, { ...q, card: 8000001 }, { ...q, card: '08000001' }, p])).toEqual({
      received: 5,
      stored: 1,
      duplicates: 4,
      rejected: [],
    });
    expect(await readModem('A-2')).toHaveLength(2);
  });

  it('accepts an empty batch', async () => {
    expect(await upload(ctx, alice.key, [])).toEqual({ received: 0, stored: 0, duplicates: 0, rejected: [] });
  });

  it('stores the valid punches of a batch and reports each invalid one with its index and reason; a re-send is harmless', async () => {
    const before = await punchCount(ctx);
    const batch = [
      punch({ modem: 'A-3' }),
      punch({ modem: 'A-3', code: 70000 }),
      punch({ modem: 'A-3', card: '16777216', time: localMs(19, 5) }),
      punch({ modem: 'A-3', code: 41 }),
    ];
    const res = await request(ctx.app).post('/api/rest/v1/punches').set('apikey', alice.key).send(batch).expect(200);
    expect(res.body).toEqual({
      received: 4,
      stored: 2,
      duplicates: 0,
      rejected: [
        { index: 1, reason: 'code: must be an integer from 0 to 65535' },
        { index: 2, reason: 'card: must be at most 16777215: no SPORTident card carries a larger number' },
      ],
    });
    expect(await punchCount(ctx)).toBe(before + 2);
    // The uploader re-sends the same batch (it never learns which punches were the bad ones): nothing new.
    const again = await request(ctx.app).post('/api/rest/v1/punches').set('apikey', alice.key).send(batch).expect(200);
    expect(again.body).toMatchObject({ received: 4, stored: 0, duplicates: 2 });
    expect(again.body.rejected.map((r: { index: number }) => r.index)).toEqual([1, 2]);
    expect(await punchCount(ctx)).toBe(before + 2);
    expect((await readModem('A-3')).map((p) => p.code).sort()).toEqual([31, 41]);
    const cases: [Record<string, unknown> | number | null, RegExp][] = [
      [{ type: 'Lap' }, /^type: must be one of Unknown, /],
      [{ card: 'abc' }, /^card: must be 1 to 10 decimal digits$/],
      [{ time: -5 }, /^time: must be an integer from 0 to /],
      [{ modem: 'a,b' }, /^modem: must match /],
      [{ extra: 1 }, /^unknown properties: a punch has only card, time, code, type, modem$/],
      [{ card: undefined }, /^card: is required$/],
      [{ code: '31' }, /^code: must be an integer/],
      [{ card: true, code: 1.5 }, /^card: .*; code: must be an integer/],
    ];
    for (const [bad, reason] of cases) {
      const r = await request(ctx.app)
        .post('/api/rest/v1/punches')
        .set('apikey', alice.key)
        .send([punch({ modem: 'A-3' }), punch({ modem: 'A-3', ...(bad as object) })])
        .expect(200);
      expect(r.body).toMatchObject({ received: 2, stored: 0, duplicates: 1 });
      expect(r.body.rejected).toHaveLength(1);
      expect(r.body.rejected[0].index).toBe(1);
      expect(r.body.rejected[0].reason).toMatch(reason);
    }
    for (const element of [7, null, 'card', [punch()]]) {
      const r = await request(ctx.app).post('/api/rest/v1/punches').set('apikey', alice.key).send([element]).expect(200);
      expect(r.body).toEqual({
        received: 1,
        stored: 0,
        duplicates: 0,
        rejected: [{ index: 0, reason: 'must be an object with card, time, code, type, modem' }],
      });
    }
    expect(await punchCount(ctx)).toBe(before + 2);
    // Not an array at all: the batch itself is refused.
    await request(ctx.app).post('/api/rest/v1/punches').set('apikey', alice.key).send(punch()).expect(400);
  });

  it('limits a batch to 10,000 punches', async () => {
    const batch = Array.from({ length: 10_001 }, (_, i) => punch({ modem: 'A-4', time: i }));
    const res = await request(ctx.app).post('/api/rest/v1/punches').set('apikey', alice.key).send(batch).expect(400);
    expect(res.body.status).toBe(400);
  });
});

describe('CSV', () => {
  it('stores the download format, ignoring id and receptionTimeUtc, any column order', async () => {
    const csv = [CSV_HEADER, `7,8000002,${localMs(19)},31,Control,C-1,1`, `8,8000002,${localMs(19, 1)},32,Control,C-1,2`, ''].join('\n');
    const res = await request(ctx.app).post('/api/rest/v1/punches').set('apikey', alice.key).set('Content-Type', 'text/csv').send(csv).expect(200);
    expect(res.body).toEqual({ received: 2, stored: 2, duplicates: 0, rejected: [] });
    const reordered = ['modem,type,code,time,card', `C-1,Start,1,${localMs(18)},8000002`].join('\r\n');
    await request(ctx.app).post('/api/rest/v1/punches').set('apikey', alice.key).set('Content-Type', 'text/csv; charset=utf-8').send(reordered).expect(200);
    const stored = await readModem('C-1');
    expect(stored.map((p) => p.type)).toEqual(['Control', 'Control', 'Start']);
    expect(stored[0].id).not.toBe(7);
    expect(stored[0].receptionTimeUtc).toBeGreaterThan(1000);
  });

  it('stores the valid rows and reports each invalid row with its index and reason', async () => {
    const before = await punchCount(ctx);
    const csv = ['card,time,code,type,modem', `1,${localMs(19)},31,Control,C-2`, `x,${localMs(19)},31,Control,C-2`, '2,-1,99999,Lap,C-2'].join('\n');
    const res = await request(ctx.app).post('/api/rest/v1/punches').set('apikey', alice.key).set('Content-Type', 'text/csv').send(csv).expect(200);
    expect(res.body).toMatchObject({ received: 3, stored: 1, duplicates: 0 });
    expect(res.body.rejected).toEqual([
      { index: 1, reason: 'card: must be 1 to 10 decimal digits' },
      { index: 2, reason: expect.stringMatching(/^time: must be an integer .*; code: must be an integer from 0 to 65535; type: must be one of /) },
    ]);
    expect(await punchCount(ctx)).toBe(before + 1);
  });

  it('rejects a bad header, a ragged row and too many rows', async () => {
    const post = (csv: string) => request(ctx.app).post('/api/rest/v1/punches').set('apikey', alice.key).set('Content-Type', 'text/csv').send(csv);
    expect((await post('card,time,code,type\n1,2,3,Control').expect(400)).body.errors.header).toEqual(['column modem is required']);
    expect((await post('card,time,code,type,modem,colour\n1,2,3,Control,C-3,red').expect(400)).body.errors.header).toEqual(['unknown column colour']);
    await post('card,time,code,type,modem\n1,2,3,Control').expect(400);
    const rows = Array.from({ length: 10_001 }, (_, i) => `1,${i},31,Control,C-3`);
    await post(['card,time,code,type,modem', ...rows].join('\n')).expect(400);
  });
});

describe('CSV rules from the spec', () => {
  it('follow the spec they are compiled from: PunchType values, limits, the modem pattern; the card range stays', () => {
    const spec = loadSpec(SPEC_FILE);
    const schemas = (spec.components as { schemas: Record<string, Record<string, unknown>> }).schemas;
    (schemas.PunchType.enum as string[]).push('Lap');
    (schemas.NewPunch.properties as Record<string, Record<string, unknown>>).code.maximum = 999;
    resolveRef(spec, schemas.ModemSerial).pattern = '^[A-Z]{1,3}$';
    const parse = compilePunchCsvParser(spec);
    const csv = (...rows: string[]) => ['card,time,code,type,modem', ...rows].join('\n');
    expect(parse(csv('17,5,999,Lap,ABC'), 10)).toEqual({ punches: [{ card: '17', time: 5, code: 999, type: 'Lap', modem: 'ABC' }], rejected: [] });
    const refused = (row: string) => {
      const r = parse(csv(row), 10);
      if (r.punches.length > 0) throw new Error(`accepted ${row}`);
      return r.rejected;
    };
    expect(refused('17,5,1000,Lap,ABC')).toEqual([{ index: 0, reason: 'code: must be an integer from 0 to 999' }]);
    expect(refused('17,5,1,Control,A-1')).toEqual([{ index: 0, reason: 'modem: must match ^[A-Z]{1,3}$' }]);
    expect(refused('16777216,5,1,Lap,ABC')).toEqual([{ index: 0, reason: 'card: must be at most 16777215: no SPORTident card carries a larger number' }]);
    // The spec as shipped: every PunchType value and the time bound of NewPunch.
    const shipped = compilePunchCsvParser(loadSpec(SPEC_FILE));
    expect(shipped(csv('1,5,1,Lap,A-1'), 10).rejected).toHaveLength(1);
    expect(shipped(csv('1,253402300799999,1,Clear,A-1'), 10).punches).toHaveLength(1);
    expect(shipped(csv('1,253402300800000,1,Clear,A-1'), 10).rejected).toHaveLength(1);
    // A keyword the check cannot apply stops the app from being built.
    schemas.ModemSerial.format = 'hostname';
    expect(() => compilePunchCsvParser(spec)).toThrow(/format/);
  });
});

describe('gzip uploads and limits', () => {
  const gz = (type: string) => ({ apikey: alice.key, 'Content-Type': type, 'Content-Encoding': 'gzip' });

  it('accepts gzip-compressed JSON and CSV', async () => {
    const json = gzipSync(JSON.stringify([punch({ modem: 'G-1' })]));
    let res = await postRaw(ctx.app, '/api/rest/v1/punches', gz('application/json'), json);
    expect(res).toMatchObject({ status: 200, body: { received: 1, stored: 1, duplicates: 0 } });
    const csv = gzipSync(`card,time,code,type,modem\n5,${localMs(19)},33,Control,G-1\n`);
    res = await postRaw(ctx.app, '/api/rest/v1/punches', gz('text/csv'), csv);
    expect(res).toMatchObject({ status: 200, body: { received: 1, stored: 1, duplicates: 0 } });
  });

  it('answers 413 when the inflated body exceeds 10 MiB, however small the gzip', async () => {
    const bomb = gzipSync(`[${' '.repeat(11 * 1024 * 1024)}]`);
    expect(bomb.length).toBeLessThan(64 * 1024);
    const res = await postRaw(ctx.app, '/api/rest/v1/punches', gz('application/json'), bomb);
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    // Just under the limit inflates fine (and is then a valid, empty batch).
    const fits = await postRaw(ctx.app, '/api/rest/v1/punches', gz('application/json'), gzipSync(`[${' '.repeat(10 * 1024 * 1024 - 16)}]`));
    expect(fits).toMatchObject({ status: 200, body: { received: 0 } });
  });

  it('answers 400 for a body that is not gzip despite the header', async () => {
    const res = await postRaw(ctx.app, '/api/rest/v1/punches', gz('application/json'), Buffer.from('[]'));
    expect(res.status).toBe(400);
  });

  it.each(['br', 'deflate', 'compress', 'x-unknown'])('answers 415 for Content-Encoding %s', async (enc) => {
    const res = await postRaw(
      ctx.app,
      '/api/rest/v1/punches',
      { apikey: alice.key, 'Content-Type': 'application/json', 'Content-Encoding': enc },
      Buffer.from('[]'),
    );
    expect(res).toMatchObject({ status: 415, body: { status: 415 } });
  });

  it('answers 415 for an unsupported content type, naming the media types uploadPunches takes (from the spec)', async () => {
    const res = await request(ctx.app).post('/api/rest/v1/punches').set('apikey', alice.key).set('Content-Type', 'text/plain').send('hello').expect(415);
    const spec = loadSpec(SPEC_FILE) as { paths: Record<string, { post: { requestBody: { content: Record<string, unknown> } } }> };
    const types = Object.keys(spec.paths['/api/rest/v1/punches'].post.requestBody.content);
    expect(types).toEqual(expect.arrayContaining(['application/json', 'text/csv']));
    expect(res.body.detail).toBe(`This operation takes ${types.slice(0, -1).join(', ')} or ${types[types.length - 1]}; the request was sent as text/plain.`);
    expect(res.body.detail).not.toMatch(/api\.rest/);
  });

  it('answers 401 naming the apikey header, and what is wrong with Authorization: Bearer', async () => {
    const csv = 'card,code,time,type,modem\n1,31,2020-02-01 19:00:00.000,Control,3000031\n';
    const none = await request(ctx.app).post('/api/rest/v1/punches').set('Content-Type', 'text/csv').send(csv).expect(401);
    expect(none.body.detail).toBe('An API key is required in the apikey header (apikey: tk_…).');
    const bearer = await request(ctx.app)
      .post('/api/rest/v1/punches')
      .set('Authorization', `Bearer ${alice.key}`)
      .set('Content-Type', 'text/csv')
      .send(csv)
      .expect(401);
    expect(bearer.body.detail).toBe('An API key is required in the apikey header (apikey: tk_…); this service does not read Authorization: Bearer.');
    // Positive control: the same key in the apikey header is taken.
    await request(ctx.app).post('/api/rest/v1/punches').set('apikey', alice.key).set('Content-Type', 'text/csv').send(csv).expect(200);
  });
});

describe('concurrent uploads of the same punches', () => {
  it('stores overlapping batches sent at once in opposite orders exactly once each, without deadlock', async () => {
    const deps = ctx.timing.punches;
    const caller = await authenticateKey(ctx.database.db, alice.key, ctx.keyUses);
    await uploadPunches(deps, caller, [{ card: '1', time: localMs(6), code: 31, type: 'Control', modem: 'DL-1' }], Date.now());
    for (let round = 0; round < 15; round++) {
      const batch = Array.from({ length: 300 }, (_, i) => ({
        card: String(800_000 + round * 1000 + i),
        time: localMs(7) + i,
        code: 31,
        type: 'Control' as const,
        modem: 'DL-1',
      }));
      const results = await Promise.all([batch, [...batch].reverse(), batch, [...batch].reverse()].map((b) => uploadPunches(deps, caller, b, Date.now())));
      expect(results.reduce((n, r) => n + r.stored, 0)).toBe(300);
    }
    const { rows } = await ctx.database.pool.query<{ n: number; distinct_cards: number }>(
      `select count(*)::int as n, count(distinct card)::int as distinct_cards from punches where modem = 'DL-1'`,
    );
    expect(rows[0]).toEqual({ n: 15 * 300 + 1, distinct_cards: 15 * 300 + 1 });
  });
});

describe('notification', () => {
  it('sends NOTIFY punches with the highest new id after the commit', async () => {
    const listener = new pg.Client({ connectionString: ctx.testDb.url });
    await listener.connect();
    try {
      await listener.query('listen punches');
      const got = new Promise<string>((resolve) => listener.once('notification', (n) => resolve(n.payload ?? '')));
      await upload(ctx, alice.key, [punch({ modem: 'N-1' }), punch({ modem: 'N-1', code: 35 })]);
      const payload = await got;
      const stored = await readModem('N-1');
      expect(Number(payload)).toBe(stored[1].id);
    } finally {
      await listener.end();
    }
  });
});
