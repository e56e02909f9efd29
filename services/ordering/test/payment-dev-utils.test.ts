/**
 * Development utilities of the payment side and orders (tag `dev`), against the payment
 * simulator over real HTTP: passthroughs (paylinks, transactions, payouts, accounting CSV) with 404 for
 * unknown objects and 503 while the provider is down, order paylinks, and the order listing (filters,
 * search, sort allow-list, paging defaults). Responses are validated against the spec.
 */
import request from 'supertest';
import { createPaymentSimulator, type PaymentSimulator } from '@sports-timing/payment-simulator';
import { loadDemoCatalog } from '../src/demo/catalog';
import { startOrdering, type OrderingTestContext } from './support/app';
import { orderBody } from './support/orders';

let pay: PaymentSimulator;
let ctx: OrderingTestContext;
let admin: string;
beforeAll(async () => {
  pay = await createPaymentSimulator().start();
  ctx = await startOrdering({ PAYMENT_BASE_URL: pay.baseUrl });
  await loadDemoCatalog(ctx.database.db);
  admin = await ctx.bearer({ roles: ['admin'], userGroup: 'internal', id: 1 });
});
afterAll(async () => {
  await pay.stop();
  await ctx.close();
});

const dev = (path: string) => `/api/rest/v1/dev/${path}`;

test('paylink, transaction, payout and CSV passthroughs; unknown → 404', async () => {
  const created = await request(ctx.app).post(dev('create-payment-paylink')).set('Authorization', admin).send({});
  expect(created.status).toBe(200);
  expect(created.body).toMatchObject({ amountCents: 100, currency: 'EUR', title: 'Test payment', status: 'waiting' });
  const id = created.body.id as number;
  expect(
    (
      await request(ctx.app)
        .get(dev(`get-payment-paylink?id=${id}`))
        .set('Authorization', admin)
    ).body.id,
  ).toBe(id);
  expect((await request(ctx.app).get(dev('get-payment-paylink?id=999999')).set('Authorization', admin)).status).toBe(404);

  const paid = await fetch(`${pay.baseUrl.replace(/\/api\/v1$/, '/__control')}/pay`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ invoiceId: id }),
  });
  const tx = ((await paid.json()) as { transaction: { id: number } }).transaction;
  const one = await request(ctx.app)
    .get(dev(`get-payment-transaction?id=${tx.id}`))
    .set('Authorization', admin);
  expect(one.status).toBe(200);
  expect(one.body).toMatchObject({ id: tx.id, status: 'confirmed', amountCents: 100 });
  expect((await request(ctx.app).get(dev('get-payment-transaction?id=999999')).set('Authorization', admin)).status).toBe(404);
  const list = await request(ctx.app).get(dev('get-payment-transactions')).set('Authorization', admin);
  expect(list.status).toBe(200);
  expect(list.body.map((t: { id: number }) => t.id)).toContain(tx.id);

  const payout = pay.payout()!;
  const payouts = await request(ctx.app).get(dev('get-payment-payouts')).set('Authorization', admin);
  expect(payouts.status).toBe(200);
  const details = await request(ctx.app)
    .get(dev(`get-payment-payout-with-details?uuid=${payout.uuid}`))
    .set('Authorization', admin);
  expect(details.status).toBe(200);
  expect(details.body.transactions.map((t: { transactionId: number }) => t.transactionId)).toContain(tx.id);
  const csv = await request(ctx.app)
    .get(dev(`get-payment-accounting-csv-export?uuid=${payout.uuid}`))
    .set('Authorization', admin);
  expect(csv.status).toBe(200);
  expect(csv.headers['content-type']).toMatch(/^text\/csv/);
  expect(csv.headers['content-disposition']).toContain('attachment');
  expect((await request(ctx.app).get(dev('get-payment-payout-with-details?uuid=nope')).set('Authorization', admin)).status).toBe(404);

  const other = await request(ctx.app).post(dev('create-payment-paylink')).set('Authorization', admin).send({ amountCents: 990, title: 'X' });
  expect(
    (
      await request(ctx.app)
        .post(dev(`delete-payment-paylink?id=${other.body.id}`))
        .set('Authorization', admin)
    ).status,
  ).toBe(200);
  expect(
    (
      await request(ctx.app)
        .post(dev(`delete-payment-paylink?id=${other.body.id}`))
        .set('Authorization', admin)
    ).status,
  ).toBe(404);
});

test('provider down → 503 with Retry-After; customers are refused', async () => {
  await pay.server.down('close');
  try {
    const r = await request(ctx.app).get(dev('get-payment-transactions')).set('Authorization', admin);
    expect(r.status).toBe(503);
    expect(r.headers['retry-after']).toBeDefined();
  } finally {
    await pay.server.up();
  }
  const customer = await ctx.bearer({ roles: ['customer'], id: 5 });
  expect((await request(ctx.app).get(dev('get-payment-transactions')).set('Authorization', customer)).status).toBe(403);
});

