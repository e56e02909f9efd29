/**
 * Shop orders end to end (`createShopOrder`, `AddressDTO`, `ShopOrderDTO`): the real app with
 * response validation, the demo catalogue, real PostgreSQL, and a real SMTP server behind the outbox.
 */
import { sql } from 'kysely';
import request from 'supertest';
import { findOrder, toShopOrderDTO } from '../src/orders/orders.mapper';
import { orderNumberFor } from '../src/orders/placement/place-order.steps';
import { messageIdFor } from '../src/outbox/outbox.service';
import type { components } from '../src/generated/openapi';
import { createCodes, orderBody, postOrder, snapshot, startShop, type TestShop } from './support/orders';

type ShopOrderDTO = components['schemas']['ShopOrderDTO'];

let shop: TestShop;
beforeAll(async () => {
  shop = await startShop({ mail: true });
});
afterAll(async () => {
  await shop.close();
});

test('an anonymous customer orders a personalised SIAC with a discount code and receives one localized e-mail', async () => {
  const [code] = await createCodes(shop, { kind: 'percent', percent: 10, codes: ['welcome-10'] });
  expect(code).toBe('WELCOME-10');
  const res = await postOrder(shop, orderBody({ discountCodes: ['welcome-10'], notes: 'Bitte <b>schnell</b> & gut' }));
  expect(res.status).toBe(200);
  const order = res.body as ShopOrderDTO;
  expect(order).toMatchObject({
    state: 'pending_payment',
    paymentMethod: 'paylink',
    userGroup: 'public',
    courier: 'dhlParcel',
    currency: 'EUR',
    discountCodes: ['WELCOME-10'],
    billingAddress: null,
    shippingAddress: { countryCode: 'DE', city: 'Berlin' },
    // 50.34 net; 10 % = 5.034 → 5.03; shipping 5.90; VAT 19 % of 45.31 = 8.6089 → 8.61, of 5.90 = 1.121 → 1.12.
    itemsNetCents: 5034,
    discountCents: 503,
    shippingNetCents: 590,
    netTotalCents: 5121,
    vatCents: 973,
    grossTotalCents: 6094,
    vatBreakdown: [{ vatRatePercent: 19, netCents: 5121, vatCents: 973 }],
  });
  expect(order.orderNumber).toMatch(/^SO-\d{4}-\d{6}$/);
  expect(order.orderItems).toHaveLength(1);
  expect(order.orderItems[0]).toMatchObject({
    articleNumber: 'SIAC1',
    articleName: 'SIAC',
    quantity: 1,
    unitNetPriceCents: 5034,
    netAmountCents: 5034,
    configuration: { cardNumber: '8123456', personalDataFirstName: 'Anna', feedbackSignal: 'beepAndFlash' },
  });

  const claim = await shop.database.db.selectFrom('card_numbers').selectAll().where('service_id', '=', 8123456).executeTakeFirstOrThrow();
  expect(claim).toMatchObject({ card_type: 'siac1', state: 'reserved', order_ref: order.orderNumber });
  const history = await shop.database.db.selectFrom('order_state_changes').selectAll().where('order_id', '=', order.oid).execute();
  expect(history).toEqual([expect.objectContaining({ from_state: null, to_state: 'pending_payment', actor: 'anonymous' })]);

  const [mail] = await shop.smtp!.waitFor(1);
  expect(mail.envelopeTo).toEqual(['anna@example.com']);
  expect(mail.parsed.subject).toBe(`Ihre Bestellung ${order.orderNumber}`);
  expect(mail.parsed.messageId).toBe(messageIdFor(`order-confirmation:${order.oid}`));
  expect(mail.parsed.headers.get('content-language')).toBe('de');
  const text = mail.parsed.text ?? '';
  expect(text).toContain('Guten Tag Anna Muster');
  expect(text).toContain('1 × SIAC (SIAC1)');
  expect(text).toContain('Kartennummer: 8123456');
  expect(text).toContain('Quittierungssignal: Ton und Blinken');
  expect(text).toContain('Rabatt (WELCOME-10)');
  // de-CH formats currency amounts the Swiss way.
  expect(text).toContain(new Intl.NumberFormat('de-CH', { style: 'currency', currency: 'EUR' }).format(60.94));
  expect(text).toContain('MwSt. 19');
  // A consumer saw gross prices in the shop, so the e-mail shows them: 50.34 + 19 % = 59.90 per SIAC, the
  // discount's gross share 5.98, shipping 5.90 + 1.12 = 7.02; 59.90 − 5.98 + 7.02 = 60.94, VAT contained 9.73.
  const chf = (v: number) => new Intl.NumberFormat('de-CH', { style: 'currency', currency: 'EUR' }).format(v);
  expect(text).toContain(`1 × SIAC (SIAC1)  ${chf(59.9)}`);
  expect(text).toContain(`Rabatt (WELCOME-10): −${chf(5.98)}`);
  expect(text).toContain(`Versand (DHL Paket): ${chf(7.02)}`);
  expect(text).toContain(`inkl. MwSt. ${new Intl.NumberFormat('de-CH', { style: 'percent' }).format(0.19)}: ${chf(9.73)}`);
  expect(text).toContain('Alle Preise inklusive MwSt.');
  expect(text).not.toContain('netto');
  expect(text).toMatch(/Ihr SPORTident Shop-Team\n$/);
  expect(text).toContain('Hauptstraße 1');
  expect(text).toContain('Deutschland');
  const html = String(mail.parsed.html);
  // Notes are for the shop, not echoed to the recipient (docs/mails.md "Customer text").
  expect(html).not.toContain('schnell');
  expect(text).not.toContain('schnell');
  expect(html).toContain(order.orderNumber);
});

