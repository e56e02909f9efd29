/**
 * Reading punches (`getPunches`) as the result software in use today does it, plus the rules of the
 * read: filters, formats, negotiation, counts, compression.
 */
import request from 'supertest';
import { CSV_HEADER, expectPunchArray, localMs, parseCsvLikeMeos, startTiming, upload, type TestUser, type TimingTestContext } from './helpers';

let ctx: TimingTestContext;
let org: TestUser;
let other: TestUser;
let publicEventId: number;
let privateEventId: number;
const zero = localMs(18); // event zero time

/** n punches on `modem`, one per second from `start`, codes from 31. */
function punches(modem: string, n: number, start: number, cardBase = 500_000) {
  return Array.from({ length: n }, (_, i) => ({ card: String(cardBase + i), time: start + i * 1000, code: 31 + (i % 50), type: 'Control', modem }));
}

beforeAll(async () => {
  ctx = await startTiming();
  org = await ctx.createUser('org');
  other = await ctx.createUser('other');
  // Window 18:00–22:00. M-1: 3 punches before the window, 10 inside; M-2: 10 inside; M-3 private.
  await upload(ctx, org.key, punches('M-1', 3, localMs(17, 0)));
  await upload(ctx, org.key, punches('M-1', 10, localMs(18, 30)));
  await upload(ctx, org.key, punches('M-2', 10, localMs(18, 40), 600_000));
  await upload(ctx, org.key, punches('M-3', 5, localMs(18, 50), 700_000));
  await upload(ctx, org.key, punches('M-4', 4, localMs(19, 0), 800_000)); // in no event
  let res = await request(ctx.app)
    .post('/api/rest/v1/events')
    .set('apikey', org.key)
    .send({ name: 'Night', public: true, modems: ['M-1', 'M-2'], from: localMs(18), to: localMs(22) })
    .expect(201);
  publicEventId = res.body.id;
  res = await request(ctx.app)
    .post('/api/rest/v1/events')
    .set('apikey', org.key)
    .send({ name: 'Training', public: false, modems: ['M-3'] })
    .expect(201);
  privateEventId = res.body.id;
});
afterAll(async () => ctx.close());

describe('MeOS', () => {
  it('polls an event as CSV without a key and parses it by splitting on commas', async () => {
    const res = await request(ctx.app).get(`/api/rest/v1/punches?eventId=${publicEventId}&afterId=0&after=${zero}`).set('Accept', 'text/csv').expect(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['x-total-count']).toBe('20');
    expect(res.text.split('\n')[0]).toBe(CSV_HEADER);
    const rows = parseCsvLikeMeos(res.text);
    expect(rows).toHaveLength(20);
    for (const r of rows) {
      expect(Number.isInteger(r.id) && Number.isInteger(r.card) && Number.isInteger(r.time) && Number.isInteger(r.code)).toBe(true);
      expect(r.type).toBe('Control');
      expect(r.time).toBeGreaterThanOrEqual(zero);
    }
    expect(rows.map((r) => r.id)).toEqual([...rows.map((r) => r.id)].sort((a, b) => a - b));
    // Next poll with the highest id: header only, count 0.
    const last = rows[rows.length - 1].id;
    const next = await request(ctx.app)
      .get(`/api/rest/v1/punches?eventId=${publicEventId}&afterId=${last}&after=${zero}`)
      .set('Accept', 'text/csv')
      .expect(200);
    expect(next.text).toBe(`${CSV_HEADER}\n`);
    expect(next.headers['x-total-count']).toBe('0');
  });

  it('polls modems as CSV (modem=a,b with a literal comma)', async () => {
    const res = await request(ctx.app).get(`/api/rest/v1/punches?modem=M-1,M-2&afterId=0&after=${zero}`).set('Accept', 'text/csv').expect(200);
    const rows = parseCsvLikeMeos(res.text);
    expect(rows).toHaveLength(20);
    expect(new Set(rows.map((r) => r.modem))).toEqual(new Set(['M-1', 'M-2']));
    expect(res.headers['x-total-count']).toBe('20');
  });

  it('sends the header even without a key configured: an empty apikey header is anonymous', async () => {
    await request(ctx.app).get(`/api/rest/v1/punches?eventId=${publicEventId}&afterId=0`).set('apikey', '').set('Accept', 'text/csv').expect(200);
  });
});

describe('SIRAPimport', () => {
  it('passes after as a decimal, no Accept, no key, and gets a bare JSON array', async () => {
    const after = localMs(18, 30, 5);
    const res = await request(ctx.app).get(`/api/rest/v1/punches?afterId=0&after=${after}.0&modem=M-1`).expect(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.text.startsWith('[')).toBe(true);
    expectPunchArray(res.body);
    // 18:30:00 + 5 s is inclusive: punches 5..9 of the ten.
    expect(res.body.map((p) => p.time)).toEqual([5, 6, 7, 8, 9].map((i) => localMs(18, 30) + i * 1000));
    expect(res.body.every((p) => typeof p.card === 'string')).toBe(true);
    expect(res.headers['x-total-count']).toBe('5');
  });
});

