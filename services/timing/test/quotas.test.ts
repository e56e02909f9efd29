/**
 * Quotas of one user (docs/decisions.md §5 "Quotas"): events owned, active keys and punches uploaded per UTC
 * day, held under concurrent requests (a per-user lock around count and insert; a conditional upsert of the
 * day's count); naming modems in an event registers none;
 * `listEvents` paged with `afterId`, `limit` and `X-Total-Count`. Each quota has a negative control: the
 * default quotas let the same burst through, and admins are not limited.
 */
import request from 'supertest';
import { startTiming, waitUntilVisible, type TimingTestContext } from './helpers';

let ctx: TimingTestContext;
let roomy: TimingTestContext;

beforeAll(async () => {
  [ctx, roomy] = await Promise.all([startTiming({ quotas: { eventsPerUser: 5, keysPerUser: 3, punchesPerDay: 100 } }), startTiming()]);
});
afterAll(async () => Promise.all([ctx.close(), roomy.close()]));

const newEvent = (name: string, modems: string[] = []) => ({ name, public: true, modems });

describe('events per user', () => {
  it('12 concurrent creations against a quota of 5: exactly 5 created, 7 × 403 naming the quota', async () => {
    const user = await ctx.createUser('eve');
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        request(ctx.app)
          .post('/api/rest/v1/events')
          .set('apikey', user.key)
          .send(newEvent(`E${i}`, [`EQ-${i}`])),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([...Array(5).fill(201), ...Array(7).fill(403)]);
    const refused = answers.find((a) => a.status === 403)!;
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.body.detail).toMatch(/Event quota reached: a user owns at most 5 events/);
    const { rows } = await ctx.database.pool.query<{ n: number }>('select count(*)::int n from events where owner_id = $1', [user.id]);
    expect(rows[0].n).toBe(5);
    // A request refused at the locked insert (it passed the unlocked pre-check in the race) may have registered
    // its one modem before; never more than the request named.
    const modems = await ctx.database.pool.query<{ n: number }>('select count(*)::int n from modems where user_id = $1', [user.id]);
    expect(modems.rows[0].n).toBeLessThanOrEqual(12);
    // Deleting one frees a place.
    const created = answers.find((a) => a.status === 201)!;
    await request(ctx.app).delete(`/api/rest/v1/events/${created.body.id}`).set('apikey', user.key).expect(204);
    await request(ctx.app).post('/api/rest/v1/events').set('apikey', user.key).send(newEvent('again')).expect(201);
    await request(ctx.app).post('/api/rest/v1/events').set('apikey', user.key).send(newEvent('over')).expect(403);
  });

  it('negative controls: admins are not limited; the default quota lets the same burst through', async () => {
    const admin = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        request(ctx.app)
          .post('/api/rest/v1/events')
          .set('apikey', ctx.adminKey)
          .send(newEvent(`A${i}`)),
      ),
    );
    expect(admin.map((a) => a.status)).toEqual(Array(8).fill(201));
    const user = await roomy.createUser('eve');
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        request(roomy.app)
          .post('/api/rest/v1/events')
          .set('apikey', user.key)
          .send(newEvent(`E${i}`)),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(201));
  });

  it('an event may name 1,000 serials: it registers none, so the modem quota counts uploaded-for modems only', async () => {
    const user = await ctx.createUser('namer');
    const serials = Array.from({ length: 1000 }, (_, i) => `SQ-${i}`);
    await request(ctx.app).post('/api/rest/v1/events').set('apikey', user.key).send(newEvent('many', serials)).expect(201);
    const held = async () => (await ctx.database.pool.query<{ n: number }>('select count(*)::int n from modems where user_id = $1', [user.id])).rows[0].n;
    expect(await held()).toBe(0);
    await request(ctx.app)
      .post('/api/rest/v1/punches')
      .set('apikey', user.key)
      .send(serials.slice(0, 100).map((modem) => ({ card: '1', time: 0, code: 31, type: 'Control', modem })))
      .expect(200);
    expect(await held()).toBe(100);
  });
});

