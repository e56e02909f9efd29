/**
 * `importArticles` against the ERP simulator over real HTTP and a
 * real PostgreSQL: the custom fields decide shop article and user group, prices/BOMs/translations come
 * along, unchanged ERP versions are skipped unless forced, articles no longer marked leave the shop, the
 * import is idempotent, concurrent imports end in the sequential result, and an ERP that is down or slow
 * answers 503 with nothing written.
 */
import request from 'supertest';
import { ARTICLE_NUMBERS, SEED_ARTICLES, createErpSimulator, type ErpSimulator } from '@sports-timing/erp-simulator';
import { startOrdering, type OrderingTestContext } from './support/app';

let sim: ErpSimulator;
let ctx: OrderingTestContext;
let admin: string;
const SHOP_COUNT = SEED_ARTICLES.filter((a) => a.isShopArticle).length;

beforeAll(async () => {
  sim = await createErpSimulator().start();
  ctx = await startOrdering({ ERP_BASE_URL_WECLAPP: sim.baseUrl('main'), ERP_BASE_URL_WECLAPP_SANDBOX: sim.baseUrl('sandbox'), ERP_TIMEOUT_MS: '500' });
  admin = await ctx.bearer({ roles: ['admin'] });
});
afterAll(async () => {
  await ctx.close();
  await sim.stop();
});
beforeEach(async () => {
  sim.reset();
  sim.server.clearFaults();
  await ctx.database.db.deleteFrom('articles').execute();
});

const runImport = (query: Record<string, string> = {}) =>
  request(ctx.app)
    .post('/api/rest/v1/maintenance/import-articles')
    .query({ erpSystem: 'weclapp', ...query })
    .set('authorization', admin);
const shopList = async (auth?: string) => {
  const r = request(ctx.app).get('/api/grpc-json/v1/shop/articles').query({ includeSubitemArticles: 'true' });
  const res = await (auth ? r.set('authorization', auth) : r).expect(200);
  return (res.body as { articleNumber: string }[]).map((a) => a.articleNumber).sort();
};
const snapshot = async () => ({
  articles: await ctx.database.db
    .selectFrom('articles')
    .select([
      'article_number',
      'erp_version',
      'is_shop_article',
      'user_group',
      'net_price_cents',
      'card_type',
      'is_subitem_only',
      'configurable_attributes',
      'name',
    ])
    .orderBy('article_number')
    .execute(),
  bom: await ctx.database.db.selectFrom('article_bom_items').selectAll().orderBy('main_article_number').orderBy('position').execute(),
});