test('a retailer orders on invoice: state received, retailer-only articles, French e-mail, billing address', async () => {
  const before = shop.smtp!.received.length;
  const token = await shop.ctx.bearer({ roles: ['retailer'], userGroup: 'retailer', id: 42, erpRetailerEntityId: 'C-1001' });
  const res = await postOrder(
    shop,
    orderBody({
      contact: { firstName: 'Jean', lastName: 'Dupont', email: 'jean@club.example', culture: 'fr-CH' },
      shippingAddress: { organisation: 'OL Zürich', address1: 'Bahnhofstrasse 1', zip: '8001', city: 'Zürich', countryCode: 'CH', phoneNumber: '+41791234567' },
      billingAddressIsSameAsShippingAddress: false,
      billingAddress: { organisation: 'OL Zürich', address1: 'Postfach 12', city: 'Zürich', countryCode: 'CH' },
      orderItems: [
        { articleNumber: 'BSF8-PACK10', quantity: 2 },
        {
          articleNumber: 'TRAINING-SET',
          quantity: 1,
          subitems: [{ articleNumber: 'SI-CARD10', quantity: 1, articleBomItemOid: 2, configuration: { cardNumber: '7000123' } }],
        },
      ],
      retailerCustomerOrderReference: 'PO-77',
    }),
    { Authorization: token },
  );
  expect(res.status).toBe(200);
  const order = res.body as ShopOrderDTO;
  expect(order).toMatchObject({ state: 'received', paymentMethod: 'invoice', userGroup: 'retailer', courier: 'ups', retailerCustomerOrderReference: 'PO-77' });
  expect(order.billingAddress).toMatchObject({ address1: 'Postfach 12', countryCode: 'CH' });
  // Set: slots 1 (5 × BSF8, locked) and 4 (5 × battery) default, slot 2 SI-CARD10 instead of SIAC1 (cheaper: no surcharge),
  // slot 3 card holder default; all included in the set price.
  const set = order.orderItems[1];
  expect(set.subitems.map((s) => [s.articleBomItemOid, s.articleNumber, s.quantity, s.netAmountCents])).toEqual([
    [1, 'BSF8', 5, 0],
    [2, 'SI-CARD10', 1, 0],
    [3, 'CARD-HOLDER', 1, 0],
    [4, 'BAT-BSF8', 5, 0],
  ]);
  expect(set.subitems[1].configuration).toEqual({ cardNumber: '7000123', feedbackSignal: 'beepAndFlash' });
  expect(order.itemsNetCents).toBe(2 * 150_420 + 89_916);
  expect(order.shippingNetCents).toBe(2490);
  expect(order.grossTotalCents).toBe(order.netTotalCents + order.vatCents);
  const row = await shop.database.db
    .selectFrom('orders')
    .select(['erp_retailer_entity_id', 'shipping_country_id', 'billing_country_id'])
    .where('id', '=', order.oid)
    .executeTakeFirstOrThrow();
  expect(row).toEqual({ erp_retailer_entity_id: 'C-1001', shipping_country_id: 756, billing_country_id: 756 });

  const mails = await shop.smtp!.waitFor(before + 1);
  const mail = mails[before];
  expect(mail.parsed.subject).toBe(`Votre commande ${order.orderNumber}`);
  expect(mail.parsed.text).toContain('Votre référence: PO-77');
  expect(mail.parsed.text).toContain('Numéro de carte: 7000123');
  expect(mail.parsed.text).toContain('UPS Standard');
  expect(mail.parsed.text).toContain('+41791234567');
  // A retailer saw net prices: net lines, net total, VAT added.
  expect(mail.parsed.text).toContain('Articles (HT)');
  expect(mail.parsed.text).toContain('Total (HT)');
  expect(mail.parsed.text).toContain('Prix HT, TVA en sus comme indiqué.');
  expect(mail.parsed.text).not.toContain('dont TVA');
});

