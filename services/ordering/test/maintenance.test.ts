import { Kysely, PostgresDialect } from 'kysely';
import request from 'supertest';
import { createDatabase, createLogger, loadSpec, type Database } from '@sports-timing/shared';
import { createApp } from '../src/app';
import { composeOrdering } from '../src/composition';
import type { DB } from '../src/db/schema';
import { readMaintenanceState, setMaintenanceEnabled } from '../src/maintenance/maintenance.repository';
import { MAINTENANCE_GATED_TAGS } from '../src/maintenance/maintenance.middleware';
import { MaintenanceMode } from '../src/maintenance/maintenance.service';
import { SPEC_FILE } from '../src/version';
import { startOrdering, type OrderingTestContext } from './support/app';
import { testNote } from '@sports-timing/shared/src/testing';
import { testTime, testConnectTimeoutMs } from '@sports-timing/shared/src/test-time';

let ctx: OrderingTestContext;
let admin: string;
beforeAll(async () => {
  ctx = await startOrdering({ MAINTENANCE_RETRY_AFTER_SECONDS: '120' });
  admin = await ctx.bearer({ roles: ['admin'] });
});
afterAll(async () => ctx.close());

const enable = async (app = ctx.app) => request(app).post('/api/rest/v1/maintenance/enable-maintenance-mode').set('authorization', admin).expect(200);
const disable = async (app = ctx.app) => request(app).post('/api/rest/v1/maintenance/disable-maintenance-mode').set('authorization', admin).expect(200);

interface SpecOperation {
  method: string;
  path: string;
  operationId: string;
  tags: string[];
  responses: Record<string, unknown>;
}

function specOperations(): SpecOperation[] {
  const spec = loadSpec(SPEC_FILE);
  const out: SpecOperation[] = [];
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const o = op as { operationId?: string; tags?: string[]; responses?: Record<string, unknown> };
      if (!o?.operationId) continue;
      out.push({ method, path, operationId: o.operationId, tags: o.tags ?? [], responses: o.responses ?? {} });
    }
  }
  return out;
}

/** A concrete URL for a spec path (any value matches a path parameter before validation). */
const concrete = (path: string) => path.replace(/\{cardType\}/g, 'siac1').replace(/\{[^}]+\}/g, '8000001');

describe('maintenance mode: which operations close', () => {
  afterEach(async () => disable());

  it('documents 503 with Retry-After on every operation of a gated tag (the gate follows the spec tags)', () => {
    const gated = specOperations().filter((o) => o.tags.some((t) => MAINTENANCE_GATED_TAGS.includes(t)));
    expect(gated.length).toBeGreaterThanOrEqual(16);
    for (const o of gated) expect([o.operationId, Object.keys(o.responses)]).toEqual([o.operationId, expect.arrayContaining(['503'])]);
  });

  it('answers every shop operation with google.rpc.Status UNAVAILABLE and Retry-After, before reading the body', async () => {
    await enable();
    const shop = specOperations().filter((o) => o.tags.includes('shop'));
    for (const o of shop) {
      const req = (request(ctx.app) as unknown as Record<string, (url: string) => request.Test>)[o.method](concrete(o.path));
      const res = await req
        .set('authorization', admin)
        .set('content-type', 'application/json')
        .send(o.method === 'post' ? '{not json' : undefined);
      expect([o.operationId, res.status]).toEqual([o.operationId, 503]);
      expect(res.headers['retry-after']).toBe('120');
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toMatchObject({ code: 14, details: [] });
    }
  });

  it('answers every card-reservation operation, including POST /order, with problem+json 503', async () => {
    await enable();
    const area = specOperations().filter((o) => o.tags.includes('card-reservation'));
    expect(area.map((o) => o.operationId)).toEqual(expect.arrayContaining(['createOrder', 'getCardsInfo', 'isCardFree']));
    for (const o of area) {
      const req = (request(ctx.app) as unknown as Record<string, (url: string) => request.Test>)[o.method](concrete(o.path));
      const res = await req.set('authorization', admin);
      expect([o.operationId, res.status]).toEqual([o.operationId, 503]);
      expect(res.headers['retry-after']).toBe('120');
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.body).toMatchObject({ status: 503, detail: expect.stringMatching(/maintenance/) });
    }
  });

  it('keeps health, version, battery lookup, callbacks, administration and the dev utilities working', async () => {
    await enable();
    await request(ctx.app).get('/healthz').expect(200);
    await request(ctx.app).get('/readyz').expect(200);
    await request(ctx.app).get('/api/rest/v1/version').expect(200);
    const battery = await request(ctx.app).get('/api/rest/v1/products/si-cards/8000001');
    expect([200, 404]).toContain(battery.status);
    // The payment webhook is still received (here rejected by validation, not by maintenance).
    await request(ctx.app).post('/api/rest/v1/payment-provider/status').send({}).expect(400);
    await request(ctx.app).get('/api/rest/v1/dev/uptime-monitor-status').expect(200);
    const env = await request(ctx.app).get('/api/rest/v1/dev/environment').set('authorization', admin).expect(200);
    expect(env.body.maintenanceMode).toBe(true);
    await request(ctx.app).get('/api/rest/v1/users').set('authorization', admin).expect(200);
  });

  it('checks access before maintenance: anonymous callers of a secured shop operation still get 401', async () => {
    await enable();
    const res = await request(ctx.app).post('/api/grpc-json/v1/shop/discount-codes/create').send({}).expect(401);
    expect(res.body).toMatchObject({ code: 16 });
  });

  it('opens again when disabled, and enabling or disabling twice is harmless', async () => {
    await enable();
    await enable();
    await request(ctx.app).get('/api/rest/v1/get-cards-info').expect(503);
    await disable();
    await disable();
    await request(ctx.app).get('/api/rest/v1/get-cards-info').expect(200);
    await request(ctx.app).get('/api/grpc-json/v1/shop/articles').expect(200);
    const state = await readMaintenanceState(ctx.database.db);
    expect(state).toMatchObject({ enabled: false, changedBy: 'user:1:test' });
  });

  it('is admin-only', async () => {
    await request(ctx.app).post('/api/rest/v1/maintenance/enable-maintenance-mode').expect(401);
    await request(ctx.app)
      .post('/api/rest/v1/maintenance/enable-maintenance-mode')
      .set('authorization', await ctx.bearer({ roles: ['support'] }))
      .expect(403);
  });
});

