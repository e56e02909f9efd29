/**
 * Retailers, localized imports and the shop-article CSV (`listPublicRetailers`, `listInternalRetailers`,
 * `importRetailers`, `getShopArticlesAsCsv`) against the ERP simulator over real HTTP and a real PostgreSQL:
 * `import-retailers` replaces the list atomically (public vs internal fields and lists, removed retailers
 * disappear, ERP down → 503 and the old list stays), localized countries / product options are stored per culture
 * and served by the country and article answers, duplicates are rejected without writes, concurrent imports are
 * safe, and the CSV export is formula-safe.
 */
import request from 'supertest';
import { parse } from 'csv-parse/sync';
import { ARTICLE_NUMBERS, CUSTOMER_NUMBERS, createErpSimulator, type ErpSimulator } from '@sports-timing/erp-simulator';
import { importArticles } from '../src/catalog/catalog.import';
import { startOrdering, type OrderingTestContext } from './support/app';
import { testTime } from '@sports-timing/shared/src/test-time';

let sim: ErpSimulator;
let ctx: OrderingTestContext;
let admin: string;

beforeAll(async () => {
  sim = await createErpSimulator().start();
  ctx = await startOrdering({
    ERP_BASE_URL_WECLAPP: sim.baseUrl('main'),
    ERP_BASE_URL_WECLAPP_SANDBOX: sim.baseUrl('sandbox'),
    ERP_TIMEOUT_MS: String(testTime(1_000)),
  });
  admin = await ctx.bearer({ roles: ['admin'] });
});
afterAll(async () => {
  await ctx.close();
  await sim.stop();
});
beforeEach(() => {
  sim.reset();
  sim.server.clearFaults();
});

const importRetailers = () => request(ctx.app).post('/api/rest/v1/maintenance/import-retailers').set('authorization', admin);

describe('retailers', () => {
  it('imports retailers; the public list shows public ones with public fields, the internal list all', async () => {
    const res = await importRetailers().expect(200);
    expect(res.body).toBe('Imported 3 retailers (2 public), removed 0.');
    const pub = (await request(ctx.app).get('/api/rest/v1/shop/retailers/public-list').expect(200)).body;
    expect(pub).toEqual([
      {
        name: 'Swiss Timing Supplies AG',
        address1: 'Bahnhofplatz 3',
        address2: '2. Stock',
        zip: '3011',
        city: 'Bern',
        state: 'BE',
        countryCode: 'CH',
        servedCountryCodes: ['CH', 'LI'],
        email: 'info@swiss-timing-supplies.example',
        phoneNumber: '+41315550101',
        website: 'https://swiss-timing-supplies.example',
      },
      {
        name: 'OL-Sport Nord GmbH',
        address1: 'Hafenstraße 12',
        address2: null,
        zip: '20457',
        city: 'Hamburg',
        state: null,
        countryCode: 'DE',
        servedCountryCodes: ['DE', 'AT', 'DK'],
        email: 'shop@ol-sport-nord.example',
        phoneNumber: '+494012345670',
        website: 'https://ol-sport-nord.example',
      },
    ]);
    const support = await ctx.bearer({ roles: ['support'] });
    const internal = (await request(ctx.app).get('/api/rest/v1/shop/retailers/internal-list').set('authorization', support).expect(200)).body;
    expect(internal.map((r: { customerNumber: string }) => r.customerNumber)).toEqual([
      CUSTOMER_NUMBERS.retailerSwitzerland,
      CUSTOMER_NUMBERS.retailerGermany,
      CUSTOMER_NUMBERS.retailerNorway,
    ]);
    expect(internal[2]).toMatchObject({ isPublic: false, name: 'Nordic Orienteering AS', website: null });
    expect(typeof internal[0].erpEntityId).toBe('string');
    await request(ctx.app).get('/api/rest/v1/shop/retailers/internal-list').expect(401);
    await request(ctx.app)
      .get('/api/rest/v1/shop/retailers/internal-list')
      .set('authorization', await ctx.bearer({ roles: ['retailer'] }))
      .expect(403);
  });

  it('re-import reflects ERP changes (retailer flag cleared → removed; public flag) and is idempotent', async () => {
    await importRetailers().expect(200);
    await sim.patchEntity('customer', CUSTOMER_NUMBERS.retailerGermany, { attributes: { retailer: false } });
    await sim.patchEntity('customer', CUSTOMER_NUMBERS.retailerNorway, { attributes: { retailerPublic: true } });
    expect((await importRetailers().expect(200)).body).toBe('Imported 2 retailers (2 public), removed 1.');
    expect((await importRetailers().expect(200)).body).toBe('Imported 2 retailers (2 public), removed 0.');
    const pub = (await request(ctx.app).get('/api/rest/v1/shop/retailers/public-list').expect(200)).body;
    expect(pub.map((r: { countryCode: string }) => r.countryCode)).toEqual(['CH', 'NO']);
  });

  it('concurrent imports are safe; ERP down → 503 and the stored list stays', async () => {
    const answers = await Promise.all(Array.from({ length: 4 }, () => importRetailers()));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(await ctx.database.db.selectFrom('retailers').selectAll().execute()).toHaveLength(3);
    await sim.server.down('reset');
    await importRetailers().expect(503);
    await sim.server.up();
    expect(await ctx.database.db.selectFrom('retailers').selectAll().execute()).toHaveLength(3);
  });
});