test('sub item surcharges and optional slots are priced; unknown cultures get English', async () => {
  const before = shop.smtp!.received.length;
  const res = await postOrder(
    shop,
    orderBody({
      contact: { firstName: 'Kim', lastName: 'Lee', email: 'kim@example.com', culture: 'ko-KR' },
      orderItems: [
        {
          articleNumber: 'SIAC-STARTER',
          quantity: 2,
          subitems: [
            { articleNumber: 'CARD-HOLDER-WRIST', quantity: 1, articleBomItemOid: 2 },
            { articleNumber: 'CARD-HOLDER-WRIST', quantity: 1, articleBomItemOid: 3 },
          ],
        },
      ],
    }),
  );
  expect(res.status).toBe(200);
  const set = (res.body as ShopOrderDTO).orderItems[0];
  // Slot 2: wrist holder instead of the finger holder → surcharge 2.94 − 2.10 = 0.84 per unit; slot 3 is optional → full 2.94.
  expect(set.subitems.map((s) => [s.articleBomItemOid, s.unitNetPriceCents, s.netAmountCents])).toEqual([
    [1, 0, 0],
    [2, 84, 168],
    [3, 294, 588],
  ]);
  expect((res.body as ShopOrderDTO).itemsNetCents).toBe(2 * 5294 + 168 + 588);
  // The answer is built from what the insert returned: byte for byte the order as read back.
  expect(JSON.stringify(res.body)).toBe(JSON.stringify(toShopOrderDTO((await findOrder(shop.database.db, (res.body as ShopOrderDTO).oid))!)));
  const mails = await shop.smtp!.waitFor(before + 1);
  expect(mails[before].parsed.subject).toMatch(/^Your order SO-/);
});

test('200 concurrent orders for one personalised card number: exactly one succeeds, the others get 409', async () => {
  const before = await snapshot(shop.database);
  const body = orderBody({ orderItems: [{ articleNumber: 'SIAC1', quantity: 1, configuration: { cardNumber: '8765432' } }] });
  const results = await Promise.all(Array.from({ length: 200 }, () => postOrder(shop, body)));
  const statuses = results.map((r) => r.status);
  expect(statuses.filter((s) => s === 200)).toHaveLength(1);
  expect(statuses.filter((s) => s === 409)).toHaveLength(199);
  for (const r of results.filter((x) => x.status === 409)) expect(r.body.code).toBe(10);
  const after = await snapshot(shop.database);
  expect(after.orders - before.orders).toBe(1);
  expect(after.cardNumbers - before.cardNumbers).toBe(1);
  expect(after.outbox - before.outbox).toBe(1);
  const winner = results.find((r) => r.status === 200)!.body as ShopOrderDTO;
  const claim = await shop.database.db.selectFrom('card_numbers').select('order_ref').where('service_id', '=', 8765432).executeTakeFirstOrThrow();
  expect(claim.order_ref).toBe(winner.orderNumber);
});

test('staff order the internal-only service article; anonymous callers cannot', async () => {
  const res = await request(shop.url)
    .post('/api/grpc-json/v1/shop/orders')
    .set('Authorization', await shop.staff())
    .send(orderBody({ orderItems: [{ articleNumber: 'SIAC-BATTERY-SERVICE', quantity: 3 }] }));
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ userGroup: 'internal', state: 'received', paymentMethod: 'invoice', itemsNetCents: 3 * 1260 });
  const anonymous = await postOrder(shop, orderBody({ orderItems: [{ articleNumber: 'SIAC-BATTERY-SERVICE', quantity: 3 }] }));
  expect(anonymous.status).toBe(400);
});

test('the order number is SO-<year>-<id> with at least 6 digits, and the first history entry is written with the order', async () => {
  const db = shop.database.db;
  const body = orderBody({ orderItems: [{ articleNumber: 'BSF8', quantity: 1 }] });
  const small = await postOrder(shop, body);
  expect(small.status).toBe(200);
  const row = await db.selectFrom('orders').select(['id', 'order_number', 'created_at', 'state']).where('id', '=', small.body.oid).executeTakeFirstOrThrow();
  expect(row.order_number).toBe(orderNumberFor(row.id, row.created_at));
  expect(row.order_number).toMatch(/^SO-\d{4}-\d{6}$/);
  const history = await db.selectFrom('order_state_changes').select(['from_state', 'to_state', 'reason']).where('order_id', '=', row.id).execute();
  expect(history).toEqual([{ from_state: null, to_state: row.state, reason: 'order placed (createShopOrder)' }]);
  // Ids beyond six digits are not cut.
  await sql`select setval(pg_get_serial_sequence('orders', 'id'), 12345678)`.execute(db);
  const large = await postOrder(shop, body);
  expect(large.status).toBe(200);
  expect(large.body.oid).toBe(12345679);
  expect(large.body.orderNumber).toBe(orderNumberFor(12345679, new Date()));
});
