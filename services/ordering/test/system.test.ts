import request from 'supertest';
import { startOrdering, type OrderingTestContext } from './support/app';

let ctx: OrderingTestContext;
beforeAll(async () => {
  ctx = await startOrdering();
});
afterAll(async () => ctx.close());

describe('version and health', () => {
  it('GET /api/rest/v1/version returns the service version record', async () => {
    const res = await request(ctx.app).get('/api/rest/v1/version').expect(200);
    expect(res.body).toMatchObject({ name: 'ordering', version: '1.0.0', apiVersion: '1.0.0' });
  });
  it('is live and ready', async () => {
    await request(ctx.app).get('/healthz').expect(200, { status: 'ok' });
    await request(ctx.app).get('/readyz').expect(200);
  });
});

describe('error areas', () => {
  it('answers unknown shop paths with google.rpc.Status NOT_FOUND', async () => {
    const res = await request(ctx.app).get('/api/grpc-json/v1/shop/nope').expect(404);
    expect(res.body).toMatchObject({ code: 5, details: [] });
  });
  it('answers unknown REST paths with problem+json', async () => {
    const res = await request(ctx.app).get('/api/rest/v1/nope').expect(404);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
  });
});

describe('spec-driven access control', () => {
  it('asks anonymous callers of an admin operation to authenticate, before reading the body', async () => {
    const res = await request(ctx.app)
      .post('/api/rest/v1/maintenance/enable-maintenance-mode')
      .send('{not json')
      .set('content-type', 'application/json')
      .expect(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });
  it('forbids a customer an admin operation', async () => {
    await request(ctx.app)
      .post('/api/rest/v1/maintenance/clear-caches')
      .set('authorization', await ctx.bearer({ roles: ['customer'] }))
      .expect(403);
  });
  it('rejects a forged or foreign token with 401 even on public operations', async () => {
    await request(ctx.app).get('/api/rest/v1/version').set('authorization', 'Bearer eyJhbGciOiJub25lIn0.e30.').expect(401);
  });
  it('answers shop access errors as google.rpc.Status', async () => {
    const res = await request(ctx.app).post('/api/grpc-json/v1/shop/discount-codes/create').send({}).expect(401);
    expect(res.body).toMatchObject({ code: 16 });
  });
});