test('order listing: filters, search, sort allow-list and paging; order paylinks', async () => {
  const ids: number[] = [];
  for (let i = 0; i < 3; i++) {
    const body = orderBody({
      contact: { firstName: 'Lisa', lastName: `Listing${i}`, email: `list${i}@example.com` },
      orderItems: [{ articleNumber: 'SIAC1', quantity: 1, configuration: { cardNumber: String(8400000 + i) } }],
      ...(i === 2 ? { shippingAddress: { firstName: 'Lisa', address1: 'Ring 1', zip: '1010', city: 'Wien', countryCode: 'AT' } } : {}),
    });
    const r = await request(ctx.app).post('/api/grpc-json/v1/shop/orders').send(body);
    expect([r.status, r.status === 200 ? null : r.body]).toEqual([200, null]);
    ids.push(r.body.oid);
  }
  const all = await request(ctx.app).get(dev('get-orders')).set('Authorization', admin);
  expect(all.status).toBe(200);
  expect(all.body).toMatchObject({ page: 0, size: 10, totalCount: 3 });
  expect(all.body.items.map((o: { oid: number }) => o.oid)).toEqual([...ids].reverse());
  const asc = await request(ctx.app).get(dev('get-orders?sort=oid%20asc&size=2&page=1')).set('Authorization', admin);
  expect(asc.body.items.map((o: { oid: number }) => o.oid)).toEqual([ids[2]]);
  expect((await request(ctx.app).get(dev('get-orders?countryCode=AT')).set('Authorization', admin)).body.items.map((o: { oid: number }) => o.oid)).toEqual([
    ids[2],
  ]);
  expect((await request(ctx.app).get(dev('get-orders?searchText=listing1')).set('Authorization', admin)).body.totalCount).toBe(1);
  expect((await request(ctx.app).get(dev('get-orders?searchText=%25')).set('Authorization', admin)).body.totalCount).toBe(0);
  expect((await request(ctx.app).get(dev('get-orders?states=paid,transferred')).set('Authorization', admin)).body.totalCount).toBe(0);
  expect((await request(ctx.app).get(dev('get-orders?states=pending_payment')).set('Authorization', admin)).body.totalCount).toBe(3);
  expect((await request(ctx.app).get(dev('get-orders?sort=contact%20asc')).set('Authorization', admin)).status).toBe(400);
  expect((await request(ctx.app).get(dev('get-orders?states=lost')).set('Authorization', admin)).status).toBe(400);
  // The comma list of `OrderStatesFilter`: empty means all; a space, an empty item, an unknown state or a second `states` is a 400.
  expect((await request(ctx.app).get(dev('get-orders?states=')).set('Authorization', admin)).body.totalCount).toBe(3);
  expect((await request(ctx.app).get(dev('get-orders?states=received,pending_payment')).set('Authorization', admin)).body.totalCount).toBe(3);
  for (const bad of ['paid,%20received', 'paid,', ',paid', 'paid,,received', 'paid,lost', 'PAID', 'paid&states=received', 'paid&states='])
    expect([
      bad,
      (
        await request(ctx.app)
          .get(dev(`get-orders?states=${bad}`))
          .set('Authorization', admin)
      ).status,
    ]).toEqual([bad, 400]);

  const link = await request(ctx.app)
    .post(dev(`create-erp-order-paylink?erpOrderOid=${ids[0]}`))
    .set('Authorization', admin);
  expect(link.status).toBe(200);
  const row = await ctx.database.db
    .selectFrom('orders')
    .select(['paylink_id', 'paylink_url', 'gross_total_cents'])
    .where('id', '=', ids[0])
    .executeTakeFirstOrThrow();
  expect(row).toMatchObject({ paylink_id: link.body.id, paylink_url: link.body.link });
  expect(link.body.amountCents).toBe(Number(row.gross_total_cents));
  const again = await request(ctx.app)
    .post(dev(`create-erp-order-paylink?erpOrderOid=${ids[0]}`))
    .set('Authorization', admin);
  expect(again.body.id).not.toBe(link.body.id);
  expect(
    (
      await request(ctx.app)
        .post(dev(`delete-erp-order-paylink?erpOrderOid=${ids[0]}`))
        .set('Authorization', admin)
    ).status,
  ).toBe(200);
  expect(
    (
      await request(ctx.app)
        .post(dev(`delete-erp-order-paylink?erpOrderOid=${ids[0]}`))
        .set('Authorization', admin)
    ).status,
  ).toBe(404);
  expect((await request(ctx.app).post(dev('create-erp-order-paylink?erpOrderOid=999999')).set('Authorization', admin)).status).toBe(404);
});
