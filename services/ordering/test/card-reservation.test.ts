import request from 'supertest';
import { loadDemoCatalog } from '../src/demo/catalog';
import { claimCardNumbers } from '../src/siid/siid.service';
import { startOrdering, type OrderingTestContext } from './support/app';

let ctx: OrderingTestContext;
beforeAll(async () => {
  ctx = await startOrdering();
  await loadDemoCatalog(ctx.database.db);
});
afterAll(async () => ctx.close());

const REST = '/api/rest/v1';

describe('get-cards-info', () => {
  it('lists one card product per card type with range and prices', async () => {
    const res = await request(ctx.app).get(`${REST}/get-cards-info`).expect(200);
    expect(res.body).toEqual({
      cards: [
        {
          cardType: 'sicard9',
          productId: 'SI-CARD9',
          name: 'SI-Card 9',
          description: 'Entry-level timing card with 50 punches, personalisable.',
          firstCardNumber: 1_000_000,
          lastCardNumber: 1_999_999,
          netPriceCents: 2_092,
          grossPriceCents: 2_489,
          currency: 'EUR',
          vatRatePercent: 19,
          isAvailable: true,
          imageUrl: null,
        },
        expect.objectContaining({
          cardType: 'sicard10',
          productId: 'SI-CARD10',
          firstCardNumber: 7_000_001,
          lastCardNumber: 7_999_999,
          grossPriceCents: 3_990,
        }),
        expect.objectContaining({
          cardType: 'siac1',
          productId: 'SIAC1',
          firstCardNumber: 8_000_001,
          lastCardNumber: 8_999_999,
          netPriceCents: 5_034,
          grossPriceCents: 5_990,
        }),
      ],
    });
  });

  it('localizes descriptions by Accept-Language', async () => {
    const res = await request(ctx.app).get(`${REST}/get-cards-info`).set('accept-language', 'de').expect(200);
    expect(res.body.cards[2].description).toMatch(/^Aktive kontaktlose Zeitmesskarte/);
  });
});

describe('get-card-configuration', () => {
  it('describes the options of a free SIAC number in English by default, without the card-number attribute', async () => {
    const res = await request(ctx.app).get(`${REST}/get-card-configuration`).query({ cardNumber: 8_234_567 }).expect(200);
    expect(res.body).toMatchObject({ cardNumber: 8_234_567, cardType: 'siac1', productId: 'SIAC1', culture: 'en', isFree: true });
    expect(res.body.attributes.map((a: { key: string }) => a.key)).toEqual(['feedbackSignal', 'personalDataFirstName', 'personalDataLastName']);
    expect(res.body.attributes[0]).toMatchObject({ label: 'Feedback signal', type: 'select', required: true, defaultValue: 'beepAndFlash' });
  });

  it('localizes by culture, then Accept-Language, with built-in German and French labels', async () => {
    const de = await request(ctx.app)
      .get(`${REST}/get-card-configuration`)
      .query({ cardNumber: 8_234_567, culture: 'de-CH' })
      .set('accept-language', 'fr')
      .expect(200);
    expect(de.body).toMatchObject({
      culture: 'de',
      attributes: [{ label: 'Quittierungssignal', options: [{ value: 'beepAndFlash', label: 'Ton und Blinken' }, {}, {}, {}] }, {}, {}],
    });
    const fr = await request(ctx.app).get(`${REST}/get-card-configuration`).query({ cardNumber: 1_500_000 }).set('accept-language', 'fr').expect(200);
    expect(fr.body).toMatchObject({
      cardType: 'sicard9',
      productId: 'SI-CARD9',
      culture: 'fr',
      attributes: [{ key: 'personalDataFirstName', label: 'Prénom (enregistré sur la carte)' }, {}],
    });
    const it = await request(ctx.app).get(`${REST}/get-card-configuration`).query({ cardNumber: 1_500_000, culture: 'it' }).expect(200);
    expect(it.body.culture).toBe('en');
  });

  it('uses imported labels for their culture', async () => {
    await ctx.database.db
      .insertInto('localized_product_options')
      .values({ culture: 'nl', attribute_key: 'personalDataLastName', label: 'Achternaam' })
      .execute();
    const res = await request(ctx.app).get(`${REST}/get-card-configuration`).query({ cardNumber: 7_000_001, culture: 'nl' }).expect(200);
    expect(res.body).toMatchObject({ culture: 'nl', attributes: [{ label: 'First name (stored on the card)' }, { label: 'Achternaam' }] });
  });

  it('reports whether the number is still free', async () => {
    await ctx.database.db.transaction().execute((trx) => claimCardNumbers(trx, 'siac1', [8_234_568], 'order-x'));
    expect((await request(ctx.app).get(`${REST}/get-card-configuration`).query({ cardNumber: 8_234_568 }).expect(200)).body.isFree).toBe(false);
  });

  it('answers 400 with errors.cardNumber for a number in no range, and for a malformed culture', async () => {
    const res = await request(ctx.app).get(`${REST}/get-card-configuration`).query({ cardNumber: 5_000_000 }).expect(400);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.body).toMatchObject({ title: 'One or more validation errors occurred.', status: 400, errors: { cardNumber: [expect.any(String)] } });
    await request(ctx.app).get(`${REST}/get-card-configuration`).query({ cardNumber: 8_000_001, culture: 'de_DE!' }).expect(400);
  });
});

describe('get-random-card-numbers', () => {
  it('draws 10 free numbers of the product card type', async () => {
    const res = await request(ctx.app).get(`${REST}/get-random-card-numbers`).query({ productId: 'SI-CARD10' }).expect(200);
    expect(res.body.productId).toBe('SI-CARD10');
    expect(res.body.cardType).toBe('sicard10');
    expect(new Set(res.body.cardNumbers).size).toBe(10);
    for (const n of res.body.cardNumbers) expect(n >= 7_000_001 && n <= 7_999_999).toBe(true);
  });

  it('answers 404 for articles that are not card products', async () => {
    for (const productId of ['BSF8', 'NOPE', 'SPARE-PCB-BSF8']) {
      const res = await request(ctx.app).get(`${REST}/get-random-card-numbers`).query({ productId }).expect(404);
      expect(res.body).toMatchObject({ status: 404 });
    }
  });
});

describe('is-card-free', () => {
  it('answers valid and free, taken, and invalid numbers', async () => {
    expect((await request(ctx.app).get(`${REST}/is-card-free`).query({ cardNumber: 1_000_001 }).expect(200)).body).toEqual({
      cardNumber: 1_000_001,
      cardType: 'sicard9',
      isValid: true,
      isFree: true,
    });
    await ctx.database.db.transaction().execute((trx) => claimCardNumbers(trx, 'sicard9', [1_000_001], 'order-y'));
    expect((await request(ctx.app).get(`${REST}/is-card-free`).query({ cardNumber: 1_000_001 }).expect(200)).body).toEqual({
      cardNumber: 1_000_001,
      cardType: 'sicard9',
      isValid: true,
      isFree: false,
    });
    expect((await request(ctx.app).get(`${REST}/is-card-free`).query({ cardNumber: 5_000_000 }).expect(200)).body).toEqual({
      cardNumber: 5_000_000,
      cardType: null,
      isValid: false,
      isFree: false,
    });
    expect((await request(ctx.app).get(`${REST}/is-card-free`).query({ cardNumber: 'x' }).expect(400)).body.errors.cardNumber).toEqual(expect.any(Array));
  });
});