describe('import-articles', () => {
  it('imports the shop articles with groups, prices, BOMs and translations', async () => {
    const res = await runImport().expect(200);
    expect(res.body).toEqual({ erpSystem: 'weclapp', read: SEED_ARTICLES.length, imported: SHOP_COUNT, unchanged: 0, removed: 0, rejected: [] });
    const internal = await ctx.bearer({ roles: ['admin'] });
    expect(await shopList(internal)).toEqual(
      SEED_ARTICLES.filter((a) => a.isShopArticle)
        .map((a) => a.articleNumber)
        .sort(),
    );
    const publicList = await shopList();
    expect(publicList).not.toContain(ARTICLE_NUMBERS.bsf8RetailerPack);
    expect(publicList).not.toContain(ARTICLE_NUMBERS.siacBatteryService);
    expect(publicList).not.toContain(ARTICLE_NUMBERS.spareBoard);
    const rows = await ctx.database.db.selectFrom('articles').selectAll().execute();
    const siac = rows.find((r) => r.article_number === ARTICLE_NUMBERS.siac)!;
    expect(siac).toMatchObject({ net_price_cents: 5034, card_type: 'siac1', user_group: 'public', is_shop_article: true, erp_version: '0' });
    expect(Number(siac.vat_rate_percent)).toBe(19);
    expect(siac.name).toEqual({ en: 'SIAC', de: 'SIAC', fr: 'SIAC' });
    expect(siac.configurable_attributes.map((a) => a.key)).toEqual(['cardNumber', 'feedbackSignal', 'personalDataFirstName', 'personalDataLastName']);
    expect(rows.find((r) => r.article_number === ARTICLE_NUMBERS.bsf8RetailerPack)!.user_group).toBe('retailer');
    expect(rows.find((r) => r.article_number === ARTICLE_NUMBERS.cardHolder)!.is_subitem_only).toBe(true);
    expect(rows.find((r) => r.article_number === ARTICLE_NUMBERS.spareBoard)).toBeUndefined();
    const bom = await ctx.database.db
      .selectFrom('article_bom_items')
      .selectAll()
      .where('main_article_number', '=', ARTICLE_NUMBERS.trainingSet)
      .orderBy('position')
      .execute();
    expect(bom.map((b) => [b.position, b.default_article_number, b.quantity, b.is_locked, b.is_configurable])).toEqual([
      [1, 'BSF8', 5, true, false],
      [2, 'SIAC1', 1, false, true],
      [3, 'CARD-HOLDER', 1, false, false],
      [4, 'BAT-BSF8', 5, true, false],
    ]);
    expect(bom[1].valid_article_numbers).toEqual(['SIAC1', 'SI-CARD10']);
    expect(bom[1].excluded_custom_attributes).toEqual(['personalDataFirstName', 'personalDataLastName']);
  });

  it('skips unchanged ERP versions unless forced, and is idempotent', async () => {
    await runImport().expect(200);
    const first = await snapshot();
    expect((await runImport().expect(200)).body).toMatchObject({ imported: 0, unchanged: SHOP_COUNT, removed: 0 });
    expect(await snapshot()).toEqual(first);
    expect((await runImport({ updateEvenIfErpVersionMatches: 'true' }).expect(200)).body).toMatchObject({ imported: SHOP_COUNT, unchanged: 0 });
    expect(await snapshot()).toEqual(first);
    // A changed price bumps the version: only that article is imported again.
    // weclapp's price list carries other channels, customer prices and validity dates: only the NET1 list price for
    // everyone, valid today, from one unit on, is the shop's price.
    const day = 86_400_000;
    const price = (p: Record<string, unknown>) => ({
      id: `p${Math.random()}`,
      currencyId: '248',
      currencyName: 'EUR',
      priceScaleType: 'SCALE_FROM',
      priceScaleValue: '1',
      salesChannel: 'NET1',
      ...p,
    });
    await sim.patchEntity('article', ARTICLE_NUMBERS.bsf8, {
      articlePrices: [
        price({ price: '99.00', salesChannel: 'NET2' }),
        price({ price: '98.00', customerId: '1234' }),
        price({ price: '97.00', endDate: Date.now() - day }),
        price({ price: '96.00', startDate: Date.now() + day }),
        price({ price: '95.00', priceScaleValue: '10' }),
        price({ price: '170.00' }),
      ],
    });
    expect((await runImport().expect(200)).body).toMatchObject({ imported: 1, unchanged: SHOP_COUNT - 1 });
    expect(
      (await ctx.database.db.selectFrom('articles').select('net_price_cents').where('article_number', '=', 'BSF8').executeTakeFirstOrThrow()).net_price_cents,
    ).toBe(17000);
    expect(sim.contractViolations).toEqual([]);
  });

  it('takes articles out of the shop when the shop field is cleared, and back in when set', async () => {
    await runImport().expect(200);
    await sim.patchEntity('article', ARTICLE_NUMBERS.bsm8, { attributes: { shopArticle: false } });
    expect((await runImport().expect(200)).body).toMatchObject({ imported: 0, removed: 1 });
    expect(await shopList()).not.toContain(ARTICLE_NUMBERS.bsm8);
    expect((await runImport().expect(200)).body).toMatchObject({ imported: 0, removed: 0 });
    await sim.patchEntity('article', ARTICLE_NUMBERS.bsm8, { attributes: { shopArticle: true, shopUserGroup: 'retailer' } });
    expect((await runImport().expect(200)).body).toMatchObject({ imported: 1, removed: 0 });
    expect(await shopList()).not.toContain(ARTICLE_NUMBERS.bsm8);
    expect(await shopList(await ctx.bearer({ roles: ['retailer'] }))).toContain(ARTICLE_NUMBERS.bsm8);
  });

  it('concurrent imports (plain and forced) end in the sequential result without errors', async () => {
    await runImport().expect(200);
    const sequential = await snapshot();
    await ctx.database.db.deleteFrom('articles').execute();
    const answers = await Promise.all([
      runImport(),
      runImport(),
      runImport({ updateEvenIfErpVersionMatches: 'true' }),
      runImport({ updateEvenIfErpVersionMatches: 'true' }),
      runImport(),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    // Unforced imports together write each article at least once overall; the state is the sequential one.
    expect(await snapshot()).toEqual(sequential);
  });

  it('answers 503 and writes nothing when the ERP is down or too slow', async () => {
    await sim.server.down('reset');
    const down = await runImport().expect(503);
    expect(down.headers['retry-after']).toBe('30');
    expect(down.body.detail).toMatch(/ERP system is not available/);
    expect(await ctx.database.db.selectFrom('articles').selectAll().execute()).toEqual([]);
    await sim.server.up();
    // The article list read is slower than the deadline on every attempt.
    sim.server.delay({ ms: 2_000, count: 10, path: '/webapp/api/v1/article' });
    await runImport().expect(503);
    expect(await ctx.database.db.selectFrom('articles').selectAll().execute()).toEqual([]);
  });

  it('rejects unknown ERP systems and non-admins', async () => {
    await runImport({ erpSystem: 'sap' }).expect(400);
    await request(ctx.app)
      .post('/api/rest/v1/maintenance/import-articles')
      .query({ erpSystem: 'weclapp' })
      .set('authorization', await ctx.bearer({ roles: ['support'] }))
      .expect(403);
  });
});