describe('keyed poller following the polling procedure of getPunches', () => {
  it('pages through more than 1000 punches with afterId and sees X-Total-Count fall to 0', async () => {
    const poller = await ctx.createUser('poller');
    for (let i = 0; i < 3; i++) await upload(ctx, poller.key, punches('BIG', 850, localMs(10) + i * 850_000, 100_000 + i * 850));
    let afterId = 0;
    const counts: string[] = [];
    const sizes: number[] = [];
    const seen: number[] = [];
    for (;;) {
      const res = await request(ctx.app)
        .get(`/api/rest/v1/punches?modem=BIG&afterId=${afterId}&after=${localMs(10)}`)
        .set('apikey', poller.key)
        .expect(200);
      expectPunchArray(res.body);
      counts.push(res.headers['x-total-count']);
      sizes.push(res.body.length);
      if (res.body.length === 0) break;
      seen.push(...res.body.map((p) => p.id));
      afterId = res.body[res.body.length - 1].id;
    }
    expect(sizes).toEqual([1000, 1000, 550, 0]);
    expect(counts).toEqual(['2550', '1550', '550', '0']);
    expect(new Set(seen).size).toBe(2550);
  });
});

describe('filters', () => {
  it('applies the event window and intersects eventId with modem', async () => {
    let res = await request(ctx.app).get(`/api/rest/v1/punches?eventId=${publicEventId}&afterId=0`).expect(200);
    expectPunchArray(res.body);
    expect(res.body).toHaveLength(20); // the 3 punches of M-1 before 18:00 are outside the window
    res = await request(ctx.app).get(`/api/rest/v1/punches?eventId=${publicEventId}&modem=M-2,M-4&afterId=0`).expect(200);
    expectPunchArray(res.body);
    expect(new Set(res.body.map((p) => p.modem))).toEqual(new Set(['M-2']));
  });

  it('treats afterId as exclusive', async () => {
    const all = await request(ctx.app).get('/api/rest/v1/punches?modem=M-2').expect(200);
    expectPunchArray(all.body);
    const third = all.body[2].id;
    const res = await request(ctx.app).get(`/api/rest/v1/punches?modem=M-2&afterId=${third}`).expect(200);
    expectPunchArray(res.body);
    expect(res.body[0].id).toBe(all.body[3].id);
    expect(res.headers['x-total-count']).toBe('7');
  });

  it('reads by user for that user and admins only', async () => {
    const own = await request(ctx.app).get('/api/rest/v1/punches?user=org&afterId=0').set('apikey', org.key).expect(200);
    expectPunchArray(own.body);
    expect(own.body).toHaveLength(3 + 10 + 10 + 5 + 4);
    await request(ctx.app).get('/api/rest/v1/punches?user=org').set('apikey', ctx.adminKey).expect(200);
    const anon = await request(ctx.app).get('/api/rest/v1/punches?user=org').expect(401);
    expect(anon.headers['www-authenticate']).toBe('apikey');
    await request(ctx.app).get('/api/rest/v1/punches?user=org').set('apikey', other.key).expect(403);
  });

  it('answers 400 without modem, eventId or user', async () => {
    const res = await request(ctx.app).get('/api/rest/v1/punches?afterId=0').expect(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.errors.modem).toBeDefined();
    await request(ctx.app).get('/api/rest/v1/punches?modem=&afterId=0').expect(400);
  });

  it('answers 400 for a non-integer eventId or a case typo of a parameter, 404 for an unknown event; undeclared parameters are ignored', async () => {
    await request(ctx.app).get('/api/rest/v1/punches?eventId=abc').expect(400);
    await request(ctx.app).get(`/api/rest/v1/punches?eventId=${publicEventId}&afterid=5`).expect(400);
    await request(ctx.app).get(`/api/rest/v1/punches?eventId=${publicEventId}&foo=bar`).expect(200);
    await request(ctx.app).get('/api/rest/v1/punches?afterId=-1&modem=M-1').expect(400);
    const res = await request(ctx.app).get('/api/rest/v1/punches?eventId=999999').expect(404);
    expect(res.body).toMatchObject({ status: 404 });
    await request(ctx.app).get('/api/rest/v1/punches?eventId=9999999999').expect(404);
  });

  it('returns [] or a header-only CSV with X-Total-Count 0 when nothing matches, unknown modems included', async () => {
    let res = await request(ctx.app).get('/api/rest/v1/punches?modem=NOPE&afterId=0').expect(200);
    expect(res.text).toBe('[]');
    expect(res.headers['x-total-count']).toBe('0');
    res = await request(ctx.app).get('/api/rest/v1/punches?modem=NOPE').set('Accept', 'text/csv').expect(200);
    expect(res.text).toBe('id,card,time,code,type,modem,receptionTimeUtc\n');
    expect(res.headers['x-total-count']).toBe('0');
  });
});

