/**
 * Discount codes (ordering spec §4.3 rule 6, docs/decisions.md §6): staff-only creation of random or explicit
 * codes, and validation of codes against a cart with every rejection reason and the stacking rules.
 */
import request from 'supertest';
import type { components } from '../src/generated/openapi';
import { CODE_ALPHABET, GENERATED_CODE_LENGTH } from '../src/discounts/discounts.service';
import { createCodes, startShop, type NewItem, type TestShop } from './support/orders';

type Schemas = components['schemas'];
type Reply = Schemas['ValidateDiscountCodesReply'];

let shop: TestShop;
beforeAll(async () => {
  shop = await startShop();
});
afterAll(async () => {
  await shop.close();
});

const createPath = '/api/grpc-json/v1/shop/discount-codes/create';
const validatePath = '/api/grpc-json/v1/shop/discount-codes/validate';

async function validate(codes: string[], orderItems: NewItem[], auth?: string): Promise<Reply> {
  const r = request(shop.url).post(validatePath);
  if (auth) r.set('Authorization', auth);
  const res = await r.send({ codes, orderItems });
  expect(res.status).toBe(200);
  return res.body as Reply;
}

describe('create', () => {
  test('only staff may create codes', async () => {
    const body = { campaignName: 'Spring', kind: 'percent', percent: 5, numberOfCodes: 1 };
    expect((await request(shop.url).post(createPath).send(body)).status).toBe(401);
    const customer = await shop.ctx.bearer({ roles: ['customer'] });
    expect((await request(shop.url).post(createPath).set('Authorization', customer).send(body)).status).toBe(403);
    const admin = await shop.ctx.bearer({ roles: ['admin'], userGroup: 'internal' });
    expect((await request(shop.url).post(createPath).set('Authorization', admin).send(body)).status).toBe(200);
  });

  test('generated codes are crypto-random, unambiguous, upper case, unique, with the prefix', async () => {
    const res = await request(shop.url)
      .post(createPath)
      .set('Authorization', await shop.staff())
      .send({
        campaignName: 'Club season',
        kind: 'fixedAmount',
        amountCents: 1500,
        numberOfCodes: 200,
        codePrefix: 'CLUB',
        maxRedemptionsPerCode: 3,
        minimumOrderNetCents: 5000,
        validTo: '2999-01-01T00:00:00Z',
      });
    expect(res.status).toBe(200);
    const reply = res.body as Schemas['CreateDiscountCodesReply'];
    expect(reply).toMatchObject({
      campaignName: 'Club season',
      kind: 'fixedAmount',
      amountCents: 1500,
      percent: null,
      currency: 'EUR',
      maxRedemptionsPerCode: 3,
      minimumOrderNetCents: 5000,
      restrictedArticleNumbers: [],
      validFrom: null,
      validTo: '2999-01-01T00:00:00.000Z',
    });
    expect(reply.codes).toHaveLength(200);
    expect(new Set(reply.codes).size).toBe(200);
    const pattern = new RegExp(`^CLUB[${CODE_ALPHABET}]{${GENERATED_CODE_LENGTH}}$`);
    for (const c of reply.codes) expect(c).toMatch(pattern);
    for (const c of reply.codes) expect(c.slice(4)).not.toMatch(/[ILO01]/);
    const stored = await shop.database.db
      .selectFrom('discount_codes')
      .select(['code', 'max_redemptions', 'redemptions'])
      .where('campaign_id', '=', reply.campaignId)
      .execute();
    expect(stored).toHaveLength(200);
    expect(stored.every((s) => s.max_redemptions === 3 && s.redemptions === 0)).toBe(true);
  });

  test('explicit codes are stored upper case; an existing one → 409 and nothing is stored', async () => {
    expect(await createCodes(shop, { codes: ['Summer-2030', 'autumn-2030'] })).toEqual(['SUMMER-2030', 'AUTUMN-2030']);
    const campaigns = await shop.database.db.selectFrom('discount_campaigns').select('id').execute();
    const res = await request(shop.url)
      .post(createPath)
      .set('Authorization', await shop.staff())
      .send({ campaignName: 'Clash', kind: 'percent', percent: 5, codes: ['NEW-CODE-1', 'summer-2030'] });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 6, message: expect.stringContaining('SUMMER-2030') });
    expect(await shop.database.db.selectFrom('discount_campaigns').select('id').execute()).toHaveLength(campaigns.length);
    expect(await shop.database.db.selectFrom('discount_codes').select('id').where('code', '=', 'NEW-CODE-1').execute()).toHaveLength(0);
  });

  test.each([
    ['percent missing', { kind: 'percent', numberOfCodes: 1 }, 'percent'],
    ['amount with percent kind', { kind: 'percent', percent: 5, amountCents: 100, numberOfCodes: 1 }, 'amountCents'],
    ['amount missing', { kind: 'fixedAmount', numberOfCodes: 1 }, 'amountCents'],
    ['both count and codes', { kind: 'percent', percent: 5, numberOfCodes: 1, codes: ['ABCD'] }, 'numberOfCodes'],
    ['neither count nor codes', { kind: 'percent', percent: 5 }, 'numberOfCodes'],
    ['codes differing only in case', { kind: 'percent', percent: 5, codes: ['abcd', 'ABCD'] }, 'codes[1]'],
    ['window reversed', { kind: 'percent', percent: 5, numberOfCodes: 1, validFrom: '2030-01-02T00:00:00Z', validTo: '2030-01-01T00:00:00Z' }, 'validTo'],
    ['unknown restricted article', { kind: 'percent', percent: 5, numberOfCodes: 1, restrictedArticleNumbers: ['NOPE'] }, 'restrictedArticleNumbers[0]'],
    ['percent rounding to zero', { kind: 'percent', percent: 0.001, numberOfCodes: 1 }, 'percent'],
  ])('400: %s', async (_name, body, field) => {
    const res = await request(shop.url)
      .post(createPath)
      .set('Authorization', await shop.staff())
      .send({ campaignName: 'Bad', ...body });
    expect(res.status).toBe(400);
    const fields = (res.body.details as { fieldViolations: { field: string }[] }[]).flatMap((d) => d.fieldViolations.map((v) => v.field));
    expect(fields).toContain(field);
  });
});

