/**
 * Both directions across protocols (docs/roc.md), on the real app over real HTTP and PostgreSQL: a ROC unit's
 * punch is read by SPORTident Center clients, `getPunches`, the live status and ROC readers; a modem's punch by
 * ROC readers; and under concurrent uploads of both kinds a ROC poller and a Center poller each receive every
 * punch exactly once.
 */
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { localMs, startTiming, waitUntilVisible, type TestUser, type TimingTestContext } from './helpers';
import { rocRows, UNIT, yarocForm } from './roc-clients';
import { testTime } from '@sports-timing/shared/src/test-time';

let ctx: TimingTestContext;
let owner: TestUser;
/** A public event with modems and the ROC unit {@link UNIT}. */
let publicEvent: number;

async function createEvent(key: string, body: object): Promise<number> {
  const res = await request(ctx.app).post('/api/rest/v1/events').set('apikey', key).send(body).expect(201);
  return res.body.id as number;
}

function postForm(key: string, form: Record<string, string>) {
  return request(ctx.app).post(`/roc/key/${key}/sendpunches_v2.php`).type('form').send(form);
}

beforeAll(async () => {
  ctx = await startTiming();
  owner = await ctx.createUser('roc-owner');
  publicEvent = await createEvent(owner.key, { name: 'ROC public', public: true, modems: ['R-1', 'R-2', UNIT] });
}, testTime(60_000));
afterAll(async () => ctx?.close());

describe('both directions', () => {
  it('the live page: a ROC unit’s punch arrives on the event’s punch stream (what the page follows) while it is open', async () => {
    const server = ctx.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const { port } = server.address() as AddressInfo;
    const abort = new AbortController();
    try {
      const afterId = Number((await ctx.database.pool.query('select coalesce(max(id), 0) m from punches')).rows[0].m);
      const res = await fetch(`http://127.0.0.1:${port}/api/rest/v1/punches/stream?eventId=${publicEvent}&afterId=${afterId}`, {
        headers: { Accept: 'text/event-stream' },
        signal: abort.signal,
      });
      expect(res.status).toBe(200);
      await postForm(owner.key, yarocForm({ code: 51, card: 2_000_002, mode: 4, date: '2020-02-01', time: '13:20:00', ms: '5' })).expect(200);
      const reader = res.body!.getReader();
      let text = '';
      while (!/"card":"2000002"/.test(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended: ${text}`);
        text += new TextDecoder().decode(value);
      }
      expect(text).toMatch(new RegExp(`"modem":"${UNIT}"`));
      expect(text).toMatch(/"type":"Finish"/);
    } finally {
      abort.abort();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('a ROC unit’s punch is read by SI Center clients, getPunches, the live status and the ROC read; a modem’s punch by the ROC read', async () => {
    const form = yarocForm({ code: 50, card: 2_000_001, mode: 2, date: '2020-02-01', time: '13:14:15', ms: '987' });
    await postForm(owner.key, form).expect(200);
    await waitUntilVisible(ctx);
    const id = Number((await ctx.database.pool.query(`select id from punches where modem = $1 and code = 50`, [UNIT])).rows[0].id);
    const simple = await request(ctx.app)
      .get(`/api/rest/v1/public/events/${publicEvent}/punches?afterId=${id - 1}&projection=simple`)
      .expect(200);
    expect(simple.body[0]).toMatchObject({
      id,
      modem: UNIT,
      card: 2_000_001,
      code: 50,
      time: Date.UTC(2020, 1, 1, 13, 14, 15, 987),
      mode: 'BcControl',
    });
    const plain = await request(ctx.app)
      .get(`/api/rest/v1/punches?eventId=${publicEvent}&afterId=${id - 1}`)
      .expect(200);
    expect(plain.body.map((p: { id: number }) => p.id)).toEqual([id]);
    const status = await request(ctx.app).get(`/api/rest/v1/events/${publicEvent}/status`).expect(200);
    expect(status.body.recent.some((p: { id: number; modem: string }) => p.id === id && p.modem === UNIT)).toBe(true);
    const roc = rocRows(
      (
        await request(ctx.app)
          .get(`/getpunches.asp?unitId=${publicEvent}&lastId=${id - 1}`)
          .expect(200)
      ).text,
    );
    expect(roc).toEqual([{ id, code: 50, card: 2_000_001, at: '2020-02-01 13:14:15' }]);
  });

  it(
    'concurrent modem uploads and ROC posts: a ROC poller and an SI Center poller each receive every punch exactly once',
    async () => {
      const ev = await createEvent(owner.key, {
        name: 'ROC mixed',
        public: true,
        modems: ['M-1', 'M-2', 'M-3', 'c0ffee000001', 'c0ffee000002'],
      });
      const start = Number((await ctx.database.pool.query('select coalesce(max(id),0) m from punches')).rows[0].m);
      let done = false;
      const rocSeen: number[] = [];
      const centerSeen: number[] = [];
      const rocPoller = (async () => {
        let lastId = start;
        for (;;) {
          const finished = done;
          const rows = rocRows((await request(ctx.app).get(`/getpunches.asp?unitId=${ev}&lastId=${lastId}`).expect(200)).text);
          for (const r of rows) rocSeen.push(r.id);
          if (rows.length > 0) lastId = rows[rows.length - 1].id;
          else if (finished) return;
        }
      })();
      const centerPoller = (async () => {
        let afterId = start;
        for (;;) {
          const finished = done;
          const page = (await request(ctx.app).get(`/api/rest/v1/public/events/${ev}/punches?afterId=${afterId}&projection=simple`).expect(200)).body as {
            id: number;
          }[];
          for (const p of page) centerSeen.push(p.id);
          if (page.length > 0) afterId = page[page.length - 1].id;
          else if (finished) return;
        }
      })();
      const modemUploaders = [1, 2, 3].map(async (m) => {
        for (let b = 0; b < 10; b++) {
          const batch = Array.from({ length: 20 }, (_, i) => ({
            modem: `M-${m}`,
            card: String(1000 + b * 20 + i),
            time: localMs(14, b, i),
            code: 60 + m,
            type: 'Control',
          }));
          const res = await request(ctx.app).post('/api/rest/v1/punches').set('apikey', owner.key).send(batch);
          expect(res.status).toBe(200);
        }
      });
      const rocUnits = [1, 2].map(async (u) => {
        for (let i = 0; i < 40; i++) {
          const form = yarocForm({
            code: 70 + u,
            card: 3000 + i,
            mode: 2,
            date: '2020-02-01',
            time: `15:${String(i).padStart(2, '0')}:00`,
            ms: String(i * 7),
            mac: `c0ffee00000${u}`,
          });
          await postForm(owner.key, form).expect(200);
          if (i % 10 === 0) await postForm(owner.key, form).expect(200); // a lost answer: re-sent
        }
      });
      await Promise.all([...modemUploaders, ...rocUnits]);
      await waitUntilVisible(ctx);
      done = true;
      await Promise.all([rocPoller, centerPoller]);
      const expected = (
        await ctx.database.pool.query<{ id: string }>(`select id from punches where modem = any($1) order by id`, [
          ['M-1', 'M-2', 'M-3', 'c0ffee000001', 'c0ffee000002'],
        ])
      ).rows.map((r) => Number(r.id));
      expect(expected.length).toBe(3 * 10 * 20 + 2 * 40);
      expect(rocSeen).toEqual(expected);
      expect(centerSeen).toEqual(expected);
    },
    testTime(120_000),
  );
});
