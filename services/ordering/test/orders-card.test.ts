/**
 * Card orders of the card-reservation area (ordering spec §4.2 `POST /api/rest/v1/order`): the shop
 * pipeline with the card order mapping, random or chosen numbers claimed atomically, problem+json errors.
 */
import request from 'supertest';
import type { components } from '../src/generated/openapi';
import { findOrder, toOrderResponse } from '../src/orders/orders.mapper';
import { CARD_NUMBER_RANGES } from '../src/siid/card-types';
import { createCodes, snapshot, startShop, type NewContact, type TestShop } from './support/orders';

/** Spec `OrderRequest` as a client sends it (defaulted fields optional). */
type OrderRequest = Omit<components['schemas']['OrderRequest'], 'contact' | 'discountCodes'> & { contact: NewContact; discountCodes?: string[] };
type OrderResponse = components['schemas']['OrderResponse'];

let shop: TestShop;
beforeAll(async () => {
  shop = await startShop();
});
afterAll(async () => {
  await shop.close();
});

function cardOrder(overrides: Partial<OrderRequest> = {}): OrderRequest {
  return {
    contact: { firstName: 'Eva', lastName: 'Berg', email: 'eva@example.com', culture: 'en' },
    shippingAddress: { firstName: 'Eva', lastName: 'Berg', club: 'IFK Umeå', address1: 'Storgatan 1', zip: '903 26', city: 'Umeå', country: 'SE' },
    billingAddressIsSameAsShippingAddress: true,
    items: [{ productId: 'SIAC1', quantity: 3, configuration: { feedbackSignal: 'flashOnly' } }],
    ...overrides,
  };
}

const post = (body: unknown) =>
  request(shop.url)
    .post('/api/rest/v1/order')
    .send(body as object);

test('random free numbers are claimed for a line without numbers; chosen numbers for the others', async () => {
  const [code] = await createCodes(shop, { kind: 'fixedAmount', amountCents: 1000 });
  const res = await post(
    cardOrder({
      items: [
        { productId: 'SIAC1', quantity: 3, configuration: { feedbackSignal: 'flashOnly' } },
        { productId: 'SI-CARD9', quantity: 2, cardNumbers: [1000001, 1000002] },
      ],
      discountCodes: [code],
    }),
  );
  expect(res.status).toBe(200);
  const order = res.body as OrderResponse;
  expect(order).toMatchObject({
    state: 'pending_payment',
    paymentMethod: 'paylink',
    courier: 'dhlParcelInternational',
    phoneNumber: null,
    discountCents: 1000,
  });
  expect(order.shippingAddress).toMatchObject({ fullName: 'Eva Berg', club: 'IFK Umeå', country: 'SE' });
  const [siac, card9] = order.items;
  expect(siac).toMatchObject({
    productId: 'SIAC1',
    cardType: 'siac1',
    quantity: 3,
    configuration: { feedbackSignal: 'flashOnly' },
    unitNetPriceCents: 5034,
    netAmountCents: 3 * 5034,
  });
  expect(siac.cards).toHaveLength(3);
  const numbers = siac.cards.map((c) => c.cardNumber);
  expect(new Set(numbers).size).toBe(3);
  for (const n of numbers) expect(n).toBeGreaterThanOrEqual(CARD_NUMBER_RANGES.siac1.first);
  expect(card9.cards.map((c) => c.cardNumber)).toEqual([1000001, 1000002]);
  expect(order.itemsNetCents).toBe(3 * 5034 + 2 * 2092);
  const claims = await shop.database.db.selectFrom('card_numbers').select(['service_id', 'order_ref']).where('order_ref', '=', order.orderNumber).execute();
  expect(claims.map((c) => c.service_id).sort()).toEqual([...numbers, 1000001, 1000002].sort());
  const items = await shop.database.db.selectFrom('order_items').select(['id', 'card_number']).where('order_id', '=', order.oid).execute();
  expect(items).toHaveLength(5);
  expect(new Set(siac.cards.map((c) => c.orderItemOid))).toEqual(new Set(items.filter((i) => i.card_number! >= 8_000_001).map((i) => i.id)));
  // Drawn numbers are set after the insert: the answer is still byte for byte the order as read back.
  expect(JSON.stringify(order)).toBe(JSON.stringify(toOrderResponse((await findOrder(shop.database.db, order.oid))!)));
  const stored = await shop.database.db.selectFrom('order_items').select(['card_number', 'configuration']).where('order_id', '=', order.oid).execute();
  for (const row of stored) expect(row.configuration.cardNumber).toBe(String(row.card_number));
});

test('errors are problem+json with the fields of the card order, and leave no trace', async () => {
  await post(cardOrder({ items: [{ productId: 'SIAC1', quantity: 1, cardNumbers: [8400001] }] })).expect(200);
  const before = await snapshot(shop.database);
  const cases: [unknown, number, string | null][] = [
    [cardOrder({ items: [{ productId: 'SIAC1', quantity: 2, cardNumbers: [8400002] }] }), 400, 'items[0].cardNumbers'],
    [cardOrder({ items: [{ productId: 'SIAC1', quantity: 1, cardNumbers: [7000002] }] }), 400, 'items[0].cardNumbers'],
    [cardOrder({ items: [{ productId: 'SIAC1', quantity: 1, configuration: { cardNumber: '8400003' } }] }), 400, 'items[0].configuration.cardNumber'],
    [cardOrder({ items: [{ productId: 'BSF8', quantity: 1 }] }), 400, 'items[0].productId'],
    [cardOrder({ items: [{ productId: 'NOPE', quantity: 1 }] }), 400, 'items[0].productId'],
    [cardOrder({ shippingAddress: { ...cardOrder().shippingAddress, country: 'ZZ' } }), 400, 'shippingAddress.country'],
    [cardOrder({ shippingAddress: { ...cardOrder().shippingAddress, country: 'US' } }), 400, 'phoneNumber'],
    [cardOrder({ billingAddressIsSameAsShippingAddress: false }), 400, 'billingAddress'],
    [cardOrder({ discountCodes: ['UNKNOWN1'] }), 400, 'discountCodes[0]'],
    [
      cardOrder({
        items: [
          { productId: 'SIAC1', quantity: 1000 },
          { productId: 'SIAC1', quantity: 1 },
        ],
      }),
      400,
      'items',
    ],
    [cardOrder({ items: [{ productId: 'SIAC1', quantity: 1, cardNumbers: [8400001] }] }), 409, null],
  ];
  for (const [body, status, field] of cases) {
    const res = await post(body);
    expect({ status: res.status, field }).toEqual({ status, field });
    expect(res.headers['content-type']).toContain('application/problem+json');
    if (field) expect(Object.keys(res.body.errors ?? {})).toContain(field);
  }
  expect(await snapshot(shop.database)).toEqual(before);
});

test('with a phone number a card order ships to the US by FedEx', async () => {
  const res = await post(cardOrder({ shippingAddress: { ...cardOrder().shippingAddress, country: 'US', city: 'Boston' }, phoneNumber: '+16175550123' }));
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ courier: 'fedex', phoneNumber: '+16175550123', shippingNetCents: 3490 });
});
