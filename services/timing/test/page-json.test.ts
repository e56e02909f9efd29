/**
 * JSON pages converted from PostgreSQL's CSV rendering (src/punches/page-json.ts): the same text as the
 * JSON PostgreSQL renders itself, and the JSON rendering whenever the CSV could be misread.
 */
import request from 'supertest';
import { jsonFromCsvPage } from '../src/punches/page-json';
import { readPunchPage, type PunchScope } from '../src/punches/punches.repository';
import { CSV_HEADER, localMs, startTiming, upload, waitUntilVisible, type TimingTestContext } from './helpers';

let ctx: TimingTestContext;

beforeAll(async () => {
  ctx = await startTiming();
});
afterAll(async () => ctx.close());

/** The conversion of `text`, as text (null when it declines). */
function convert(text: string, count: number): string | null {
  return jsonFromCsvPage(text, count)?.toString() ?? null;
}

describe('jsonFromCsvPage', () => {
  const row = '7,9790916,1580584563000,54,Control,VN2020-54,1580580965000';
  const json = '{"id":7,"card":"9790916","time":1580584563000,"code":54,"type":"Control","modem":"VN2020-54","receptionTimeUtc":1580580965000}';

  it('renders the compact JSON array of the rows', () => {
    expect(convert(`${CSV_HEADER}\n`, 0)).toBe('[]');
    expect(convert(`${CSV_HEADER}\n${row}\n${row}\n`, 2)).toBe(`[${json},${json}]`);
    expect(JSON.parse(convert(`${CSV_HEADER}\n${row}\n`, 1) ?? '')).toEqual([JSON.parse(json)]);
  });

  it('declines text it could misread', () => {
    expect(convert(`${CSV_HEADER}\n${row.replace('VN2020-54', 'VN"54')}\n`, 1)).toBeNull();
    expect(convert(`${CSV_HEADER}\n${row.replace('VN2020-54', 'VN\\54')}\n`, 1)).toBeNull();
    expect(convert(`${CSV_HEADER}\n${row.replace('VN2020-54', 'VN\t54')}\n`, 1)).toBeNull();
    expect(convert(`${CSV_HEADER}\n${row.replace('VN2020-54', 'VN,54')}\n`, 1)).toBeNull();
    expect(convert(`${CSV_HEADER}\n${row.replace(',Control', '')}\n`, 1)).toBeNull();
    expect(convert(`${CSV_HEADER}\n${row}`, 1)).toBeNull();
    expect(convert(`${CSV_HEADER}\n${row}\n`, 2)).toBeNull();
    expect(convert(`${CSV_HEADER}\n${row}\n${row}\n`, 1)).toBeNull();
    expect(convert(`${CSV_HEADER}\n${row.replace('9790916', '')}\n`, 1)).toBeNull();
    expect(convert(`${CSV_HEADER}\n${row.replace('VN2020-54', 'VN\n54')}\n`, 1)).toBeNull();
    expect(convert(`${CSV_HEADER}\n${row},1\n`, 1)).toBeNull();
    expect(convert(CSV_HEADER, 0)).toBeNull();
  });

  it('declines text beyond ASCII (PostgreSQL renders that page as JSON)', () => {
    expect(convert(`${CSV_HEADER}\n${row.replace('VN2020-54', 'Å-1')}\n`, 1)).toBeNull();
    expect(convert(`${CSV_HEADER}\n${row.replace('VN2020-54', 'VN\u007f54')}\n`, 1)).toBeNull();
  });
});

describe('pages', () => {
  it('answer the same JSON text as PostgreSQL renders, full page and short page', async () => {
    const admin = ctx.adminKey;
    const batch = Array.from({ length: 1200 }, (_, i) => ({
      card: String(100 + i),
      time: localMs(10) + i * 7,
      code: i % 300,
      type: i % 2 ? 'Control' : 'Start',
      modem: `PJ-${i % 3}`,
    }));
    await upload(ctx, admin, batch);
    await waitUntilVisible(ctx);
    for (const afterId of [0, 600, 5000]) {
      const scope: PunchScope = { modems: ['PJ-0', 'PJ-1', 'PJ-2'], afterId, timeFrom: null, timeTo: null };
      const fromPg = await readPunchPage(ctx.database.pool, scope, 'json');
      const res = await request(ctx.app)
        .get(`/api/rest/v1/punches?modem=PJ-0,PJ-1,PJ-2&afterId=${afterId}`)
        .set('apikey', admin)
        .set('accept-encoding', 'identity')
        .expect(200);
      expect(res.text).toBe(fromPg.body.toString());
      expect(res.headers['x-total-count']).toBe(String(fromPg.total));
    }
  });

  it('fall back to the JSON PostgreSQL renders for values written around the API', async () => {
    await ctx.database.pool.query(
      `insert into punches (card, time, code, type, modem, reception_time_utc) values ('12,3', 1, 31, 'Control', 'Q"1', 2), ('4\\5', 3, 32, 'Control', 'Q"1', 4)`,
    );
    await waitUntilVisible(ctx);
    const res = await request(ctx.app)
      .get(`/api/rest/v1/punches?modem=${encodeURIComponent('Q"1')}`)
      .set('apikey', ctx.adminKey)
      .expect(200);
    expect((res.body as { card: string; modem: string }[]).map((p) => [p.card, p.modem])).toEqual([
      ['12,3', 'Q"1'],
      ['4\\5', 'Q"1'],
    ]);
  });
});