describe('validate', () => {
  const cart: NewItem[] = [
    { articleNumber: 'BSF8', quantity: 2 },
    { articleNumber: 'SIAC1', quantity: 1 },
  ]; // 2 × 167.23 + 50.34 = 384.80 net

  test('one result per code with the net amount; stacking across campaigns; one code per campaign', async () => {
    const [pct] = await createCodes(shop, { kind: 'percent', percent: 12.5 });
    const [fixed] = await createCodes(shop, { kind: 'fixedAmount', amountCents: 5000 });
    const [pct2a, pct2b] = await createCodes(shop, { kind: 'percent', percent: 50, numberOfCodes: 2 });
    const reply = await validate([pct.toLowerCase(), fixed, pct2a, pct2b, pct, 'NOPE-NOPE'], cart);
    expect(reply.itemsNetCents).toBe(38_480);
    expect(reply.currency).toBe('EUR');
    // 12.5 % of 384.80 = 48.10; 50.00 fixed; 50 % of the remaining 286.70 = 143.35.
    expect(reply.results).toEqual([
      { code: pct.toLowerCase(), isValid: true, reason: null, netAmountCents: 4810, campaignName: 'Test' },
      { code: fixed, isValid: true, reason: null, netAmountCents: 5000, campaignName: 'Test' },
      { code: pct2a, isValid: true, reason: null, netAmountCents: 14_335, campaignName: 'Test' },
      { code: pct2b, isValid: false, reason: 'campaignAlreadyApplied', netAmountCents: 0, campaignName: 'Test' },
      { code: pct, isValid: false, reason: 'duplicateCode', netAmountCents: 0, campaignName: 'Test' },
      { code: 'NOPE-NOPE', isValid: false, reason: 'notFound', netAmountCents: 0, campaignName: null },
    ]);
    expect(reply.totalDiscountNetCents).toBe(4810 + 5000 + 14_335);
  });

  test('deductions never exceed the cart: a fixed amount is capped at what is left', async () => {
    const [big] = await createCodes(shop, { kind: 'fixedAmount', amountCents: 100_000 });
    const [more] = await createCodes(shop, { kind: 'percent', percent: 10 });
    const reply = await validate([big, more], cart);
    expect(reply.results[0]).toMatchObject({ isValid: true, netAmountCents: 38_480 });
    expect(reply.results[1]).toMatchObject({ isValid: false, reason: 'noApplicableArticles' });
    expect(reply.totalDiscountNetCents).toBe(38_480);
  });

  test('validity window, minimum order value, article restriction, exhaustion', async () => {
    const [expired] = await createCodes(shop, { validTo: '2020-01-01T00:00:00Z' });
    const [future] = await createCodes(shop, { validFrom: '2999-01-01T00:00:00Z' });
    const [minimum] = await createCodes(shop, { minimumOrderNetCents: 40_000 });
    const [cardsOnly] = await createCodes(shop, { restrictedArticleNumbers: ['SIAC1', 'SI-CARD10'] });
    const [stationsOnly] = await createCodes(shop, { restrictedArticleNumbers: ['BSF8-PACK10'] });
    const [used] = await createCodes(shop, {});
    await shop.database.db.updateTable('discount_codes').set({ redemptions: 1 }).where('code', '=', used).execute();
    const reply = await validate([expired, future, minimum, cardsOnly, stationsOnly, used], cart);
    expect(reply.results.map((r) => [r.reason, r.netAmountCents])).toEqual([
      ['expired', 0],
      ['notYetValid', 0],
      ['minimumOrderValueNotReached', 0],
      [null, 503], // 10 % of the SIAC line only (50.34 → 5.034 → 5.03)
      ['noApplicableArticles', 0],
      ['exhausted', 0],
    ]);
  });

  test('the cart is priced for the caller and validated like an order', async () => {
    const [code] = await createCodes(shop, {});
    const res = await request(shop.url)
      .post(validatePath)
      .send({ codes: [code], orderItems: [{ articleNumber: 'BSF8-PACK10', quantity: 1 }] });
    expect(res.status).toBe(400);
    expect(res.body.details[0].fieldViolations[0].field).toBe('orderItems[0].articleNumber');
    const retailer = await shop.ctx.bearer({ roles: ['retailer'], userGroup: 'retailer' });
    const reply = await validate([code], [{ articleNumber: 'BSF8-PACK10', quantity: 1 }], retailer);
    expect(reply.results[0]).toMatchObject({ isValid: true, netAmountCents: 15_042 });
  });
});
