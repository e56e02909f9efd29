import request from 'supertest';
import { ApiError } from '@sports-timing/shared';
import { CARD_NUMBER_RANGES, CARD_TYPES, cardTypeOfNumber } from '../src/siid/card-types';
import { checkServiceId, claimCardNumbers, drawFreeServiceIds, markCardNumbersSold, releaseCardNumbers } from '../src/siid/siid.service';
import { startOrdering, type OrderingTestContext } from './support/app';

let ctx: OrderingTestContext;
beforeAll(async () => {
  ctx = await startOrdering();
});
afterAll(async () => ctx.close());

const SIIDS = '/api/grpc-json/v1/shop/siids';

async function claim(cardType: (typeof CARD_TYPES)[number], serviceId: number, orderRef: string): Promise<void> {
  await ctx.database.db.transaction().execute((trx) => claimCardNumbers(trx, cardType, [serviceId], orderRef));
}

describe('card types', () => {
  it('knows the ranges of docs/decisions.md §6', () => {
    expect(CARD_NUMBER_RANGES).toEqual({
      sicard9: { first: 1_000_000, last: 1_999_999 },
      sicard10: { first: 7_000_001, last: 7_999_999 },
      siac1: { first: 8_000_001, last: 8_999_999 },
    });
    expect(
      [999_999, 1_000_000, 1_999_999, 2_000_000, 7_000_000, 7_000_001, 7_999_999, 8_000_000, 8_000_001, 8_999_999, 9_000_000].map(cardTypeOfNumber),
    ).toEqual([null, 'sicard9', 'sicard9', null, null, 'sicard10', 'sicard10', null, 'siac1', 'siac1', null]);
  });
});

describe('random free SIIDs', () => {
  it.each(CARD_TYPES)('draws 10 distinct free %s numbers by default', async (cardType) => {
    const res = await request(ctx.app).get(`${SIIDS}/${cardType}/random-free-siids`).expect(200);
    const { first, last } = CARD_NUMBER_RANGES[cardType];
    expect(res.body.cardType).toBe(cardType);
    expect(res.body.serviceIds).toHaveLength(10);
    expect(new Set(res.body.serviceIds).size).toBe(10);
    for (const n of res.body.serviceIds) expect(n >= first && n <= last).toBe(true);
  });

  it('draws up to 20 and rejects more, zero and non-numbers with INVALID_ARGUMENT', async () => {
    const res = await request(ctx.app).get(`${SIIDS}/siac1/random-free-siids?numberOfServiceIds=20`).expect(200);
    expect(new Set(res.body.serviceIds).size).toBe(20);
    for (const q of ['21', '0', 'ten']) {
      const bad = await request(ctx.app).get(`${SIIDS}/siac1/random-free-siids?numberOfServiceIds=${q}`).expect(400);
      expect(bad.body).toMatchObject({ code: 3, details: [{ fieldViolations: [{ field: 'numberOfServiceIds' }] }] });
    }
  });

  it('rejects an unknown card type', async () => {
    expect((await request(ctx.app).get(`${SIIDS}/sicard8/random-free-siids`).expect(400)).body.code).toBe(3);
  });

  it('never offers a taken number: a crowded sub-range yields exactly its free numbers', async () => {
    const range = { first: 7_000_001, last: 7_000_040 };
    for (let n = range.first; n <= range.last; n++) if (n % 8 !== 0) await claim('sicard10', n, 'crowded');
    const free = [7_000_008, 7_000_016, 7_000_024, 7_000_032, 7_000_040];
    expect((await drawFreeServiceIds(ctx.database.db, 'sicard10', 20, range)).sort()).toEqual(free);
    const three = await drawFreeServiceIds(ctx.database.db, 'sicard10', 3, range);
    expect(three).toHaveLength(3);
    for (const n of three) expect(free).toContain(n);
    const full = { first: 7_000_001, last: 7_000_007 };
    expect(await drawFreeServiceIds(ctx.database.db, 'sicard10', 5, full)).toEqual([]);
  });
});

