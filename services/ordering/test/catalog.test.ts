import request from 'supertest';
import { loadDemoCatalog } from '../src/demo/catalog';
import { startOrdering, type OrderingTestContext } from './support/app';

let ctx: OrderingTestContext;
let retailer: string;
let staff: string;
beforeAll(async () => {
  ctx = await startOrdering();
  // Twice: the demo loader is an idempotent upsert.
  await loadDemoCatalog(ctx.database.db);
  await loadDemoCatalog(ctx.database.db);
  retailer = await ctx.bearer({ roles: ['retailer'], userGroup: 'retailer' });
  staff = await ctx.bearer({ roles: ['support'] });
});
afterAll(async () => ctx.close());

const ARTICLES = '/api/grpc-json/v1/shop/articles';

interface Article {
  articleNumber: string;
  name: string;
  isAvailable: boolean;
  [k: string]: unknown;
}

async function list(query: Record<string, string> = {}, headers: Record<string, string> = {}): Promise<Article[]> {
  const res = await request(ctx.app).get(ARTICLES).query(query).set(headers).expect(200);
  return res.body as Article[];
}
const numbers = (articles: Article[]) => articles.map((a) => a.articleNumber);

const PUBLIC_MAIN = ['SIAC1', 'SI-CARD10', 'SI-CARD9', 'BSF8', 'BS11-BL', 'BSM8-USB', 'TRAINING-SET', 'SIAC-STARTER'];

describe('listing by user group (rule 1)', () => {
  it('lists the public main articles to anonymous callers, in catalogue order', async () => {
    const articles = await list();
    expect(numbers(articles)).toEqual(PUBLIC_MAIN);
    expect(articles.every((a) => a.isAvailable)).toBe(true);
  });

  it('treats unknown client ids (either header) as anonymous', async () => {
    expect(numbers(await list({}, { 'X-Service-Client-Id': 'unknown-client' }))).toEqual(PUBLIC_MAIN);
    expect(numbers(await list({}, { 'X-Sportident-Client-Id': 'legacy-client' }))).toEqual(PUBLIC_MAIN);
  });

  it('adds retailer articles for a retailer token', async () => {
    const articles = await list({}, { authorization: retailer });
    expect(numbers(articles)).toEqual([...PUBLIC_MAIN.slice(0, 6), 'BSF8-PACK10', ...PUBLIC_MAIN.slice(6)]);
  });

  it('adds internal articles for staff, whose roles imply the internal group', async () => {
    const articles = await list({}, { authorization: staff });
    expect(numbers(articles)).toEqual([...PUBLIC_MAIN.slice(0, 6), 'BSF8-PACK10', 'SIAC-BATTERY-SERVICE', ...PUBLIC_MAIN.slice(6), 'CENTER-LTE-1Y']);
    expect(articles.every((a) => a.isAvailable)).toBe(true);
  });

  it('with includeUnavailableArticles lists every main shop article with isAvailable', async () => {
    const articles = await list({ includeUnavailableArticles: 'true' });
    expect(numbers(articles)).toEqual([...PUBLIC_MAIN.slice(0, 6), 'BSF8-PACK10', 'SIAC-BATTERY-SERVICE', ...PUBLIC_MAIN.slice(6), 'CENTER-LTE-1Y']);
    const availability = Object.fromEntries(articles.map((a) => [a.articleNumber, a.isAvailable]));
    expect(availability).toMatchObject({ SIAC1: true, 'BSF8-PACK10': false, 'SIAC-BATTERY-SERVICE': false, 'CENTER-LTE-1Y': false });
    const forRetailer = await list({ includeUnavailableArticles: 'true' }, { authorization: retailer });
    expect(Object.fromEntries(forRetailer.map((a) => [a.articleNumber, a.isAvailable]))).toMatchObject({ 'BSF8-PACK10': true, 'SIAC-BATTERY-SERVICE': false });
  });

  it('never lists articles that are not shop articles', async () => {
    const all = await list({ includeUnavailableArticles: 'true', includeSubitemArticles: 'true' }, { authorization: staff });
    expect(numbers(all)).not.toContain('SPARE-PCB-BSF8');
    expect(numbers(await list({ filterByArticleNumbers: 'SPARE-PCB-BSF8' }, { authorization: staff }))).toEqual([]);
  });
});

