/**
 * The demo data is complete on the first start: every article of the ERP simulator's seed is in the demo
 * catalogue with the same category and user group, so the demo operations of the README work before any
 * `import-articles` — among them `createQuotationForSubscription` with the demo's subscription article.
 */
import request from 'supertest';
import { ARTICLE_NUMBERS, createErpSimulator } from '@sports-timing/erp-simulator';
import { importArticles } from '../src/catalog/catalog.import';
import { loadDemoCatalog } from '../src/demo/catalog';
import { startOrdering, type OrderingTestContext } from './support/app';

let ctx: OrderingTestContext;
beforeAll(async () => {
  ctx = await startOrdering();
  await loadDemoCatalog(ctx.database.db);
});
afterAll(async () => {
  await ctx?.close();
});

const articles = () => ctx.database.db.selectFrom('articles').select(['article_number', 'category', 'user_group']).orderBy('article_number').execute();

it('createQuotationForSubscription accepts the demo subscription article on a fresh start (no import-articles)', async () => {
  const customer = await ctx.bearer({ roles: ['customer'], id: 7 });
  await request(ctx.app)
    .post('/api/rest/v1/center/create-quotation-for-subscription')
    .set('authorization', customer)
    .send({
      subscriptionArticleNumber: ARTICLE_NUMBERS.centerSubscription,
      quantity: 1,
      address: {
        firstName: 'Eva',
        lastName: 'Läufer',
        club: 'OLG Nord',
        address1: 'Weg 1',
        zip: '20457',
        city: 'Hamburg',
        country: 'DE',
      },
      email: 'eva@example.com',
    })
    .expect(200);
});

it("the demo catalogue holds every article of the ERP simulator's seed, with its category and user group", async () => {
  const demo = await articles();
  // The shipping cost article exists only for the sales orders' shipping cost items; the shop never lists it.
  const sold = Object.values(ARTICLE_NUMBERS).filter((n) => n !== ARTICLE_NUMBERS.shipping);
  expect(demo.map((a) => a.article_number).sort()).toEqual(sold.sort());
  // Every row an import from the simulator gives is in the demo as it is: the demo anticipates the ERP's data.
  const sim = await createErpSimulator().start();
  try {
    const imported = await startOrdering({ ERP_BASE_URL_WECLAPP: sim.baseUrl('main') });
    try {
      await importArticles(
        {
          db: imported.database.db,
          erp: imported.services.erpClients.client,
          logger: imported.deps.logger,
          caches: imported.services.caches,
        },
        'weclapp',
      );
      const fromErp = await imported.database.db
        .selectFrom('articles')
        .select(['article_number', 'category', 'user_group'])
        .orderBy('article_number')
        .execute();
      // (The import leaves out what the ERP marks as no shop article, such as the spare board.)
      expect(fromErp.length).toBeGreaterThan(10);
      for (const row of fromErp) expect(demo).toContainEqual(row);
    } finally {
      await imported.close();
    }
  } finally {
    await sim.stop();
  }
});
