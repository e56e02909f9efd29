/**
 * Events (tag `events` of specs/timing.yaml): create, list, read, replace, delete, and who may do what.
 */
import request from 'supertest';
import { localMs, punchCount, startTiming, upload, type TestUser, type TimingTestContext } from './helpers';

let ctx: TimingTestContext;
let owner: TestUser;
let other: TestUser;

beforeAll(async () => {
  ctx = await startTiming();
  owner = await ctx.createUser('owner');
  other = await ctx.createUser('other');
});
afterAll(async () => ctx.close());

const newEvent = (over: Record<string, unknown> = {}) => ({
  name: 'City Sprint',
  public: true,
  modems: ['E-1', 'E-2'],
  from: localMs(9),
  to: localMs(12),
  ...over,
});

describe('create', () => {
  it('answers 201 with Location and the event; naming modems registers none (docs/decisions.md §5)', async () => {
    const res = await request(ctx.app).post('/api/rest/v1/events').set('apikey', owner.key).send(newEvent()).expect(201);
    expect(res.headers.location).toBe(`/api/rest/v1/events/${res.body.id}`);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: 'City Sprint',
      public: true,
      modems: ['E-1', 'E-2'],
      from: localMs(9),
      to: localMs(12),
      owner: 'owner',
      createdAt: expect.any(String),
      warnings: [expect.stringContaining("MeOS's modem mode reads only serials that are positive integers (without leading zeros) and drops E-1, E-2 ")],
    });
    const modems = await request(ctx.app).get('/api/rest/v1/modems').set('apikey', owner.key).expect(200);
    expect(modems.body).toEqual([]);
    await request(ctx.app).get(res.headers.location).expect(200);
  });

  it('warns about serials a result program cannot use, in the answers of writes only; numeric serials get no warning', async () => {
    const long = 'LTE-4G-MODEM-0123456789-A';
    const created = await request(ctx.app)
      .post('/api/rest/v1/events')
      .set('apikey', owner.key)
      .send(newEvent({ modems: ['3000053', 'SRR-A1', '0042', long] }))
      .expect(201);
    expect(created.body.warnings).toEqual([
      `MeOS's modem mode reads only serials that are positive integers (without leading zeros) and drops 0042, ${long}, SRR-A1 ("Invalid unit ID"); read this event in MeOS by its event id instead, or give the modems numeric serials.`,
      `Pirilä reads serials of at most 23 characters and cannot use ${long}.`,
    ]);
    // A read carries no warnings; the event is stored as given.
    const read = await request(ctx.app).get(created.headers.location).set('apikey', owner.key).expect(200);
    expect(read.body).not.toHaveProperty('warnings');
    expect(read.body.modems).toEqual(['0042', '3000053', long, 'SRR-A1']);
    // Replacing with numeric serials only: no warnings (negative control).
    const replaced = await request(ctx.app)
      .put(created.headers.location)
      .set('apikey', owner.key)
      .send(newEvent({ modems: ['3000053', '3000054'] }))
      .expect(200);
    expect(replaced.body).not.toHaveProperty('warnings');
    const numeric = await request(ctx.app)
      .post('/api/rest/v1/events')
      .set('apikey', owner.key)
      .send(newEvent({ modems: ['2020054'] }))
      .expect(201);
    expect(numeric.body).not.toHaveProperty('warnings');
  });

  it('accepts an event without window, with nulls', async () => {
    const res = await request(ctx.app)
      .post('/api/rest/v1/events')
      .set('apikey', owner.key)
      .send({ name: 'Open', public: false, modems: [], from: null })
      .expect(201);
    expect(res.body).toMatchObject({ from: null, to: null, modems: [], public: false });
  });

  it('rejects from after to, bad bodies and anonymous callers', async () => {
    const res = await request(ctx.app)
      .post('/api/rest/v1/events')
      .set('apikey', owner.key)
      .send(newEvent({ from: localMs(12), to: localMs(9) }))
      .expect(400);
    expect(res.body.errors.to).toBeDefined();
    await request(ctx.app)
      .post('/api/rest/v1/events')
      .set('apikey', owner.key)
      .send(newEvent({ name: '' }))
      .expect(400);
    await request(ctx.app)
      .post('/api/rest/v1/events')
      .set('apikey', owner.key)
      .send(newEvent({ modems: ['E-1', 'E-1'] }))
      .expect(400);
    await request(ctx.app)
      .post('/api/rest/v1/events')
      .set('apikey', owner.key)
      .send(newEvent({ colour: 'red' }))
      .expect(400);
    await request(ctx.app).post('/api/rest/v1/events').send(newEvent()).expect(401);
  });

  it('lets anyone name another user’s modem, claiming nothing (the event does not cover it: modem-squatting.test.ts)', async () => {
    await upload(ctx, owner.key, [{ card: '1', time: localMs(10), code: 31, type: 'Control', modem: 'E-1' }]);
    const res = await request(ctx.app)
      .post('/api/rest/v1/events')
      .set('apikey', other.key)
      .send(newEvent({ modems: ['E-1', 'X-9'] }))
      .expect(201);
    expect(res.body.modems).toEqual(['E-1', 'X-9']);
    const all = await request(ctx.app).get('/api/rest/v1/modems').set('apikey', ctx.adminKey).expect(200);
    expect(all.body.map((m: { serial: string; user: string }) => [m.serial, m.user])).toEqual([['E-1', 'owner']]);
    const admin = await request(ctx.app)
      .post('/api/rest/v1/events')
      .set('apikey', ctx.adminKey)
      .send(newEvent({ name: 'Admin made', modems: ['E-1'] }))
      .expect(201);
    expect(admin.body.owner).toBe('admin');
  });
});