describe('SIID check', () => {
  it('answers valid and free, taken, and out-of-range numbers', async () => {
    expect((await request(ctx.app).get(`${SIIDS}/siac1/8123456`).expect(200)).body).toEqual({
      cardType: 'siac1',
      serviceId: 8_123_456,
      isValid: true,
      canBeOrdered: true,
    });
    await claim('siac1', 8_123_456, 'order-1');
    expect((await request(ctx.app).get(`${SIIDS}/siac1/8123456`).expect(200)).body).toEqual({
      cardType: 'siac1',
      serviceId: 8_123_456,
      isValid: true,
      canBeOrdered: false,
    });
    expect((await request(ctx.app).get(`${SIIDS}/sicard10/8123457`).expect(200)).body).toEqual({
      cardType: 'sicard10',
      serviceId: 8_123_457,
      isValid: false,
      canBeOrdered: false,
    });
    expect((await request(ctx.app).get(`${SIIDS}/sicard9/999999`).set('X-Service-Client-Id', 'c').expect(200)).body).toMatchObject({
      isValid: false,
      canBeOrdered: false,
    });
    expect((await request(ctx.app).get(`${SIIDS}/sicard9/1000000`).expect(200)).body).toMatchObject({ isValid: true, canBeOrdered: true });
  });

  it('rejects a non-integer number with INVALID_ARGUMENT', async () => {
    expect((await request(ctx.app).get(`${SIIDS}/siac1/abc`).expect(400)).body.code).toBe(3);
  });
});

describe('claims', () => {
  it('claims a number once: the second claim is a 409 and leaves the transaction usable', async () => {
    await claim('sicard9', 1_234_567, 'order-a');
    let error: unknown;
    await ctx.database.db.transaction().execute(async (trx) => {
      await claimCardNumbers(trx, 'sicard9', [1_234_568], 'order-b');
      error = await claimCardNumbers(trx, 'sicard9', [1_234_567], 'order-b').catch((e: unknown) => e);
      // A unique violation would have aborted the transaction; the conditional insert does not.
      await claimCardNumbers(trx, 'sicard9', [1_234_569], 'order-b');
    });
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(409);
    expect((error as ApiError).message).toBe('Card number 1234567 is already taken.');
    const rows = await ctx.database.db
      .selectFrom('card_numbers')
      .select(['service_id', 'order_ref', 'state'])
      .where('service_id', 'in', [1_234_567, 1_234_568, 1_234_569])
      .orderBy('service_id')
      .execute();
    expect(rows).toEqual([
      { service_id: 1_234_567, order_ref: 'order-a', state: 'reserved' },
      { service_id: 1_234_568, order_ref: 'order-b', state: 'reserved' },
      { service_id: 1_234_569, order_ref: 'order-b', state: 'reserved' },
    ]);
  });

  it('rejects numbers outside the type range with 400 and claims nothing of a partly taken batch', async () => {
    const outOfRange = await ctx.database.db
      .transaction()
      .execute((trx) => claimCardNumbers(trx, 'siac1', [7_500_000], 'x'))
      .catch((e: ApiError) => e);
    expect(outOfRange).toMatchObject({ status: 400, options: { errors: { cardNumber: [expect.stringContaining('7500000')] } } });
    await claim('siac1', 8_500_002, 'first');
    const batch = await ctx.database.db
      .transaction()
      .execute((trx) => claimCardNumbers(trx, 'siac1', [8_500_001, 8_500_002, 8_500_003], 'second'))
      .catch((e: ApiError) => e);
    expect(batch).toMatchObject({ status: 409, message: 'Card number 8500002 is already taken.' });
    expect(await checkServiceId(ctx.database.db, 'siac1', 8_500_001)).toMatchObject({ canBeOrdered: true });
    expect(await checkServiceId(ctx.database.db, 'siac1', 8_500_003)).toMatchObject({ canBeOrdered: true });
  });

  it('marks the numbers of an order sold and releases them', async () => {
    await ctx.database.db.transaction().execute((trx) => claimCardNumbers(trx, 'sicard10', [7_100_001, 7_100_002], 'order-s'));
    expect(await ctx.database.db.transaction().execute((trx) => markCardNumbersSold(trx, 'order-s'))).toBe(2);
    expect(await ctx.database.db.transaction().execute((trx) => markCardNumbersSold(trx, 'order-s'))).toBe(0);
    expect(await checkServiceId(ctx.database.db, 'sicard10', 7_100_001)).toMatchObject({ canBeOrdered: false });
    expect(await ctx.database.db.transaction().execute((trx) => releaseCardNumbers(trx, 'order-s'))).toBe(2);
    expect(await checkServiceId(ctx.database.db, 'sicard10', 7_100_001)).toMatchObject({ canBeOrdered: true });
  });

  it('is enforced by the database: the range check and the primary key', async () => {
    await expect(ctx.database.db.insertInto('card_numbers').values({ service_id: 5, card_type: 'siac1', order_ref: null }).execute()).rejects.toThrow(
      /check constraint/,
    );
    await claim('siac1', 8_600_000, 'o');
    await expect(ctx.database.db.insertInto('card_numbers').values({ service_id: 8_600_000, card_type: 'siac1', order_ref: 'p' }).execute()).rejects.toThrow(
      /duplicate key/,
    );
  });
});
