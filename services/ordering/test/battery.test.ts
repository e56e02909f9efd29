import request from 'supertest';
import { addYears, isCalendarDate } from '../src/battery/battery.service';
import { loadDemoCatalog } from '../src/demo/catalog';
import { startOrdering, type OrderingTestContext } from './support/app';

let ctx: OrderingTestContext;
let admin: string;
beforeAll(async () => {
  ctx = await startOrdering();
  await loadDemoCatalog(ctx.database.db);
  admin = await ctx.bearer({ roles: ['admin'], userGroup: 'internal' });
});
afterAll(async () => ctx.close());

const lookup = (cardNumber: string) => request(ctx.app).get(`/api/rest/v1/products/si-cards/${encodeURIComponent(cardNumber)}`);
const importCsv = (csv: string, auth: string | null = admin) => {
  const req = request(ctx.app).post('/api/rest/v1/maintenance/import-battery-dates').set('content-type', 'text/csv');
  if (auth) req.set('authorization', auth);
  return req.send(csv);
};

describe('battery lookup', () => {
  it('answers the two real cards exactly as in docs/decisions.md §6', async () => {
    const a = await lookup('8621484').expect(200);
    expect(a.headers['content-type']).toMatch(/application\/json/);
    expect(a.body).toEqual({ cardNumber: '8621484', batteryDate: '2020-01-15', replaceBefore: '2023-01-15' });
    expect((await lookup('8549150').expect(200)).body).toEqual({ cardNumber: '8549150', batteryDate: '2026-07-01', replaceBefore: '2029-07-01' });
  });

  it('accepts both client-id headers without letting them decide access', async () => {
    await lookup('8621484').set('X-Service-Client-Id', '<CLIENT_ID>').expect(200);
    await lookup('8621484').set('X-Sportident-Client-Id', 'some-old-client').expect(200);
    await lookup('8621484').set('X-Service-Client-Id', 'a').set('X-Sportident-Client-Id', 'b').expect(200);
  });

  it('answers 404 "SI-Card not found." for an active card without a record', async () => {
    const res = await lookup('8000002').expect(404);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.body).toMatchObject({ title: 'SI-Card not found.', status: 404 });
    expect(res.body.errors).toBeUndefined();
  });

  it.each(['7999999', '8000000', '9000000', '1234567', '0'])('answers 400 with errors.cardNumber for %s (outside 8000001–8999999)', async (n) => {
    const res = await lookup(n).expect(400);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.body).toMatchObject({
      title: 'One or more validation errors occurred.',
      status: 400,
      errors: { cardNumber: ['The card number must be between 8000001 and 8999999.'] },
    });
  });

  it.each(['abc', '8621484.5', '-8621484', '86214840000000000', '1e7', ' ', '8'.repeat(40)])(
    'answers 400 with errors.cardNumber for the non-integer %p',
    async (n) => {
      const res = await lookup(n).expect(400);
      expect(res.body).toMatchObject({ title: 'One or more validation errors occurred.', status: 400, errors: { cardNumber: [expect.any(String)] } });
    },
  );

  it('adds three calendar years, clamping 29 February', () => {
    expect(addYears('2020-01-15', 3)).toBe('2023-01-15');
    expect(addYears('2020-02-29', 3)).toBe('2023-02-28');
    expect(addYears('2021-02-28', 3)).toBe('2024-02-28');
    expect(isCalendarDate('2021-02-29')).toBe(false);
    expect(isCalendarDate('2024-02-29')).toBe(true);
    expect(isCalendarDate('2024-13-01')).toBe(false);
  });
});

describe('battery-date import', () => {
  it('upserts a CSV and reports counts; a retry changes nothing', async () => {
    const csv = 'cardNumber,batteryDate\n8300001,2024-02-29\n8300002,\n8621484,2020-01-15\n';
    expect((await importCsv(csv).expect(200)).body).toEqual({ rows: 3, inserted: 2, updated: 0, unchanged: 1 });
    expect((await lookup('8300001').expect(200)).body).toEqual({ cardNumber: '8300001', batteryDate: '2024-02-29', replaceBefore: '2027-02-28' });
    expect((await lookup('8300002').expect(200)).body).toEqual({ cardNumber: '8300002', batteryDate: null, replaceBefore: null });
    expect((await importCsv(csv).expect(200)).body).toEqual({ rows: 3, inserted: 0, updated: 0, unchanged: 3 });
    expect((await importCsv('\uFEFFcardNumber,batteryDate\r\n8300002,2025-05-05\r\n').expect(200)).body).toEqual({
      rows: 1,
      inserted: 0,
      updated: 1,
      unchanged: 0,
    });
    expect((await lookup('8300002').expect(200)).body.replaceBefore).toBe('2028-05-05');
  });

  it('validates the whole file first and stores nothing when a row is bad', async () => {
    const csv = ['cardNumber,batteryDate', '8400001,2024-01-01', '7000001,2024-01-01', 'abc,2024-13-01', '8400001,2020-01-01', '8400002'].join('\n');
    const res = await importCsv(csv).expect(400);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.body).toMatchObject({
      title: 'One or more validation errors occurred.',
      status: 400,
      errors: {
        'rows[2].cardNumber': ['The card number must be between 8000001 and 8999999.'],
        'rows[3].cardNumber': ["The value 'abc' is not valid."],
        'rows[3].batteryDate': ["'2024-13-01' is not a date (YYYY-MM-DD)."],
        'rows[4].cardNumber': ['Card 8400001 already appears in row 1.'],
        'rows[5]': ['Expected 2 columns, found 1.'],
      },
    });
    await lookup('8400001').expect(404);
  });

  it('requires the header row', async () => {
    const res = await importCsv('8400001,2024-01-01\n').expect(400);
    expect(res.body.errors.$).toEqual(['The first row must be the header "cardNumber,batteryDate".']);
  });

  it('is for admins only and takes text/csv', async () => {
    await importCsv('cardNumber,batteryDate\n', null).expect(401);
    await importCsv('cardNumber,batteryDate\n', await ctx.bearer({ roles: ['support'] })).expect(403);
    await request(ctx.app).post('/api/rest/v1/maintenance/import-battery-dates').set('authorization', admin).send({ cardNumber: 8400001 }).expect(415);
  });

  it('imports a large file in one statement', async () => {
    const lines = ['cardNumber,batteryDate'];
    for (let n = 8_700_001; n <= 8_720_000; n++) lines.push(`${n},2025-0${1 + (n % 9)}-1${n % 10}`);
    const res = await importCsv(lines.join('\n')).expect(200);
    expect(res.body).toEqual({ rows: 20_000, inserted: 20_000, updated: 0, unchanged: 0 });
    expect((await lookup('8712345').expect(200)).body).toEqual({ cardNumber: '8712345', batteryDate: '2025-04-15', replaceBefore: '2028-04-15' });
  });
});
