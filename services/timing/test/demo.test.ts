/**
 * The real event as demo data: after loading VeNotte 2020 into an empty database,
 * `GET /api/rest/v1/punches?eventId=<id>&afterId=0` with `Accept: text/csv` gives 1000 rows and
 * `X-Total-Count: 7759`, and polling to the end yields all 7759 punches once each.
 */
import request from 'supertest';
import { createLogger } from '@sports-timing/shared';
import { DEMO_EVENT_NAME, loadDemoData } from '../src/demo/load';
import { localIsoToMs, readVenottePunches, VENOTTE_WINDOW, venotteRowToPunch } from '../src/demo/venotte';
import { CSV_HEADER, parseCsvLikeMeos, punchCount, startTiming, waitUntilVisible, type TimingTestContext } from './helpers';
import { testTime } from '@sports-timing/shared/src/test-time';

let ctx: TimingTestContext;
let eventId: number;

beforeAll(async () => {
  ctx = await startTiming();
  const result = await loadDemoData(ctx.timing, createLogger('demo', 'silent'));
  expect(result).toMatchObject({ created: true, stored: 7759 });
  eventId = result.eventId;
  await waitUntilVisible(ctx);
}, testTime(60_000));
afterAll(async () => ctx.close());

describe('conversion', () => {
  it('reads local wall-clock times as ms without a time-zone shift', () => {
    expect(localIsoToMs('2020-02-01T19:16:03')).toBe(Date.UTC(2020, 1, 1, 19, 16, 3));
    expect(() => localIsoToMs('2020-02-01 19:16')).toThrow();
  });

  it('gives each radio control a modem, Start and Finish their own, and a real UTC reception time', () => {
    const start = venotteRowToPunch({ card: '9790916', code: '', time: '2020-02-01T19:16:03', type: 'Start' });
    expect(start).toMatchObject({ card: '9790916', modem: '2020001', code: 1, type: 'Start', time: Date.UTC(2020, 1, 1, 19, 16, 3) });
    const delay = start.receptionTimeUtc! - (start.time - 3_600_000);
    expect(delay).toBeGreaterThanOrEqual(2000);
    expect(delay).toBeLessThanOrEqual(6000);
    expect(venotteRowToPunch({ card: '9790916', code: '54', time: '2020-02-01T19:17:52', type: 'Control' })).toMatchObject({ modem: '2020054', code: 54 });
    expect(venotteRowToPunch({ card: '1', code: '', time: '2020-02-01T20:00:00', type: 'Finish' })).toMatchObject({ modem: '2020002', code: 2 });
    const all = readVenottePunches();
    expect(all).toHaveLength(7759);
    expect(all.every((p, i) => i === 0 || all[i - 1].time <= p.time)).toBe(true);
  });
});

describe('the demo event', () => {
  it('is public, named, with its modems and the event day as window', async () => {
    const res = await request(ctx.app).get('/api/rest/v1/events').expect(200);
    const ev = res.body.find((e: { name: string }) => e.name === DEMO_EVENT_NAME);
    expect(ev).toMatchObject({ id: eventId, public: true, owner: 'demo', from: VENOTTE_WINDOW.from, to: VENOTTE_WINDOW.to });
    expect(ev.modems).toContain('2020001');
    expect(ev.modems).toContain('2020002');
    expect(ev.modems).toHaveLength(30); // 28 radio controls, start, finish
  });

  it('serves 1000 CSV rows with X-Total-Count 7759, and polling to the end yields every punch once', async () => {
    const first = await request(ctx.app).get(`/api/rest/v1/punches?eventId=${eventId}&afterId=0`).set('Accept', 'text/csv').expect(200);
    expect(first.headers['x-total-count']).toBe('7759');
    expect(first.text.split('\n')[0]).toBe(CSV_HEADER);
    expect(parseCsvLikeMeos(first.text)).toHaveLength(1000);

    const ids: number[] = [];
    let afterId = 0;
    for (let polls = 0; polls < 20; polls++) {
      const res = await request(ctx.app)
        .get(`/api/rest/v1/punches?eventId=${eventId}&afterId=${afterId}&after=${VENOTTE_WINDOW.from}`)
        .set('Accept', 'text/csv')
        .expect(200);
      const rows = parseCsvLikeMeos(res.text);
      expect(Number(res.headers['x-total-count'])).toBe(7759 - ids.length);
      if (rows.length === 0) break;
      ids.push(...rows.map((r) => r.id));
      afterId = rows[rows.length - 1].id;
    }
    expect(ids).toHaveLength(7759);
    expect(new Set(ids).size).toBe(7759);
    const { rows } = await ctx.database.pool.query<{ id: number }>('select id from punches order by id');
    expect(ids).toEqual(rows.map((r) => r.id));
  });

  it('was uploaded in time order, so ids follow punch times', async () => {
    const { rows } = await ctx.database.pool.query<{ ordered: boolean }>(
      'select bool_and(prev is null or prev <= time) as ordered from (select time, lag(time) over (order by id) as prev from punches) t',
    );
    expect(rows[0].ordered).toBe(true);
  });

  it('is not loaded twice', async () => {
    const again = await loadDemoData(ctx.timing, createLogger('demo', 'silent'));
    expect(again).toEqual({ eventId, created: false, stored: 0 });
    expect(await punchCount(ctx)).toBe(7759);
  });
});