describe('keys per user', () => {
  it('10 concurrent key creations against a quota of 3 (one key held): exactly 2 created; a revoked key frees a place', async () => {
    const user = await ctx.createUser('minter');
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        request(ctx.app)
          .post('/api/rest/v1/keys')
          .set('apikey', user.key)
          .send({ name: `k${i}` }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([...Array(2).fill(201), ...Array(8).fill(403)]);
    expect(answers.find((a) => a.status === 403)!.body.detail).toMatch(/Key quota reached: a user holds at most 3 active keys/);
    const { rows } = await ctx.database.pool.query<{ n: number }>('select count(*)::int n from api_keys where user_id = $1', [user.id]);
    expect(rows[0].n).toBe(3);
    const made = answers.find((a) => a.status === 201)!.body as { id: number };
    await request(ctx.app).delete(`/api/rest/v1/keys/${made.id}`).set('apikey', user.key).expect(204);
    await request(ctx.app).post('/api/rest/v1/keys').set('apikey', user.key).send({ name: 'after revoke' }).expect(201);
    await request(ctx.app).post('/api/rest/v1/keys').set('apikey', user.key).send({ name: 'over' }).expect(403);
  });

  it('negative control: the default quota lets 10 keys through', async () => {
    const user = await roomy.createUser('minter');
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        request(roomy.app)
          .post('/api/rest/v1/keys')
          .set('apikey', user.key)
          .send({ name: `k${i}` }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(201));
  });
});

describe('punches per day', () => {
  const batch = (modem: string, from: number) =>
    Array.from({ length: 15 }, (_, i) => ({
      card: String(from + i),
      time: Date.UTC(2020, 1, 1, 10),
      code: 31,
      type: 'Control',
      modem,
    }));

  it('10 concurrent batches of 15 against a quota of 100: exactly 6 stored (90 punches), 4 × 429 with Retry-After; duplicates cost nothing', async () => {
    const user = await ctx.createUser('flooder');
    await request(ctx.app).post('/api/rest/v1/punches').set('apikey', user.key).send([]).expect(200);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        request(ctx.app)
          .post('/api/rest/v1/punches')
          .set('apikey', user.key)
          .send(batch('FL-1', 1000 + i * 100)),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([...Array(6).fill(200), ...Array(4).fill(429)]);
    const refused = answers.find((a) => a.status === 429)!;
    expect(refused.body.detail).toMatch(/Daily upload quota reached: a user stores at most 100 punches per UTC day/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(86_400);
    const { rows } = await ctx.database.pool.query<{ n: number }>(`select count(*)::int n from punches where modem = 'FL-1'`);
    expect(rows[0].n).toBe(90);
    // Only newly stored punches are charged: a stored batch re-sent is all duplicates and costs nothing.
    const five = batch('FL-1', 5000).slice(0, 5);
    await request(ctx.app).post('/api/rest/v1/punches').set('apikey', user.key).send(five).expect(200);
    expect((await request(ctx.app).post('/api/rest/v1/punches').set('apikey', user.key).send(five).expect(200)).body).toMatchObject({
      stored: 0,
      duplicates: 5,
    });
    await request(ctx.app).post('/api/rest/v1/punches').set('apikey', user.key).send(batch('FL-1', 6000).slice(0, 5)).expect(200);
    // The day's 100 are used up: one more new punch is refused until midnight UTC, on the fast lane and the
    // pipeline (a batch with an invalid punch takes it) alike, and nothing of a refused batch is stored.
    await request(ctx.app).post('/api/rest/v1/punches').set('apikey', user.key).send(batch('FL-1', 7000).slice(0, 1)).expect(429);
    await request(ctx.app)
      .post('/api/rest/v1/punches')
      .set('apikey', user.key)
      .send([...batch('FL-1', 7100).slice(0, 1), { card: 'not a card' }])
      .expect(429);
    // A re-send of stored punches is still answered (all duplicates): a modem that lost the answer stops re-sending.
    expect((await request(ctx.app).post('/api/rest/v1/punches').set('apikey', user.key).send(five).expect(200)).body).toMatchObject({
      stored: 0,
      duplicates: 5,
    });
    const after = await ctx.database.pool.query<{ n: number }>(`select count(*)::int n from punches where modem = 'FL-1'`);
    expect(after.rows[0].n).toBe(100);
    const charged = await ctx.database.pool.query<{ punches: string }>(
      `select punches from upload_quota where user_id = (select id from users where user_name = 'flooder')`,
    );
    expect(charged.rows.map((r) => Number(r.punches))).toEqual([100]);
  });

  it('negative controls: admins are not limited; the default quota lets the same burst through', async () => {
    const admin = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        request(ctx.app)
          .post('/api/rest/v1/punches')
          .set('apikey', ctx.adminKey)
          .send(batch('FL-A', 1000 + i * 100)),
      ),
    );
    expect(admin.map((a) => a.status)).toEqual(Array(10).fill(200));
    const user = await roomy.createUser('flooder');
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        request(roomy.app)
          .post('/api/rest/v1/punches')
          .set('apikey', user.key)
          .send(batch('FL-2', 1000 + i * 100)),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
  });
});

