import request from 'supertest';
import { startTiming, type TimingTestContext } from './helpers';

let ctx: TimingTestContext;
beforeAll(async () => {
  ctx = await startTiming();
});
afterAll(async () => ctx.close());

describe('GET /api/rest/v1/public/versions', () => {
  it('returns the public API version from the spec and the internal version from the package', async () => {
    const res = await request(ctx.app).get('/api/rest/v1/public/versions').expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json; charset=utf-8/);
    expect(res.body).toEqual({ internalApiVersion: '1.0.0', publicApiVersion: '1.0.0' });
  });
});

describe('health', () => {
  it('is live and ready with the database up', async () => {
    await request(ctx.app).get('/healthz').expect(200, { status: 'ok' });
    // Beside the checks, what the visible punch head waits on (spec `PunchVisibility`; informational). The probe
    // never waits for that reading: the first answers start it, later ones carry it.
    let ready = await request(ctx.app).get('/readyz').expect(200);
    while (ready.body.punchVisibility === undefined) {
      await new Promise((r) => setTimeout(r, 20));
      ready = await request(ctx.app).get('/readyz').expect(200);
    }
    expect(ready.body).toEqual({ status: 'ready', checks: { database: 'up' }, punchVisibility: expect.objectContaining({ waitSeconds: expect.any(Number) }) });
    expect(ready.body.punchVisibility.waitSeconds).toBeGreaterThanOrEqual(0);
  });
});

describe('errors', () => {
  it('answers an unknown path with 404 problem+json', async () => {
    const res = await request(ctx.app).get('/api/rest/v1/nope').expect(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 404, title: 'Not Found' });
  });
  it('answers a wrong method with 405 and Allow', async () => {
    const res = await request(ctx.app).post('/api/rest/v1/public/versions').expect(405);
    expect(res.headers.allow).toMatch(/GET/);
    expect(res.body).toMatchObject({ status: 405 });
  });
});
