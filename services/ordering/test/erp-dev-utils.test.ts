/**
 * ERP development utilities (`devGetErpOrders`, `devGetSalesInvoicesCsvExport`) over real HTTP and a real PostgreSQL:
 * `get-erp-orders` (defaults page 0 / size 20 / `oid desc`, filters, sort allow-list, transfer status from
 * the order flow's outbox job) and `get-sales-invoices-csv-export` against the ERP simulator (month in
 * Europe/Berlin, customer data, formula-safe CSV, ERP down → 503).
 */
import request from 'supertest';
import { parse } from 'csv-parse/sync';
import { CUSTOMER_NUMBERS, createErpSimulator, type ErpSimulator } from '@sports-timing/erp-simulator';
import { orderBody, postOrder, startShop, type TestShop } from './support/orders';
import { startOrdering, type OrderingTestContext } from './support/app';
import { testTime } from '@sports-timing/shared/src/test-time';

describe('get-erp-orders', () => {
  let shop: TestShop;
  let admin: string;
  const ids: number[] = [];
  beforeAll(async () => {
    shop = await startShop();
    admin = await shop.ctx.bearer({ roles: ['admin'] });
    const staff = await shop.staff();
    ids.push((await postOrder(shop, orderBody()).expect(200)).body.oid);
    ids.push(
      (
        await postOrder(
          shop,
          orderBody({
            shippingAddress: { firstName: 'Ola', lastName: 'Nordmann', address1: 'Ring 1', zip: '1010', city: 'Wien', countryCode: 'AT' },
            contact: { firstName: 'Ola', lastName: 'Nordmann', email: 'ola@example.com' },
            orderItems: [{ articleNumber: 'SIAC1', quantity: 1, configuration: { cardNumber: '8123457' } }],
          }),
          { authorization: staff },
        ).expect(200)
      ).body.oid,
    );
    ids.push(
      (
        await postOrder(shop, orderBody({ orderItems: [{ articleNumber: 'SIAC1', quantity: 1, configuration: { cardNumber: '8123458' } }] }), {
          authorization: staff,
        }).expect(200)
      ).body.oid,
    );
    await shop.database.db.updateTable('orders').set({ erp_sales_order_id: '4711' }).where('id', '=', ids[2]).execute();
  });
  afterAll(() => shop.close());
  const get = (query: Record<string, string> = {}) => request(shop.url).get('/api/rest/v1/dev/get-erp-orders').query(query).set('authorization', admin);

  it('pages with the default page and size and reports the hand-off status', async () => {
    const res = (await get().expect(200)).body;
    expect(res).toMatchObject({ page: 0, size: 20, totalCount: 3 });
    expect(res.items.map((o: { oid: number }) => o.oid)).toEqual([...ids].reverse());
    const [third, second, first] = res.items;
    expect(first).toMatchObject({ state: 'pending_payment', transferStatus: 'notDue', erpSalesOrderId: null, erpSystem: null, countryCode: 'DE' });
    expect(second).toMatchObject({ state: 'received', transferStatus: 'pending', countryCode: 'AT' });
    expect(third).toMatchObject({ transferStatus: 'transferred', erpSalesOrderId: '4711', erpSystem: 'weclapp' });
  });

  it('filters, sorts from the allow-list only, and validates paging', async () => {
    expect((await get({ states: 'received' }).expect(200)).body.totalCount).toBe(2);
    expect((await get({ countryCode: 'AT' }).expect(200)).body.items.map((o: { oid: number }) => o.oid)).toEqual([ids[1]]);
    expect((await get({ searchText: 'OLA@EXAMPLE' }).expect(200)).body.totalCount).toBe(1);
    expect((await get({ searchText: '%' }).expect(200)).body.totalCount).toBe(0);
    expect((await get({ sort: 'oid asc', size: '2', page: '1' }).expect(200)).body.items.map((o: { oid: number }) => o.oid)).toEqual([ids[2]]);
    await get({ sort: 'id; drop table orders' }).expect(400);
    await get({ size: '101' }).expect(400);
    await get({ states: 'bogus' }).expect(400);
    await request(shop.url)
      .get('/api/rest/v1/dev/get-erp-orders')
      .set('authorization', await shop.staff())
      .expect(403);
  });
});

describe('get-sales-invoices-csv-export', () => {
  let sim: ErpSimulator;
  let ctx: OrderingTestContext;
  let admin: string;
  beforeAll(async () => {
    sim = await createErpSimulator().start();
    ctx = await startOrdering({ ERP_BASE_URL_WECLAPP: sim.baseUrl('main'), ERP_TIMEOUT_MS: String(testTime(1_000)) });
    admin = await ctx.bearer({ roles: ['admin'] });
  });
  afterAll(async () => {
    await ctx.close();
    await sim.stop();
  });
  const get = (year: number, month: number) =>
    request(ctx.app).get('/api/rest/v1/dev/get-sales-invoices-csv-export').query({ year, month }).set('authorization', admin);

  it('exports the invoices of the Berlin month with customer data, formula-safe', async () => {
    await sim.patchEntity('customer', CUSTOMER_NUMBERS.retailerGermany, { company: '=cmd|calc' });
    const res = await get(2025, 3).expect(200);
    expect(res.headers['content-disposition']).toBe('attachment; filename="sales-invoices-2025-03.csv"');
    const rows = parse(res.text, { columns: true }) as Record<string, string>[];
    expect(rows.map((r) => r.invoiceNumber)).toEqual(['RE-2025-0004', 'RE-2025-0005']);
    expect(rows[0]).toMatchObject({ invoiceDate: '2025-03-01', customerNumber: 'R-1001', customerName: "'=cmd|calc", countryCode: 'DE', currency: 'EUR' });
    expect(Number(rows[0].grossAmountCents)).toBe(Number(rows[0].netAmountCents) + Number(rows[0].vatAmountCents));
    expect((parse((await get(2025, 2).expect(200)).text, { columns: true }) as unknown[]).length).toBe(2);
    expect((await get(2024, 2).expect(200)).text).toBe(
      'invoiceNumber,invoiceDate,customerNumber,customerName,countryCode,netAmountCents,vatAmountCents,grossAmountCents,currency,orderNumber\n',
    );
    // April holds a draft (NEW), a cancelled and a booked invoice: only the booked one is revenue.
    const april = parse((await get(2025, 4).expect(200)).text, { columns: true }) as Record<string, string>[];
    expect(april.map((r) => r.invoiceNumber)).toEqual(['RE-2025-0008']);
    expect(Number(april[0].vatAmountCents)).toBe(Number(april[0].grossAmountCents) - Number(april[0].netAmountCents));
    await get(2025, 13).expect(400);
  });

  it('answers 503 when the ERP is down', async () => {
    await sim.server.down('reset');
    const res = await get(2025, 3).expect(503);
    expect(res.headers['retry-after']).toBe('30');
    await sim.server.up();
  });
});