describe('sub items and filters (rules 2 and 3)', () => {
  it('includes sub-item-only articles only with includeSubitemArticles', async () => {
    const articles = await list({ includeSubitemArticles: 'true' });
    expect(numbers(articles)).toEqual([...PUBLIC_MAIN.slice(0, 6), 'CARD-HOLDER', 'CARD-HOLDER-WRIST', 'BAT-BSF8', ...PUBLIC_MAIN.slice(6)]);
    expect(articles.filter((a) => a.isSubitemOnly).map((a) => a.articleNumber)).toEqual(['CARD-HOLDER', 'CARD-HOLDER-WRIST', 'BAT-BSF8']);
  });

  it('filters by article numbers (whitespace ignored, unknown numbers ignored)', async () => {
    expect(numbers(await list({ filterByArticleNumbers: ' BSF8 , SIAC1,NOPE ' }))).toEqual(['SIAC1', 'BSF8']);
  });

  it('treats an empty filter as no filter', async () => {
    expect(numbers(await list({ filterByArticleNumbers: '' }))).toEqual(PUBLIC_MAIN);
    expect(numbers(await list({ filterByArticleNumbers: ' , ' }))).toEqual(PUBLIC_MAIN);
  });

  it('includes the sub item articles of filtered articles with includeSubitemArticles', async () => {
    expect(numbers(await list({ filterByArticleNumbers: 'TRAINING-SET' }))).toEqual(['TRAINING-SET']);
    const withSubs = await list({ filterByArticleNumbers: 'TRAINING-SET', includeSubitemArticles: 'true' });
    expect(numbers(withSubs)).toEqual(['SIAC1', 'SI-CARD10', 'BSF8', 'CARD-HOLDER', 'CARD-HOLDER-WRIST', 'BAT-BSF8', 'TRAINING-SET']);
    const starter = await list({ filterByArticleNumbers: 'SIAC-STARTER', includeSubitemArticles: 'true' });
    expect(numbers(starter)).toEqual(['SIAC1', 'CARD-HOLDER', 'CARD-HOLDER-WRIST', 'SIAC-STARTER']);
  });

  it('does not list a sub-item-only article named in the filter without the flag', async () => {
    expect(numbers(await list({ filterByArticleNumbers: 'CARD-HOLDER' }))).toEqual([]);
    expect(numbers(await list({ filterByArticleNumbers: 'CARD-HOLDER', includeSubitemArticles: 'true' }))).toEqual(['CARD-HOLDER']);
  });

  it('applies availability to filtered articles', async () => {
    expect(numbers(await list({ filterByArticleNumbers: 'BSF8-PACK10' }))).toEqual([]);
    const [pack] = await list({ filterByArticleNumbers: 'BSF8-PACK10', includeUnavailableArticles: 'true' });
    expect(pack).toMatchObject({ articleNumber: 'BSF8-PACK10', isAvailable: false, userGroup: 'retailer' });
  });

  it('rejects more than 200 filter numbers with INVALID_ARGUMENT', async () => {
    const many = Array.from({ length: 201 }, (_, i) => `A${i}`).join(',');
    const res = await request(ctx.app).get(ARTICLES).query({ filterByArticleNumbers: many }).expect(400);
    expect(res.body).toMatchObject({
      code: 3,
      details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'filterByArticleNumbers' }] }],
    });
  });

  it('ignores undeclared query parameters (a public read), rejects a case typo of a declared one and non-boolean flags with INVALID_ARGUMENT', async () => {
    await request(ctx.app).get(ARTICLES).query({ _: '1700000000' }).expect(200);
    expect((await request(ctx.app).get(ARTICLES).query({ includesubitemarticles: 'true' }).expect(400)).body.code).toBe(3);
    expect((await request(ctx.app).get(ARTICLES).query({ includeSubitemArticles: 'maybe' }).expect(400)).body.code).toBe(3);
  });
});

