/**
 * Which modems an upload may use (docs/decisions.md §5): a valid key, a new modem registered to its first
 * uploader, another user's modem refused for the whole batch, admins uploading for any modem, and the caps
 * against modem squatting. The upload formats and their limits are punches.upload.test.ts.
 */
import request from 'supertest';
import { localMs, punchCount, startTiming, upload, type TestUser, type TimingTestContext } from './helpers';

let ctx: TimingTestContext;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  ctx = await startTiming();
  alice = await ctx.createUser('alice');
  bob = await ctx.createUser('bob');
});
afterAll(async () => ctx.close());

const punch = (over: Record<string, unknown> = {}) => ({ card: '8000001', time: localMs(19), code: 31, type: 'Control', modem: 'A-1', ...over });

describe('keys and modem ownership', () => {
  it('needs a valid key', async () => {
    const res = await request(ctx.app).post('/api/rest/v1/punches').send([punch()]).expect(401);
    expect(res.headers['www-authenticate']).toBe('apikey');
    await request(ctx.app).post('/api/rest/v1/punches').set('apikey', 'tk_wrong').send([punch()]).expect(401);
  });

  it('registers a new modem to its first uploader and rejects the whole batch for another user', async () => {
    await upload(ctx, alice.key, [punch({ modem: 'OWN-1' })]);
    const before = await punchCount(ctx);
    const res = await request(ctx.app)
      .post('/api/rest/v1/punches')
      .set('apikey', bob.key)
      .send([punch({ modem: 'BOB-NEW' }), punch({ modem: 'OWN-1', code: 99 })])
      .expect(403);
    expect(res.body.modems).toEqual(['OWN-1']);
    expect(await punchCount(ctx)).toBe(before);
    // Nothing of the rejected batch was registered either.
    const modems = await request(ctx.app).get('/api/rest/v1/modems').set('apikey', ctx.adminKey).expect(200);
    expect(modems.body.map((m: { serial: string }) => m.serial)).not.toContain('BOB-NEW');
    expect(modems.body.find((m: { serial: string }) => m.serial === 'OWN-1').user).toBe('alice');
  });

  it('lets an admin upload for any modem without taking it over', async () => {
    expect(await upload(ctx, ctx.adminKey, [punch({ modem: 'OWN-1', code: 98 })])).toMatchObject({ stored: 1 });
    const mine = await request(ctx.app).get('/api/rest/v1/modems').set('apikey', alice.key).expect(200);
    expect(mine.body.map((m: { serial: string }) => m.serial)).toContain('OWN-1');
    const theirs = await request(ctx.app).get('/api/rest/v1/modems').set('apikey', bob.key).expect(200);
    expect(theirs.body).toEqual([]);
  });
});

describe('modem squatting', () => {
  const post = (key: string, body: object[]) => request(ctx.app).post('/api/rest/v1/punches').set('apikey', key).send(body);
  const serials = (prefix: string, n: number, from = 0) => Array.from({ length: n }, (_, i) => `${prefix}-${from + i}`);
  const modemsOf = async (userId: number) =>
    (await ctx.database.pool.query<{ n: number }>('select count(*)::int as n from modems where user_id = $1', [userId])).rows[0].n;

  it('refuses an upload that would register more than 100 new modems, registering and storing nothing', async () => {
    const sq = await ctx.createUser('squat-one');
    const before = await punchCount(ctx);
    const res = await post(
      sq.key,
      serials('SQ1', 101).map((modem) => punch({ modem })),
    ).expect(400);
    expect(res.body.errors.modem[0]).toMatch(/at most 100 new modems/);
    expect(await modemsOf(sq.id)).toBe(0);
    expect(await punchCount(ctx)).toBe(before);
    await post(
      sq.key,
      serials('SQ1', 100).map((modem) => punch({ modem })),
    ).expect(200);
    expect(await modemsOf(sq.id)).toBe(100);
  });

  it('caps a user at 1,000 modems, also when two uploads race for the last places; admins are not capped', async () => {
    const sq = await ctx.createUser('squat-many');
    for (let i = 0; i < 9; i++)
      await post(
        sq.key,
        serials('SQM', 100, i * 100).map((modem) => punch({ modem })),
      ).expect(200);
    await post(
      sq.key,
      serials('SQM', 60, 900).map((modem) => punch({ modem })),
    ).expect(200);
    expect(await modemsOf(sq.id)).toBe(960);
    // 960 + 30 fits, 960 + 30 + 30 does not: exactly one of two concurrent uploads passes.
    const [a, b] = await Promise.all([
      post(
        sq.key,
        serials('SQA', 30).map((modem) => punch({ modem })),
      ),
      post(
        sq.key,
        serials('SQB', 30).map((modem) => punch({ modem })),
      ),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 400]);
    const refused = a.status === 400 ? a : b;
    expect(refused.body.errors.modem[0]).toMatch(/at most 1000 modems \(990 registered, 30 new\)/);
    expect(await modemsOf(sq.id)).toBe(990);
    // Known modems still upload at the cap.
    await post(sq.key, [punch({ modem: 'SQM-0', code: 77 })]).expect(200);
    // An admin key registers beyond both limits.
    await post(
      ctx.adminKey,
      serials('ADM', 150).map((modem) => punch({ modem })),
    ).expect(200);
  });

  it('lets an admin release a squatted modem, after which its owner can register it', async () => {
    const squatter = await ctx.createUser('squatter');
    const owner = await ctx.createUser('rightful-owner');
    await post(squatter.key, [punch({ modem: 'VICTIM-1' })]).expect(200);
    const ev = await request(ctx.app)
      .post('/api/rest/v1/events')
      .set('apikey', squatter.key)
      .send({ name: 'squat', public: false, modems: ['VICTIM-1'] })
      .expect(201);
    await post(owner.key, [punch({ modem: 'VICTIM-1', code: 40 })]).expect(403);

    await request(ctx.app).delete('/api/rest/v1/modems/VICTIM-1').set('apikey', squatter.key).expect(403);
    await request(ctx.app).delete('/api/rest/v1/modems/VICTIM-1').set('apikey', ctx.adminKey).expect(204);
    await request(ctx.app).delete('/api/rest/v1/modems/VICTIM-1').set('apikey', ctx.adminKey).expect(404);
    const event = await request(ctx.app).get(`/api/rest/v1/events/${ev.body.id}`).set('apikey', squatter.key).expect(200);
    expect(event.body.modems).toEqual([]);

    await post(owner.key, [punch({ modem: 'VICTIM-1', code: 41 })]).expect(200);
    const mine = await request(ctx.app).get('/api/rest/v1/modems').set('apikey', owner.key).expect(200);
    expect(mine.body.map((m: { serial: string }) => m.serial)).toEqual(['VICTIM-1']);
    await post(squatter.key, [punch({ modem: 'VICTIM-1', code: 42 })]).expect(403);
  });
});
