/**
 * ERP webhooks (`receiveErpWebhook`) with the ERP simulator delivering over real
 * HTTP to the ordering app listening on a real port, and a real PostgreSQL: changing an article's shop
 * field in the simulator changes the shop's article list; repeated deliveries coalesce into one piece of
 * work with one effect; a forged delivery (wrong/missing secret) records nothing; the body is never
 * trusted (the entity is re-read); unknown entities are acknowledged and ignored; an ERP outage during
 * processing is retried later.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { ARTICLE_NUMBERS, CUSTOMER_NUMBERS, createErpSimulator, type ErpSimulator } from '@sports-timing/erp-simulator';
import { DEV_ERP_WEBHOOK_SECRET } from '@sports-timing/shared';
import { importArticles } from '../src/catalog/catalog.import';
import { ErpWebhookWorker, verifyWebhookSecret } from '../src/erp/erp-webhook.service';
import { startOrdering, type OrderingTestContext } from './support/app';
import { testTime } from '@sports-timing/shared/src/test-time';

let sim: ErpSimulator;
let ctx: OrderingTestContext;
let server: Server;
let webhookUrl: string;
let worker: ErpWebhookWorker;

beforeAll(async () => {
  sim = await createErpSimulator({ webhookTimeoutMs: testTime(5_000) }).start();
  ctx = await startOrdering({
    ERP_BASE_URL_WECLAPP: sim.baseUrl('main'),
    ERP_BASE_URL_WECLAPP_SANDBOX: sim.baseUrl('sandbox'),
    ERP_TIMEOUT_MS: String(testTime(1_000)),
  });
  server = ctx.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  webhookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/rest/v1/erp/webhook?erpSystem=weclapp&secret=${DEV_ERP_WEBHOOK_SECRET}`;
});
afterAll(async () => {
  await worker?.stop();
  await new Promise((r) => server.close(r));
  await ctx.close();
  await sim.stop();
});
beforeEach(async () => {
  await worker?.stop();
  sim.reset();
  sim.server.clearFaults();
  await ctx.database.db.deleteFrom('erp_webhook_jobs').execute();
  await ctx.database.db.deleteFrom('articles').execute();
  await importArticles(deps(), 'weclapp');
  worker = new ErpWebhookWorker({
    db: ctx.database.db,
    erp: ctx.services.erpClients.client,
    logger: ctx.deps.logger,
    handlers: ctx.services.erpEntityHandlers,
    listenUrl: ctx.testDb.url,
    pollMs: 200,
    baseBackoffMs: 50,
  });
});

function deps() {
  return { db: ctx.database.db, erp: ctx.services.erpClients.client, logger: ctx.deps.logger, caches: ctx.services.caches };
}
const shopList = async () =>
  ((await request(ctx.app).get('/api/grpc-json/v1/shop/articles').expect(200)).body as { articleNumber: string }[]).map((a) => a.articleNumber);
async function eventually(check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const until = Date.now() + testTime(ms);
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
const jobs = () => ctx.database.db.selectFrom('erp_webhook_jobs').selectAll().execute();
const articleIdOf = async (number: string) => (await ctx.services.erpClients.client.findArticleByNumber('weclapp', number))!.id;

describe('ERP webhook', () => {
  it('changing the shop field in the ERP changes the shop article list (simulator → webhook → re-import)', async () => {
    await worker.start();
    sim.subscribe(webhookUrl);
    expect(await shopList()).toContain(ARTICLE_NUMBERS.bsm8);
    const { deliveries } = await sim.patchEntity('article', ARTICLE_NUMBERS.bsm8, { attributes: { shopArticle: false } });
    expect(deliveries.map((d) => d.status)).toEqual([200]);
    await eventually(async () => !(await shopList()).includes(ARTICLE_NUMBERS.bsm8));
    await sim.patchEntity('article', ARTICLE_NUMBERS.bsm8, { attributes: { shopArticle: true }, name: 'BSM8 master station (USB-C)' });
    await eventually(async () => (await shopList()).includes(ARTICLE_NUMBERS.bsm8));
    const row = await ctx.database.db.selectFrom('articles').select(['name']).where('article_number', '=', ARTICLE_NUMBERS.bsm8).executeTakeFirstOrThrow();
    expect(row.name.en).toBe('BSM8 master station (USB-C)');
    await eventually(async () => (await jobs()).length === 0);
  });

  it('repeated deliveries coalesce into one job with one ERP read and one effect', async () => {
    const id = await articleIdOf(ARTICLE_NUMBERS.bsf8);
    await sim.patchEntity('article', ARTICLE_NUMBERS.bsf8, { name: 'BSF8 v2' });
    const answers = await Promise.all(Array.from({ length: 8 }, () => sim.deliverWebhook(webhookUrl, { entityName: 'article', entityId: id, type: 'update' })));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    const pending = await jobs();
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({ entity_name: 'article', entity_id: id, deliveries: 8, generation: 8 });
    sim.server.requests.length = 0;
    const before = await ctx.database.db.selectFrom('articles').select('updated_at').where('article_number', '=', 'BSF8').executeTakeFirstOrThrow();
    expect(await worker.drain()).toBe(1);
    expect(sim.server.requests.filter((r) => r.path.endsWith(`/article/id/${id}`))).toHaveLength(1);
    const after = await ctx.database.db.selectFrom('articles').select(['updated_at', 'name']).where('article_number', '=', 'BSF8').executeTakeFirstOrThrow();
    expect(after.name.en).toBe('BSF8 v2');
    expect(after.updated_at.getTime()).toBeGreaterThan(before.updated_at.getTime());
    expect(await jobs()).toEqual([]);
    // The same delivery again: processed, but the stored version matches — nothing written.
    await sim.deliverWebhook(webhookUrl, { entityName: 'article', entityId: id, type: 'update' });
    await worker.drain();
    expect(
      (await ctx.database.db.selectFrom('articles').select('updated_at').where('article_number', '=', 'BSF8').executeTakeFirstOrThrow()).updated_at,
    ).toEqual(after.updated_at);
  });

  it('two workers draining at once process every job exactly once (FOR UPDATE SKIP LOCKED)', async () => {
    const numbers = [ARTICLE_NUMBERS.bsf8, ARTICLE_NUMBERS.bs11, ARTICLE_NUMBERS.bsm8, ARTICLE_NUMBERS.siac, ARTICLE_NUMBERS.siCard9, ARTICLE_NUMBERS.siCard10];
    const ids = await Promise.all(numbers.map(articleIdOf));
    for (const id of ids)
      await request(ctx.app)
        .post('/api/rest/v1/erp/webhook')
        .query({ erpSystem: 'weclapp', secret: DEV_ERP_WEBHOOK_SECRET })
        .send({ entityName: 'article', entityId: id, type: 'update' })
        .expect(200);
    sim.server.requests.length = 0;
    const other = new ErpWebhookWorker({
      db: ctx.database.db,
      erp: ctx.services.erpClients.client,
      logger: ctx.deps.logger,
      handlers: ctx.services.erpEntityHandlers,
    });
    const [a, b] = await Promise.all([worker.drain(), other.drain()]);
    expect(a + b).toBe(ids.length);
    for (const id of ids) expect(sim.server.requests.filter((r) => r.path.endsWith(`/article/id/${id}`))).toHaveLength(1);
    expect(await jobs()).toEqual([]);
  });

  it('a changed customer re-imports the retailer list (public flag set in the ERP → public list)', async () => {
    await worker.start();
    sim.subscribe(webhookUrl);
    const publicNames = async () =>
      ((await request(ctx.app).get('/api/rest/v1/shop/retailers/public-list').expect(200)).body as { name: string }[]).map((r) => r.name);
    await sim.patchEntity('customer', CUSTOMER_NUMBERS.retailerNorway, { attributes: { retailerPublic: true } });
    await eventually(async () => (await publicNames()).includes('Nordic Orienteering AS'));
    await sim.patchEntity('customer', CUSTOMER_NUMBERS.retailerNorway, { attributes: { retailer: false } });
    await eventually(async () => !(await publicNames()).includes('Nordic Orienteering AS'));
  });

  it('refuses forged deliveries (wrong or missing secret) and records nothing', async () => {
    const id = await articleIdOf(ARTICLE_NUMBERS.bsf8);
    const body = { entityName: 'article', entityId: id, type: 'delete' };
    await request(ctx.app)
      .post('/api/rest/v1/erp/webhook')
      .query({ erpSystem: 'weclapp', secret: 'x'.repeat(33) })
      .send(body)
      .expect(401);
    await request(ctx.app)
      .post('/api/rest/v1/erp/webhook')
      .query({ erpSystem: 'weclapp', secret: DEV_ERP_WEBHOOK_SECRET.slice(0, -1) })
      .send(body)
      .expect(401);
    await request(ctx.app).post('/api/rest/v1/erp/webhook').query({ erpSystem: 'weclapp' }).send(body).expect(401);
    expect(await jobs()).toEqual([]);
    expect(verifyWebhookSecret(undefined, 'anything-long-enough')).toBe(false);
    expect(verifyWebhookSecret(DEV_ERP_WEBHOOK_SECRET, DEV_ERP_WEBHOOK_SECRET)).toBe(true);
  });

  it('never trusts the body: a "delete" for an article that is still a shop article changes nothing', async () => {
    const id = await articleIdOf(ARTICLE_NUMBERS.bsf8);
    await request(ctx.app)
      .post('/api/rest/v1/erp/webhook')
      .query({ erpSystem: 'weclapp', secret: DEV_ERP_WEBHOOK_SECRET })
      .send({ entityName: 'article', entityId: id, type: 'delete' })
      .expect(200);
    await worker.drain();
    expect(await shopList()).toContain(ARTICLE_NUMBERS.bsf8);
    // An id the ERP does not know (deleted there) takes a stored article with that id out of the shop.
    await ctx.database.db.updateTable('articles').set({ erp_id: '999999' }).where('article_number', '=', ARTICLE_NUMBERS.bs11).execute();
    await request(ctx.app)
      .post('/api/rest/v1/erp/webhook')
      .query({ erpSystem: 'weclapp', secret: DEV_ERP_WEBHOOK_SECRET })
      .send({ entityName: 'article', entityId: '999999', type: 'delete' })
      .expect(200);
    await worker.drain();
    expect(await shopList()).not.toContain(ARTICLE_NUMBERS.bs11);
  });

  it("accepts weclapp's GET delivery (requestMethod GET: the fields as query parameters), with the same secret check", async () => {
    const id = await articleIdOf(ARTICLE_NUMBERS.bsf8);
    const q = { erpSystem: 'weclapp', entityName: 'article', entityId: id, type: 'update' };
    await request(ctx.app)
      .get('/api/rest/v1/erp/webhook')
      .query({ ...q, secret: 'x'.repeat(33) })
      .expect(401);
    await request(ctx.app).get('/api/rest/v1/erp/webhook').query({ erpSystem: 'weclapp', secret: DEV_ERP_WEBHOOK_SECRET, entityName: 'article' }).expect(400);
    expect(await jobs()).toEqual([]);
    await request(ctx.app)
      .get('/api/rest/v1/erp/webhook')
      .query({ ...q, secret: DEV_ERP_WEBHOOK_SECRET })
      .expect(200);
    expect(await jobs()).toHaveLength(1);
  });

  it('records exactly the entity names composed in composition.ts (no registry: the app says what it handles)', async () => {
    const names = Object.keys(ctx.services.erpEntityHandlers).sort();
    expect(names).toEqual(['article', 'customer', 'party', 'salesOrder']);
    for (const entityName of names) {
      await request(ctx.app)
        .post('/api/rest/v1/erp/webhook')
        .query({ erpSystem: 'weclapp', secret: DEV_ERP_WEBHOOK_SECRET })
        .send({ entityName, entityId: 'x-1', type: 'update' })
        .expect(200);
    }
    expect((await jobs()).map((j) => j.entity_name).sort()).toEqual(names);
  });

  it('acknowledges and ignores unknown entity names; rejects malformed bodies', async () => {
    await request(ctx.app)
      .post('/api/rest/v1/erp/webhook')
      .query({ erpSystem: 'weclapp', secret: DEV_ERP_WEBHOOK_SECRET })
      .send({ entityName: 'productionOrder', entityId: '1', type: 'update', extra: true })
      .expect(200);
    expect(await jobs()).toEqual([]);
    await request(ctx.app)
      .post('/api/rest/v1/erp/webhook')
      .query({ erpSystem: 'weclapp', secret: DEV_ERP_WEBHOOK_SECRET })
      .send({ entityName: 'article' })
      .expect(400);
    await request(ctx.app)
      .post('/api/rest/v1/erp/webhook')
      .query({ erpSystem: 'nope', secret: DEV_ERP_WEBHOOK_SECRET })
      .send({ entityName: 'article', entityId: '1', type: 'update' })
      .expect(400);
    expect(await jobs()).toEqual([]);
  });

  it('answers at once while the ERP is down and applies the change once it is back', async () => {
    const id = await articleIdOf(ARTICLE_NUMBERS.bsm8);
    await sim.patchEntity('article', ARTICLE_NUMBERS.bsm8, { attributes: { shopArticle: false } });
    await sim.server.down('reset');
    // Accepted while the ERP refuses every connection: the webhook only queues the change.
    await request(ctx.app)
      .post('/api/rest/v1/erp/webhook')
      .query({ erpSystem: 'weclapp', secret: DEV_ERP_WEBHOOK_SECRET })
      .send({ entityName: 'article', entityId: id, type: 'update' })
      .expect(200);
    await worker.drain();
    const [job] = await jobs();
    expect(job).toMatchObject({ attempts: 1, locked_until: null });
    expect(job.last_error).toMatch(/ERP weclapp/);
    expect(await shopList()).toContain(ARTICLE_NUMBERS.bsm8);
    await sim.server.up();
    await worker.start();
    await eventually(async () => !(await shopList()).includes(ARTICLE_NUMBERS.bsm8));
    await eventually(async () => (await jobs()).length === 0);
  });
});
