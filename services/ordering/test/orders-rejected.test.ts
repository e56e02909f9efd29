/**
 * Shop orders that are rejected (ordering spec §4.3 `createShopOrder`, §2.6): every way an order can fail
 * validation, a taken card number and unusable discount codes, each leaving the database unchanged and
 * sending no e-mail. The real app with response validation, real PostgreSQL and a real SMTP server.
 */
import { createCodes, orderBody, postOrder, snapshot, startShop, type TestShop } from './support/orders';

let shop: TestShop;
beforeAll(async () => {
  shop = await startShop({ mail: true });
});
afterAll(async () => {
  await shop.close();
});

/** Every way an order can be rejected, with the database unchanged and no e-mail afterwards. */
describe('rejected orders leave no trace', () => {
  const base = orderBody();
  const item = base.orderItems[0];
  const cases: [string, unknown, number, string?][] = [
    ['unknown article', { ...base, orderItems: [{ articleNumber: 'NOPE', quantity: 1 }] }, 400, 'orderItems[0].articleNumber'],
    ['not a shop article', { ...base, orderItems: [{ articleNumber: 'SPARE-PCB-BSF8', quantity: 1 }] }, 400, 'orderItems[0].articleNumber'],
    ['retailer article for the public', { ...base, orderItems: [{ articleNumber: 'BSF8-PACK10', quantity: 1 }] }, 400, 'orderItems[0].articleNumber'],
    ['sub-item-only article as main item', { ...base, orderItems: [{ articleNumber: 'CARD-HOLDER', quantity: 1 }] }, 400, 'orderItems[0].articleNumber'],
    ['quantity 0 (spec)', { ...base, orderItems: [{ ...item, quantity: 0 }] }, 400],
    ['quantity above the bound (spec)', { ...base, orderItems: [{ articleNumber: 'BSF8', quantity: 1001 }] }, 400],
    [
      'card number outside the range',
      { ...base, orderItems: [{ ...item, configuration: { cardNumber: '7000123' } }] },
      400,
      'orderItems[0].configuration.cardNumber',
    ],
    [
      'card number not a number',
      { ...base, orderItems: [{ ...item, configuration: { cardNumber: '8l23456' } }] },
      400,
      'orderItems[0].configuration.cardNumber',
    ],
    ['card number with quantity 2', { ...base, orderItems: [{ ...item, quantity: 2 }] }, 400, 'orderItems[0].quantity'],
    ['same card number twice', { ...base, orderItems: [item, { ...item }] }, 400, 'orderItems[1].configuration.cardNumber'],
    [
      'card number on a non-card article',
      { ...base, orderItems: [{ articleNumber: 'BSF8', quantity: 1, configuration: { cardNumber: '8123456' } }] },
      400,
      'orderItems[0].configuration.cardNumber',
    ],
    ['unknown configuration key', { ...base, orderItems: [{ ...item, configuration: { colour: 'red' } }] }, 400, 'orderItems[0].configuration.colour'],
    [
      'select value not an option',
      { ...base, orderItems: [{ ...item, configuration: { feedbackSignal: 'loud' } }] },
      400,
      'orderItems[0].configuration.feedbackSignal',
    ],
    [
      'text too long',
      { ...base, orderItems: [{ ...item, configuration: { personalDataLastName: 'x'.repeat(21) } }] },
      400,
      'orderItems[0].configuration.personalDataLastName',
    ],
    [
      'main item naming a slot',
      { ...base, orderItems: [{ articleNumber: 'BSF8', quantity: 1, articleBomItemOid: 2 }] },
      400,
      'orderItems[0].articleBomItemOid',
    ],
    [
      'unknown slot',
      { ...base, orderItems: [{ articleNumber: 'TRAINING-SET', quantity: 1, subitems: [{ articleNumber: 'BSF8', quantity: 5, articleBomItemOid: 9 }] }] },
      400,
      'orderItems[0].subitems[0].articleBomItemOid',
    ],
    [
      'article not valid in the slot',
      { ...base, orderItems: [{ articleNumber: 'TRAINING-SET', quantity: 1, subitems: [{ articleNumber: 'BSF8', quantity: 1, articleBomItemOid: 3 }] }] },
      400,
      'orderItems[0].subitems[0].articleNumber',
    ],
    [
      'locked slot changed',
      { ...base, orderItems: [{ articleNumber: 'TRAINING-SET', quantity: 1, subitems: [{ articleNumber: 'BSF8', quantity: 4, articleBomItemOid: 1 }] }] },
      400,
      'orderItems[0].subitems[0].quantity',
    ],
    [
      'configuration of a non-configurable slot',
      {
        ...base,
        orderItems: [
          {
            articleNumber: 'SIAC-STARTER',
            quantity: 1,
            subitems: [{ articleNumber: 'CARD-HOLDER', quantity: 1, articleBomItemOid: 2, configuration: { feedbackSignal: 'silent' } }],
          },
        ],
      },
      400,
      'orderItems[0].subitems[0].configuration.feedbackSignal',
    ],
    [
      'excluded attribute in a set',
      {
        ...base,
        orderItems: [
          {
            articleNumber: 'TRAINING-SET',
            quantity: 1,
            subitems: [{ articleNumber: 'SIAC1', quantity: 1, articleBomItemOid: 2, configuration: { personalDataFirstName: 'Bo' } }],
          },
        ],
      },
      400,
      'orderItems[0].subitems[0].configuration.personalDataFirstName',
    ],
    [
      'slot filled twice',
      {
        ...base,
        orderItems: [
          {
            articleNumber: 'SIAC-STARTER',
            quantity: 1,
            subitems: [
              { articleNumber: 'CARD-HOLDER', quantity: 1, articleBomItemOid: 2 },
              { articleNumber: 'CARD-HOLDER', quantity: 1, articleBomItemOid: 2 },
            ],
          },
        ],
      },
      400,
      'orderItems[0].subitems[1].articleBomItemOid',
    ],
    [
      'sub item with sub items',
      {
        ...base,
        orderItems: [
          {
            articleNumber: 'SIAC-STARTER',
            quantity: 1,
            subitems: [
              { articleNumber: 'CARD-HOLDER', quantity: 1, articleBomItemOid: 2, subitems: [{ articleNumber: 'BSF8', quantity: 1, articleBomItemOid: 1 }] },
            ],
          },
        ],
      },
      400,
      'orderItems[0].subitems[0].subitems',
    ],
    [
      'neither first name nor organisation',
      { ...base, shippingAddress: { address1: 'Weg 1', city: 'Berlin', countryCode: 'DE' } },
      400,
      'shippingAddress.firstName',
    ],
    ['unassigned country code', { ...base, shippingAddress: { ...base.shippingAddress, countryCode: 'XX' } }, 400, 'shippingAddress.countryCode'],
    ['lower-case country code (spec)', { ...base, shippingAddress: { ...base.shippingAddress, countryCode: 'de' } }, 400],
    ['phone missing for a UPS destination', { ...base, shippingAddress: { ...base.shippingAddress, countryCode: 'CH' } }, 400, 'shippingAddress.phoneNumber'],
    [
      'phone missing for a DHL Express destination',
      { ...base, shippingAddress: { ...base.shippingAddress, countryCode: 'JP' } },
      400,
      'shippingAddress.phoneNumber',
    ],
    [
      'invalid E.164 phone',
      { ...base, shippingAddress: { ...base.shippingAddress, countryCode: 'US', phoneNumber: '+1000' } },
      400,
      'shippingAddress.phoneNumber',
    ],
    ['phone not in E.164 format (spec)', { ...base, shippingAddress: { ...base.shippingAddress, phoneNumber: '030 123456' } }, 400],
    ['billing address although the same as shipping', { ...base, billingAddress: base.shippingAddress }, 400, 'billingAddress'],
    ['billing address missing', { ...base, billingAddressIsSameAsShippingAddress: false }, 400, 'billingAddress'],
    ['billing address null while different', { ...base, billingAddressIsSameAsShippingAddress: false, billingAddress: null }, 400, 'billingAddress'],
    ['unknown discount code', { ...base, discountCodes: ['NOSUCHCODE'] }, 400, 'discountCodes[0]'],
    ['unknown field (spec)', { ...base, totalCents: 1 }, 400],
    ['client price ignored but unknown item field rejected (spec)', { ...base, orderItems: [{ ...item, netPriceCents: 1 }] }, 400],
  ];

  // Four values per row: jest would pass a `done` callback for a missing fourth one.
  test.each(cases.map(([name, body, status, field]) => [name, body, status, field ?? null] as const))('%s', async (_name, body, status, field) => {
    const before = await snapshot(shop.database);
    const mails = shop.smtp!.received.length;
    const res = await postOrder(shop, body);
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ code: 3, message: expect.any(String) });
    if (field) {
      const violations = (res.body.details as { fieldViolations?: { field: string }[] }[]).flatMap((d) => d.fieldViolations ?? []);
      expect(violations.map((v) => v.field)).toContain(field);
    }
    expect(await snapshot(shop.database)).toEqual(before);
    await new Promise((r) => setTimeout(r, 20));
    expect(shop.smtp!.received.length).toBe(mails);
  });

  test('a taken card number → 409, and a valid code redeemed in the same order is rolled back', async () => {
    const [code] = await createCodes(shop, { kind: 'fixedAmount', amountCents: 500, maxRedemptionsPerCode: 5 });
    const first = await postOrder(shop, orderBody({ orderItems: [{ ...item, configuration: { cardNumber: '8200001' } }] }));
    expect(first.status).toBe(200);
    const before = await snapshot(shop.database);
    const res = await postOrder(
      shop,
      orderBody({
        discountCodes: [code],
        orderItems: [
          { articleNumber: 'BSF8', quantity: 1 },
          { ...item, configuration: { cardNumber: '8200001' } },
        ],
      }),
    );
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 10, message: expect.stringContaining('8200001') });
    expect(await snapshot(shop.database)).toEqual(before);
  });

  test('an expired, a not yet valid and a used-up code', async () => {
    const [expired] = await createCodes(shop, { validFrom: '2020-01-01T00:00:00Z', validTo: '2021-01-01T00:00:00Z' });
    const [future] = await createCodes(shop, { validFrom: '2999-01-01T00:00:00Z' });
    const [single] = await createCodes(shop, {});
    const bsf8 = [{ articleNumber: 'BSF8', quantity: 1 }];
    expect((await postOrder(shop, orderBody({ orderItems: bsf8, discountCodes: [single] }))).status).toBe(200);
    const before = await snapshot(shop.database);
    const rExpired = await postOrder(shop, orderBody({ orderItems: bsf8, discountCodes: [expired] }));
    expect(rExpired.status).toBe(400);
    expect(rExpired.body.message).toContain('expired');
    expect((await postOrder(shop, orderBody({ orderItems: bsf8, discountCodes: [future] }))).status).toBe(400);
    const rUsed = await postOrder(shop, orderBody({ orderItems: bsf8, discountCodes: [single] }));
    expect(rUsed.status).toBe(409);
    expect(rUsed.body.code).toBe(10);
    expect(await snapshot(shop.database)).toEqual(before);
  });
});