describe('ArticleDTO', () => {
  it('describes a set with locked, configurable, choosable slots', async () => {
    const res = await request(ctx.app).get(`${ARTICLES}/TRAINING-SET`).expect(200);
    expect(res.body).toEqual({
      articleNumber: 'TRAINING-SET',
      name: 'Training set',
      description: 'Five BSF8 control stations with spare batteries, a personalisable card of your choice and a card holder.',
      category: 'sets',
      netPriceCents: 89_916,
      grossPriceCents: 107_000,
      currency: 'EUR',
      vatRatePercent: 19,
      cardType: null,
      isAvailable: true,
      userGroup: 'public',
      isSubitemOnly: false,
      imageUrl: null,
      configurableAttributes: [],
      bomItems: [
        {
          articleBomItemOid: 1,
          orderItem: { articleNumber: 'BSF8', articleName: 'BSF8 control station', quantity: 5, configuration: {}, articleBomItemOid: 1 },
          validArticleNumbers: ['BSF8'],
          isLocked: true,
          isConfigurable: false,
          isOptional: false,
          excludedCustomAttributes: [],
        },
        {
          articleBomItemOid: 2,
          orderItem: { articleNumber: 'SIAC1', articleName: 'SIAC', quantity: 1, configuration: { feedbackSignal: 'beepAndFlash' }, articleBomItemOid: 2 },
          validArticleNumbers: ['SIAC1', 'SI-CARD10'],
          isLocked: false,
          isConfigurable: true,
          isOptional: false,
          excludedCustomAttributes: ['personalDataFirstName', 'personalDataLastName'],
        },
        {
          articleBomItemOid: 3,
          orderItem: { articleNumber: 'CARD-HOLDER', articleName: 'Finger card holder', quantity: 1, configuration: {}, articleBomItemOid: 3 },
          validArticleNumbers: ['CARD-HOLDER', 'CARD-HOLDER-WRIST'],
          isLocked: false,
          isConfigurable: false,
          isOptional: false,
          excludedCustomAttributes: [],
        },
        {
          articleBomItemOid: 4,
          orderItem: { articleNumber: 'BAT-BSF8', articleName: 'Station battery (3.6 V lithium)', quantity: 5, configuration: {}, articleBomItemOid: 4 },
          validArticleNumbers: ['BAT-BSF8'],
          isLocked: true,
          isConfigurable: false,
          isOptional: false,
          excludedCustomAttributes: [],
        },
      ],
    });
  });

  it('describes a card article with its card type and configurable attributes', async () => {
    const res = await request(ctx.app).get(`${ARTICLES}/SIAC1`).expect(200);
    expect(res.body).toMatchObject({ articleNumber: 'SIAC1', cardType: 'siac1', netPriceCents: 5_034, grossPriceCents: 5_990, bomItems: [] });
    expect(res.body.configurableAttributes).toEqual([
      { key: 'cardNumber', label: 'Card number', type: 'text', required: false, maxLength: 7, options: [], defaultValue: null },
      {
        key: 'feedbackSignal',
        label: 'Feedback signal',
        type: 'select',
        required: true,
        maxLength: null,
        options: [
          { value: 'beepAndFlash', label: 'Beep and flash' },
          { value: 'flashOnly', label: 'Flash only' },
          { value: 'beepOnly', label: 'Beep only' },
          { value: 'silent', label: 'Silent' },
        ],
        defaultValue: 'beepAndFlash',
      },
      { key: 'personalDataFirstName', label: 'First name (stored on the card)', type: 'text', required: false, maxLength: 20, options: [], defaultValue: null },
      { key: 'personalDataLastName', label: 'Last name (stored on the card)', type: 'text', required: false, maxLength: 20, options: [], defaultValue: null },
    ]);
    for (const [n, type] of [
      ['SI-CARD10', 'sicard10'],
      ['SI-CARD9', 'sicard9'],
    ]) {
      expect((await request(ctx.app).get(`${ARTICLES}/${n}`).expect(200)).body.cardType).toBe(type);
    }
  });

  it('answers NOT_FOUND for unknown articles and for articles that are not shop articles', async () => {
    for (const n of ['NOPE', 'SPARE-PCB-BSF8']) {
      const res = await request(ctx.app).get(`${ARTICLES}/${n}`).set('authorization', staff).expect(404);
      expect(res.body).toEqual({ code: 5, message: `Article ${n} not found.`, details: [] });
    }
  });

  it('returns articles the caller may not order with isAvailable false', async () => {
    expect((await request(ctx.app).get(`${ARTICLES}/BSF8-PACK10`).expect(200)).body).toMatchObject({ isAvailable: false, userGroup: 'retailer' });
    expect((await request(ctx.app).get(`${ARTICLES}/BSF8-PACK10`).set('authorization', retailer).expect(200)).body.isAvailable).toBe(true);
    expect((await request(ctx.app).get(`${ARTICLES}/SIAC-BATTERY-SERVICE`).set('authorization', retailer).expect(200)).body.isAvailable).toBe(false);
    expect((await request(ctx.app).get(`${ARTICLES}/SIAC-BATTERY-SERVICE`).set('authorization', staff).expect(200)).body.isAvailable).toBe(true);
    expect((await request(ctx.app).get(`${ARTICLES}/CARD-HOLDER`).expect(200)).body).toMatchObject({ isSubitemOnly: true, isAvailable: true });
  });

  it('rejects an invalid token with UNAUTHENTICATED', async () => {
    const res = await request(ctx.app).get(`${ARTICLES}/SIAC1`).set('authorization', 'Bearer not-a-token').expect(401);
    expect(res.body.code).toBe(16);
  });
});