describe('localized imports', () => {
  const countries = (body: object) => request(ctx.app).post('/api/rest/v1/maintenance/import-localized-countries').set('authorization', admin).send(body);
  const options = (body: object) => request(ctx.app).post('/api/rest/v1/maintenance/import-localized-product-options').set('authorization', admin).send(body);

  it('stores a country list per culture and the country operation serves it', async () => {
    expect(
      (
        await countries({
          culture: 'de-CH',
          countries: [
            { countryCode: 'CH', name: 'Schweiz' },
            { countryCode: 'DE', name: 'Deutschland' },
          ],
        }).expect(200)
      ).body,
    ).toBe('Imported 2 countries for culture de-CH.');
    const res = await request(ctx.app).get('/api/grpc-json/v1/shop/countries').set('accept-language', 'de-CH').expect(200);
    expect(JSON.stringify(res.body)).toContain('Schweiz');
    // Replaced, not merged.
    await countries({ culture: 'de-CH', countries: [{ countryCode: 'CH', name: 'Schwiiz' }] }).expect(200);
    expect(await ctx.database.db.selectFrom('localized_countries').select(['country_code', 'name']).where('culture', '=', 'de-CH').execute()).toEqual([
      { country_code: 'CH', name: 'Schwiiz' },
    ]);
  });

  it('rejects duplicates and unknown codes without writing', async () => {
    await countries({
      culture: 'it',
      countries: [
        { countryCode: 'IT', name: 'Italia' },
        { countryCode: 'IT', name: 'Italia' },
      ],
    }).expect(400);
    await countries({ culture: 'it', countries: [{ countryCode: 'XX', name: 'Nowhere' }] }).expect(400);
    await options({
      culture: 'it',
      attributes: [
        { key: 'feedbackSignal', label: 'a' },
        { key: 'feedbackSignal', label: 'b' },
      ],
    }).expect(400);
    await countries({ culture: 'it', countries: [] }).expect(400);
    expect(await ctx.database.db.selectFrom('localized_countries').selectAll().where('culture', '=', 'it').execute()).toEqual([]);
    await request(ctx.app)
      .post('/api/rest/v1/maintenance/import-localized-countries')
      .set('authorization', await ctx.bearer({ roles: ['support'] }))
      .send({ culture: 'it', countries: [{ countryCode: 'IT', name: 'Italia' }] })
      .expect(403);
  });

  it('stores product option labels per culture, used by the article answers; concurrent imports are safe', async () => {
    const body = { culture: 'nl', attributes: [{ key: 'feedbackSignal', label: 'Terugkoppeling', options: [{ value: 'silent', label: 'Stil' }] }] };
    const answers = await Promise.all(Array.from({ length: 4 }, () => options(body)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(answers[0].body).toBe('Imported 1 product options for culture nl.');
    await ctx.database.db.deleteFrom('articles').execute();
    await importArticles({ db: ctx.database.db, erp: ctx.services.erpClients.client, logger: ctx.deps.logger, caches: ctx.services.caches }, 'weclapp');
    const res = await request(ctx.app).get(`/api/grpc-json/v1/shop/articles/${ARTICLE_NUMBERS.siac}`).set('accept-language', 'nl').expect(200);
    expect(JSON.stringify(res.body)).toContain('Terugkoppeling');
    expect(JSON.stringify(res.body)).toContain('Stil');
  });
});

describe('shop-articles-as-csv', () => {
  it('exports the shop articles as formula-safe CSV', async () => {
    await ctx.database.db.deleteFrom('articles').execute();
    await sim.patchEntity('article', ARTICLE_NUMBERS.bsf8, { name: '=HYPERLINK("http://evil.example","x")' });
    await importArticles({ db: ctx.database.db, erp: ctx.services.erpClients.client, logger: ctx.deps.logger, caches: ctx.services.caches }, 'weclapp');
    const res = await request(ctx.app).get('/api/rest/v1/maintenance/shop-articles-as-csv').set('authorization', admin).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['content-disposition']).toBe('attachment; filename="shop-articles.csv"');
    const rows = parse(res.text, { columns: true }) as Record<string, string>[];
    expect(Object.keys(rows[0])).toEqual([
      'articleNumber',
      'name',
      'userGroup',
      'isSubitemOnly',
      'cardType',
      'netPriceCents',
      'currency',
      'vatRatePercent',
      'erpVersion',
    ]);
    expect(rows.find((r) => r.articleNumber === 'SIAC1')).toMatchObject({
      name: 'SIAC',
      userGroup: 'public',
      isSubitemOnly: 'false',
      cardType: 'siac1',
      netPriceCents: '5034',
      currency: 'EUR',
      vatRatePercent: '19.00',
      erpVersion: '0',
    });
    expect(rows.find((r) => r.articleNumber === 'BSF8')!.name).toBe(`'=HYPERLINK("http://evil.example","x")`);
    expect(rows.some((r) => r.articleNumber === ARTICLE_NUMBERS.spareBoard)).toBe(false);
    await request(ctx.app)
      .get('/api/rest/v1/maintenance/shop-articles-as-csv')
      .set('authorization', await ctx.bearer({ roles: ['support'] }))
      .expect(403);
  });
});