describe('maintenance mode across instances', () => {
  let secondDb: Database<DB>;
  beforeAll(() => {
    // A second instance: its own pool and app over the same database, as behind a load balancer.
    secondDb = createDatabase<DB>({ connectTimeoutMs: testConnectTimeoutMs(), url: ctx.testDb.url, schema: 'ordering', logger: createLogger('second') });
  });
  afterAll(async () => {
    await disable();
    await secondDb.close();
  });

  it('a flag set through one instance closes the other, and reopens it likewise', async () => {
    const second = createApp(composeOrdering({ ...ctx.deps, database: secondDb }));
    await request(second).get('/api/rest/v1/get-cards-info').expect(200); // the second instance has read "off"
    const flippedAt = Date.now();
    await enable(ctx.app);
    await request(ctx.app).get('/api/rest/v1/get-cards-info').expect(503); // the flipping instance at once
    let status = 0;
    while (Date.now() - flippedAt < testTime(3_000)) {
      status = (await request(second).get('/api/rest/v1/get-cards-info')).status;
      if (status === 503) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe(503);
    testNote(`maintenance: the other instance closed ${Date.now() - flippedAt} ms after the flag was set`);

    const reopenedAt = Date.now();
    await disable(second);
    while (Date.now() - reopenedAt < testTime(3_000) && (await request(ctx.app).get('/api/rest/v1/get-cards-info')).status === 503)
      await new Promise((r) => setTimeout(r, 50));
    await request(ctx.app).get('/api/rest/v1/get-cards-info').expect(200);
    testNote(`maintenance: reopened ${Date.now() - reopenedAt} ms after the flag was cleared`);
  });

  it('of many concurrent switches to the same value, exactly one changes the row', async () => {
    await setMaintenanceEnabled(ctx.database.db, false, 'setup');
    const results = await Promise.all(Array.from({ length: 24 }, (_, i) => setMaintenanceEnabled(i % 2 ? secondDb.db : ctx.database.db, true, `racer-${i}`)));
    expect(results.filter(Boolean)).toHaveLength(1);
    const state = await readMaintenanceState(ctx.database.db);
    expect(state.enabled).toBe(true);
    expect(state.changedBy).toBe(`racer-${results.indexOf(true)}`);
    await setMaintenanceEnabled(ctx.database.db, false, 'cleanup');
  });

  it('concurrent readers of a stale cache share one query, and an unreadable database keeps the last known value', async () => {
    let queries = 0;
    const counted = new Kysely<DB>({
      dialect: new PostgresDialect({ pool: secondDb.pool }),
      log: (e) => {
        if (e.level === 'query' && /maintenance_mode/.test(e.query.sql)) queries++;
      },
    });
    const mode = new MaintenanceMode(counted, { cacheMs: 1_000 });
    await setMaintenanceEnabled(ctx.database.db, true, 'reader-test');
    const values = await Promise.all(Array.from({ length: 50 }, () => mode.isOn()));
    expect(values.every((v) => v)).toBe(true);
    expect(queries).toBe(1);
    await Promise.all(Array.from({ length: 50 }, () => mode.isOn()));
    expect(queries).toBe(1); // still fresh

    const doomed = createDatabase<DB>({ connectTimeoutMs: testConnectTimeoutMs(), url: ctx.testDb.url, schema: 'ordering' });
    const outage = new MaintenanceMode(doomed.db, { cacheMs: 0 });
    await expect(outage.isOn()).resolves.toBe(true);
    await doomed.close(); // every later query fails
    await expect(outage.isOn()).resolves.toBe(true);
    await setMaintenanceEnabled(ctx.database.db, false, 'reader-test');
    await expect(new MaintenanceMode(doomed.db).isOn()).resolves.toBe(false); // never read: off
  });
});