describe('localization by Accept-Language', () => {
  const nameFor = async (acceptLanguage: string) =>
    (await request(ctx.app).get(`${ARTICLES}/BSF8`).set('accept-language', acceptLanguage).expect(200)).body.name;

  it('honours quality values and falls back to the language and to English', async () => {
    expect(await nameFor('de')).toBe('BSF8 Poststation');
    expect(await nameFor('fr-CH, de;q=0.9')).toBe('Boîtier de contrôle BSF8');
    expect(await nameFor('de;q=0.5, fr;q=0.9')).toBe('Boîtier de contrôle BSF8');
    expect(await nameFor('de-AT')).toBe('BSF8 Poststation');
    expect(await nameFor('fr;q=0, de')).toBe('BSF8 Poststation');
    expect(await nameFor('xx, *')).toBe('BSF8 control station');
    expect(await nameFor('%%%')).toBe('BSF8 control station');
  });

  it('localizes BOM item names and attribute labels', async () => {
    const set = (await request(ctx.app).get(`${ARTICLES}/TRAINING-SET`).set('accept-language', 'de').expect(200)).body;
    expect(set.name).toBe('Trainingsset');
    expect(set.bomItems[0].orderItem.articleName).toBe('BSF8 Poststation');
    const siac = (await request(ctx.app).get(`${ARTICLES}/SIAC1`).set('accept-language', 'fr').expect(200)).body;
    expect(siac.configurableAttributes[1]).toMatchObject({
      label: 'Signal de confirmation',
      options: [{ value: 'beepAndFlash', label: 'Bip et clignotement' }, {}, {}, {}],
    });
  });

  it('prefers imported product option labels of the culture, per label falling back to built-in English', async () => {
    await ctx.database.db
      .insertInto('localized_product_options')
      .values({
        culture: 'it',
        attribute_key: 'feedbackSignal',
        label: 'Segnale di conferma',
        options: JSON.stringify([{ value: 'silent', label: 'Silenzioso' }]),
      })
      .execute();
    const siac = (await request(ctx.app).get(`${ARTICLES}/SIAC1`).set('accept-language', 'it-CH, en;q=0.5').expect(200)).body;
    const feedback = siac.configurableAttributes.find((a: { key: string }) => a.key === 'feedbackSignal');
    expect(feedback.label).toBe('Segnale di conferma');
    expect(feedback.options).toEqual([
      { value: 'beepAndFlash', label: 'Beep and flash' },
      { value: 'flashOnly', label: 'Flash only' },
      { value: 'beepOnly', label: 'Beep only' },
      { value: 'silent', label: 'Silenzioso' },
    ]);
    expect(siac.configurableAttributes.find((a: { key: string }) => a.key === 'cardNumber').label).toBe('Card number');
  });
});