describe('visibility', () => {
  let privateId: number;
  beforeAll(async () => {
    privateId = (
      await request(ctx.app)
        .post('/api/rest/v1/events')
        .set('apikey', owner.key)
        .send(newEvent({ name: 'Secret', public: false, modems: ['E-3'] }))
        .expect(201)
    ).body.id;
  });

  it('lists public events to everyone, own private ones to the owner, all to admins', async () => {
    const names = async (key?: string) => {
      const req = request(ctx.app).get('/api/rest/v1/events');
      const res = await (key ? req.set('apikey', key) : req).expect(200);
      return res.body.map((e: { name: string }) => e.name) as string[];
    };
    expect(await names()).not.toContain('Secret');
    expect(await names(other.key)).not.toContain('Secret');
    expect(await names(owner.key)).toContain('Secret');
    expect(await names(ctx.adminKey)).toContain('Secret');
    expect(await names()).toContain('City Sprint');
  });

  it('reads a private event with the owner or admin key only; to others it answers exactly as a missing event', async () => {
    const url = `/api/rest/v1/events/${privateId}`;
    // Same status and body (but for the id in the text) for a private event and a missing one, per caller.
    const same = (r: request.Response) => ({
      status: r.status,
      body: { ...r.body, traceId: undefined, detail: String(r.body.detail).replace(String(privateId), 'N').replace('999999', 'N') },
      type: r.headers['content-type'],
      auth: r.headers['www-authenticate'],
    });
    for (const path of ['', '/status']) {
      const anon = await request(ctx.app)
        .get(url + path)
        .expect(404);
      expect(same(anon)).toEqual(same(await request(ctx.app).get(`/api/rest/v1/events/999999${path}`)));
      const foreign = await request(ctx.app)
        .get(url + path)
        .set('apikey', other.key)
        .expect(404);
      expect(same(foreign)).toEqual(same(await request(ctx.app).get(`/api/rest/v1/events/999999${path}`).set('apikey', other.key)));
    }
    const put = await request(ctx.app).put(url).set('apikey', other.key).send(newEvent()).expect(404);
    expect(same(put)).toEqual(same(await request(ctx.app).put('/api/rest/v1/events/999999').set('apikey', other.key).send(newEvent())));
    await request(ctx.app).get(url).set('apikey', owner.key).expect(200);
    await request(ctx.app).get(url).set('apikey', ctx.adminKey).expect(200);
  });

  it('answers 404 for an unknown event and 400 for a non-integer id', async () => {
    await request(ctx.app).get('/api/rest/v1/events/999999').expect(404);
    await request(ctx.app).get('/api/rest/v1/events/abc').expect(400);
  });
});

describe('replace and delete', () => {
  it('replaces an event for its owner; others get 403 (404 once it is private); an admin may, and the owner stays', async () => {
    const id = (
      await request(ctx.app)
        .post('/api/rest/v1/events')
        .set('apikey', owner.key)
        .send(newEvent({ name: 'Draft', modems: ['E-4'] }))
        .expect(201)
    ).body.id;
    const url = `/api/rest/v1/events/${id}`;
    const res = await request(ctx.app)
      .put(url)
      .set('apikey', owner.key)
      .send(newEvent({ name: 'Final', public: false, modems: ['E-4', 'E-5'], from: null, to: localMs(20) }))
      .expect(200);
    expect(res.body).toMatchObject({ id, name: 'Final', public: false, modems: ['E-4', 'E-5'], from: null, to: localMs(20), owner: 'owner' });
    // Private now: to another user it is as missing.
    await request(ctx.app).put(url).set('apikey', other.key).send(newEvent()).expect(404);
    await request(ctx.app).put(url).send(newEvent()).expect(401);
    const byAdmin = await request(ctx.app)
      .put(url)
      .set('apikey', ctx.adminKey)
      .send(newEvent({ name: 'Fixed', modems: ['E-4', 'E-6'] }))
      .expect(200);
    expect(byAdmin.body.owner).toBe('owner');
    const modems = await request(ctx.app).get('/api/rest/v1/modems').set('apikey', owner.key).expect(200);
    expect(modems.body.map((m: { serial: string }) => m.serial)).not.toContain('E-6');
    await request(ctx.app).put('/api/rest/v1/events/999999').set('apikey', owner.key).send(newEvent()).expect(404);
  });

  it('deletes an event for its owner or an admin and keeps its punches', async () => {
    await upload(ctx, owner.key, [{ card: '1', time: localMs(10), code: 31, type: 'Control', modem: 'E-7' }]);
    const id = (
      await request(ctx.app)
        .post('/api/rest/v1/events')
        .set('apikey', owner.key)
        .send(newEvent({ name: 'Gone', modems: ['E-7'] }))
        .expect(201)
    ).body.id;
    const before = await punchCount(ctx);
    await request(ctx.app).delete(`/api/rest/v1/events/${id}`).set('apikey', other.key).expect(403);
    await request(ctx.app).put(`/api/rest/v1/events/${id}`).set('apikey', other.key).send(newEvent()).expect(403);
    await request(ctx.app).delete(`/api/rest/v1/events/${id}`).set('apikey', owner.key).expect(204);
    await request(ctx.app).get(`/api/rest/v1/events/${id}`).expect(404);
    await request(ctx.app).delete(`/api/rest/v1/events/${id}`).set('apikey', owner.key).expect(404);
    expect(await punchCount(ctx)).toBe(before);
    const again = (
      await request(ctx.app)
        .post('/api/rest/v1/events')
        .set('apikey', owner.key)
        .send(newEvent({ name: 'Gone 2', modems: [] }))
        .expect(201)
    ).body.id;
    await request(ctx.app).delete(`/api/rest/v1/events/${again}`).set('apikey', ctx.adminKey).expect(204);
  });
});