describe('listEvents pages', () => {
  it('pages with afterId and limit; X-Total-Count counts every visible event after afterId', async () => {
    const org = await roomy.createUser('pager');
    for (let i = 0; i < 7; i++)
      await request(roomy.app)
        .post('/api/rest/v1/events')
        .set('apikey', org.key)
        .send({ name: `P${i}`, public: i !== 3, modems: [] })
        .expect(201);
    const all = await request(roomy.app).get('/api/rest/v1/events').expect(200);
    const total = Number(all.headers['x-total-count']);
    expect(total).toBe(all.body.length);
    const seen: number[] = [];
    let afterId = 0;
    for (;;) {
      const page = await request(roomy.app).get(`/api/rest/v1/events?afterId=${afterId}&limit=3`).expect(200);
      expect(page.body.length).toBeLessThanOrEqual(3);
      expect(Number(page.headers['x-total-count'])).toBe(total - seen.length);
      if (page.body.length === 0) break;
      seen.push(...(page.body as { id: number }[]).map((e) => e.id));
      afterId = seen[seen.length - 1];
    }
    expect(seen).toEqual((all.body as { id: number }[]).map((e) => e.id));
    // The private event is not among the anonymous pages; its owner sees it.
    const own = await request(roomy.app).get('/api/rest/v1/events?limit=100').set('apikey', org.key).expect(200);
    expect(own.body.length).toBe(all.body.length + 1);
    await request(roomy.app).get('/api/rest/v1/events?limit=101').expect(400);
    await request(roomy.app).get('/api/rest/v1/events?limit=0').expect(400);
  });
});

describe('getEventStatus stays bounded', () => {
  it('6,000 minute buckets and 300 codes of one modem: the newest 5,000 buckets, the lowest 256 codes', async () => {
    const org = await roomy.createUser('long-event');
    const base = Date.UTC(2020, 1, 1, 0);
    const punches = Array.from({ length: 6000 }, (_, i) => ({
      card: '1',
      time: base + i * 60_000,
      code: i % 300,
      type: 'Control',
      modem: 'ST-1',
    }));
    await request(roomy.app).post('/api/rest/v1/punches').set('apikey', org.key).send(punches).expect(200);
    const ev = await request(roomy.app)
      .post('/api/rest/v1/events')
      .set('apikey', org.key)
      .send({ name: 'Long', public: true, modems: ['ST-1'] })
      .expect(201);
    await waitUntilVisible(roomy);
    const res = await request(roomy.app).get(`/api/rest/v1/events/${ev.body.id}/status`).expect(200);
    expect(res.body.total).toBe(6000);
    expect(res.body.perMinute).toHaveLength(5000);
    expect(res.body.perMinute[0].minute).toBe(base + 1000 * 60_000);
    expect(res.body.perMinute[4999].minute).toBe(base + 5999 * 60_000);
    expect(res.body.modems[0].codes).toHaveLength(256);
    expect(res.body.modems[0].codes[255]).toBe(255);
  });
});