describe('access', () => {
  it('allows anonymous reads of modems in a public event; other modems match nothing, exactly like unknown ones', async () => {
    const publicOnly = await request(ctx.app).get('/api/rest/v1/punches?modem=M-1').expect(200);
    const mixed = await request(ctx.app).get('/api/rest/v1/punches?modem=M-1,M-4').expect(200);
    expect(mixed.body).toEqual(publicOnly.body);
    expect(mixed.headers['x-total-count']).toBe(publicOnly.headers['x-total-count']);
    const same = (r: request.Response) => ({ status: r.status, body: r.body, total: r.headers['x-total-count'], type: r.headers['content-type'] });
    for (const apikey of [undefined, other.key]) {
      const get = (modem: string) =>
        apikey
          ? request(ctx.app).get(`/api/rest/v1/punches?modem=${modem}`).set('apikey', apikey)
          : request(ctx.app).get(`/api/rest/v1/punches?modem=${modem}`);
      const hidden = await get('M-4');
      expect(same(hidden)).toEqual(same(await get('NO-SUCH-MODEM')));
      expect(hidden.body).toEqual([]);
    }
    expect((await request(ctx.app).get('/api/rest/v1/punches?modem=M-4').set('apikey', org.key).expect(200)).body.length).toBeGreaterThan(0);
    await request(ctx.app).get('/api/rest/v1/punches?modem=M-4').set('apikey', ctx.adminKey).expect(200);
  });

  it('needs the owner key for a private event: without it, the same answer as for a missing event', async () => {
    const same = (r: request.Response) => ({
      status: r.status,
      body: { ...r.body, traceId: undefined, detail: String(r.body.detail).replace(/\d+/, 'N') },
      type: r.headers['content-type'],
    });
    for (const apikey of [undefined, other.key]) {
      const get = (id: number) =>
        apikey ? request(ctx.app).get(`/api/rest/v1/punches?eventId=${id}`).set('apikey', apikey) : request(ctx.app).get(`/api/rest/v1/punches?eventId=${id}`);
      const hidden = await get(privateEventId);
      expect(hidden.status).toBe(404);
      expect(same(hidden)).toEqual(same(await get(987654)));
    }
    const res = await request(ctx.app).get(`/api/rest/v1/punches?eventId=${privateEventId}`).set('apikey', org.key).expect(200);
    expect(res.body).toHaveLength(5);
    await request(ctx.app).get(`/api/rest/v1/punches?eventId=${privateEventId}`).set('apikey', ctx.adminKey).expect(200);
  });

  it('rejects an invalid key with 401 even on a public read', async () => {
    const res = await request(ctx.app).get(`/api/rest/v1/punches?eventId=${publicEventId}`).set('apikey', 'tk_not-a-key').expect(401);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['www-authenticate']).toBe('apikey');
  });
});

describe('content negotiation', () => {
  const url = () => `/api/rest/v1/punches?eventId=${publicEventId}`;
  it.each([
    ['application/json', 'application/json'],
    ['*/*', 'application/json'],
    ['application/*', 'application/json'],
    ['text/csv', 'text/csv'],
    ['text/*', 'text/csv'],
    ['text/csv;q=0.9, application/json;q=0.1', 'text/csv'],
    ['application/json;q=0.5, text/csv;q=0.4', 'application/json'],
  ])('Accept %s gives %s', async (accept, type) => {
    const res = await request(ctx.app).get(url()).set('Accept', accept).expect(200);
    expect(res.headers['content-type']).toBe(`${type}; charset=utf-8`);
    expect(res.headers.vary).toMatch(/Accept/);
  });

  it('answers 406 for Accept: application/xml', async () => {
    const res = await request(ctx.app).get(url()).set('Accept', 'application/xml').expect(406);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});

describe('compression', () => {
  it('gzips a large page when asked, never brotli, and leaves small bodies alone', async () => {
    const big = `/api/rest/v1/punches?user=poller`;
    let res = await request(ctx.app).get(big).set('apikey', ctx.adminKey).set('Accept-Encoding', 'gzip').expect(200);
    expect(res.headers['content-encoding']).toBe('gzip');
    expectPunchArray(res.body);
    expect(res.body).toHaveLength(1000);
    res = await request(ctx.app).get(big).set('apikey', ctx.adminKey).set('Accept', 'text/csv').set('Accept-Encoding', 'br, gzip, deflate').expect(200);
    expect(res.headers['content-encoding']).toBe('gzip');
    res = await request(ctx.app).get(big).set('apikey', ctx.adminKey).set('Accept-Encoding', 'br').expect(200);
    expect(res.headers['content-encoding']).toBeUndefined();
    res = await request(ctx.app).get(big).set('apikey', ctx.adminKey).set('Accept-Encoding', 'identity').expect(200);
    expect(res.headers['content-encoding']).toBeUndefined();
    res = await request(ctx.app).get('/api/rest/v1/punches?modem=M-2&afterId=999999').set('Accept-Encoding', 'gzip').expect(200);
    expect(res.headers['content-encoding']).toBeUndefined();
    // The head-versioned weak tag (punches.http-cache.test.ts), never a hash of the body.
    expect(res.headers.etag).toMatch(/^W\/"[A-Za-z0-9_-]{22}"$/);
  });
});
