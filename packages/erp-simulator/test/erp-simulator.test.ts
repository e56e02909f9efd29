/**
 * The ERP simulator over real HTTP: the weclapp-style API subset (auth, lists, filters, paging, optimistic
 * versions, documents) and the control API (faults, outages, webhooks).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ARTICLE_NUMBERS,
  ATTRIBUTE_KEYS,
  CUSTOMER_NUMBERS,
  DEFAULT_TOKENS,
  SEED_ARTICLES,
  createErpSimulator,
  localMidnightMs,
  type Article,
  type CustomAttributeDefinition,
  type Customer,
  type ErpCountResponse,
  type ErpErrorBody,
  type ErpListResponse,
  type ErpPatchAnswer,
  type ErpSimulator,
  type ErpSimulatorState,
  type ErpWebhookDelivery,
  type Quotation,
  type SalesInvoice,
  type SalesOrder,
  type SimRequestsAnswer,
} from '../src';

let sim: ErpSimulator;
let base: string;
let control: string;
const auth = { AuthenticationToken: DEFAULT_TOKENS.main };

/** A GET of the main tenant's API whose JSON answer is a `T` (an {@link ErpErrorBody} when it fails). */
async function get<T>(path: string, headers: Record<string, string> = auth): Promise<{ status: number; body: T }> {
  const res = await fetch(`${base}/${path}`, { headers });
  return { status: res.status, body: (await res.json()) as T };
}
/** A write (JSON `body`) to the main tenant's API whose JSON answer is a `T` (an {@link ErpErrorBody} when it fails). */
async function send<T>(method: string, path: string, body: unknown, headers: Record<string, string> = auth): Promise<{ status: number; body: T }> {
  const res = await fetch(`${base}/${path}`, { method, headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as T };
}
/** A control API call that must answer 200; its answer is a `T`. */
async function ctl<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${control}${path}`, { method, body: body === undefined ? undefined : JSON.stringify(body) });
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}
async function definitionId(key: string): Promise<string> {
  const defs = (await get<ErpListResponse<CustomAttributeDefinition>>('customAttributeDefinition')).body.result;
  return defs.find((d) => d.attributeKey === key)!.id;
}

/** A webhook receiver recording JSON bodies. */
async function receiver(): Promise<{ url: string; bodies: unknown[]; close(): Promise<void> }> {
  const bodies: unknown[] = [];
  const server = http.createServer((req, res) => {
    let b = '';
    req.on('data', (c) => (b += c));
    req.on('end', () => {
      bodies.push(JSON.parse(b));
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/erp/webhook?erpSystem=weclapp&secret=s3cret`,
    bodies,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

beforeAll(async () => {
  sim = await createErpSimulator().start();
  base = sim.baseUrl('main');
  control = `http://127.0.0.1:${sim.port}`;
});
afterAll(() => sim.stop());
beforeEach(() => sim.reset());

describe('authentication and tenants', () => {
  it('rejects a missing or wrong AuthenticationToken with 401', async () => {
    expect((await get('article', {})).status).toBe(401);
    const wrong = await get<ErpErrorBody>('article', { AuthenticationToken: 'nope' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toMatch(/AuthenticationToken/);
  });

  it('serves the sandbox tenant under its prefix with its own token and data', async () => {
    const sandbox = sim.baseUrl('sandbox');
    expect(sandbox).toMatch(/\/sandbox\/webapp\/api\/v1$/);
    expect((await fetch(`${sandbox}/article/count`, { headers: auth })).status).toBe(401);
    const res = await fetch(`${sandbox}/article/count`, { headers: { AuthenticationToken: DEFAULT_TOKENS.sandbox } });
    expect(await res.json()).toEqual({ result: SEED_ARTICLES.length });
  });
});

describe('articles', () => {
  it('lists with { result }, pages and sorts', async () => {
    const all = await get<ErpListResponse<Article>>('article?pageSize=1000');
    expect(all.body.result.map((a) => a.articleNumber)).toEqual(SEED_ARTICLES.map((a) => a.articleNumber));
    const page3 = await get<ErpListResponse<Article>>('article?pageSize=5&page=3');
    expect(page3.body.result).toHaveLength(Math.min(5, SEED_ARTICLES.length - 10));
    const sorted = await get<ErpListResponse<Article>>('article?sort=-articleNumber&pageSize=2');
    expect(sorted.body.result.map((a) => a.articleNumber)).toEqual(['TRAINING-SET', 'SPARE-PCB-BSF8']);
    expect((await get('article?pageSize=1001')).status).toBe(400);
    expect((await get('article?bogus=1')).status).toBe(400);
  });

  it('filters by property, list and custom attribute like weclapp', async () => {
    const shop = await definitionId(ATTRIBUTE_KEYS.shopArticle);
    expect((await get<ErpCountResponse>(`article/count?customAttribute${shop}-eq=true`)).body.result).toBe(SEED_ARTICLES.filter((a) => a.isShopArticle).length);
    const some = await get<ErpListResponse<Article>>(
      `article?articleNumber-in=${encodeURIComponent(JSON.stringify([ARTICLE_NUMBERS.siac, ARTICLE_NUMBERS.bsf8]))}`,
    );
    expect(some.body.result.map((a) => a.articleNumber).sort()).toEqual(['BSF8', 'SIAC1']);
    const like = await get<ErpListResponse<Article>>('article?articleNumber-like=SI-CARD%25');
    expect(like.body.result).toHaveLength(2);
  });

  it('carries custom attributes, BOM slots and prices in weclapp shapes', async () => {
    const set = (await get<ErpListResponse<Article>>(`article?articleNumber-eq=${ARTICLE_NUMBERS.trainingSet}`)).body.result[0];
    expect(set.articleType).toBe('SALES_BILL_OF_MATERIAL');
    expect(set.articlePrices![0]).toMatchObject({ price: '899.16', currencyName: 'EUR', priceScaleValue: '1' });
    expect(set.salesBillOfMaterialItems).toHaveLength(4);
    expect(set.salesBillOfMaterialItems![0]).toMatchObject({ articleNumber: 'BSF8', quantity: '5' });
    // weclapp's BOM item has no configurator fields: the set carries them in its LARGE_TEXT custom attribute.
    expect(Object.keys(set.salesBillOfMaterialItems![0]).sort()).toEqual([
      'articleId',
      'articleNumber',
      'createdDate',
      'id',
      'lastModifiedDate',
      'positionNumber',
      'quantity',
      'version',
    ]);
    const slotsDef = await definitionId(ATTRIBUTE_KEYS.shopSetConfiguration);
    const slots = JSON.parse(set.customAttributes!.find((a) => a.attributeDefinitionId === slotsDef)!.stringValue!) as { positionNumber: number }[];
    expect(slots[0]).toMatchObject({ positionNumber: 1, locked: true });
    expect(slots[1]).toMatchObject({ configurable: true, validArticleNumbers: ['SIAC1', 'SI-CARD10'] });
    expect(set).not.toHaveProperty('translations');
    const texts = (
      await get<{ result: { propertyName: string; values: { locale: string; text: string }[] }[] }>(
        `propertyTranslation/readPropertyTranslations?entityName=article&entityId=${set.id}&locale=de`,
      )
    ).body.result;
    expect(texts.map((t) => t.propertyName)).toEqual(['name', 'description']);
    expect(texts[0].values).toEqual([{ locale: 'de', text: expect.any(String) }]);
    const group = await definitionId(ATTRIBUTE_KEYS.shopUserGroup);
    const defs = (await get<ErpListResponse<CustomAttributeDefinition>>('customAttributeDefinition')).body.result;
    const retailerValue = defs.find((d) => d.id === group)?.selectableValues?.find((v) => v.value === 'retailer')?.id;
    const pack = (await get<ErpListResponse<Article>>(`article?customAttribute${group}-eq=${retailerValue}`)).body.result;
    expect(pack.map((a) => a.articleNumber)).toEqual([ARTICLE_NUMBERS.bsf8RetailerPack]);
  });

  it('updates with an optimistic version: stale → 409, current → new version', async () => {
    const a = (await get<ErpListResponse<Article>>(`article?articleNumber-eq=${ARTICLE_NUMBERS.bsm8}`)).body.result[0];
    const ok = await send<Article>('PUT', `article/id/${a.id}?ignoreMissingProperties=true`, { version: a.version, name: 'BSM8 master (USB-C)' });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ version: '1', name: 'BSM8 master (USB-C)', articleNumber: ARTICLE_NUMBERS.bsm8 });
    expect(ok.body.lastModifiedDate).toBeGreaterThan(a.lastModifiedDate);
    const stale = await send<ErpErrorBody>('PUT', `article/id/${a.id}`, { version: a.version, name: 'lost update' });
    expect(stale.status).toBe(409);
    expect(stale.body.type).toMatch(/optimistic_lock/);
    expect((await get<Article>(`article/id/${a.id}`)).body.name).toBe('BSM8 master (USB-C)');
    expect((await send('PUT', `article/id/${a.id}`, { version: '1', createdBy: 'x' })).status).toBe(400);
    expect((await get('article/id/999999')).status).toBe(404);
  });

  it('finds changed articles with lastModifiedDate-gt', async () => {
    const a = (await get<ErpListResponse<Article>>(`article?articleNumber-eq=${ARTICLE_NUMBERS.bs11}`)).body.result[0];
    const since = a.lastModifiedDate;
    await ctl('PATCH', `/__control/article/${ARTICLE_NUMBERS.bs11}`, { attributes: { shopArticle: false } });
    const changed = (await get<ErpListResponse<Article>>(`article?lastModifiedDate-gt=${since}`)).body.result;
    expect(changed.map((x) => x.articleNumber)).toEqual([ARTICLE_NUMBERS.bs11]);
  });
});

describe('customers, documents and invoices', () => {
  it('lists retailers as customers with custom attributes', async () => {
    const retailer = await definitionId(ATTRIBUTE_KEYS.retailer);
    const retailers = (await get<ErpListResponse<Customer>>(`customer?customAttribute${retailer}-eq=true`)).body.result;
    expect(retailers.map((c) => c.customerNumber)).toEqual([
      CUSTOMER_NUMBERS.retailerGermany,
      CUSTOMER_NUMBERS.retailerSwitzerland,
      CUSTOMER_NUMBERS.retailerNorway,
    ]);
    expect(new Set(retailers.map((c) => c.addresses![0].countryCode))).toEqual(new Set(['DE', 'CH', 'NO']));
  });

  it('creates a sales order with computed totals, ships it and books an invoice', async () => {
    const article = async (n: string) => (await get<ErpListResponse<Article>>(`article?articleNumber-eq=${n}`)).body.result[0].id;
    const customerId = (await get<ErpListResponse<Customer>>(`customer?customerNumber-eq=${CUSTOMER_NUMBERS.webshop}`)).body.result[0].id;
    const created = await send<SalesOrder>('POST', 'salesOrder', {
      customerId,
      orderItems: [{ articleId: await article(ARTICLE_NUMBERS.siacStarter), quantity: '2' }],
      deliveryAddress: { firstName: 'Ada', lastName: 'Runner', street1: 'Weg 1', zipcode: '10115', city: 'Berlin', countryCode: 'DE' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'ORDER_ENTRY_IN_PROGRESS', netAmount: '105.88', grossAmount: '126.00', version: '0', paid: false });
    expect(created.body).not.toHaveProperty('taxAmount');
    const id = created.body.id;
    const main = created.body.orderItems![0];
    // A sub item names an existing main item by id; its price is kept only as a manual price.
    const withSub = await send<SalesOrder>('PUT', `salesOrder/id/${id}?ignoreMissingProperties=true`, {
      id,
      version: '0',
      orderItems: [
        { id: main.id },
        { articleId: await article(ARTICLE_NUMBERS.siac), quantity: '2', unitPrice: '0.00', manualUnitPrice: true, parentItemId: main.id },
      ],
    });
    expect(withSub.status).toBe(200);
    expect(withSub.body.orderItems![1]).toMatchObject({ parentItemId: main.id, unitPrice: '0.00', manualUnitPrice: true });
    expect(withSub.body).toMatchObject({ netAmount: '105.88', grossAmount: '126.00', version: '1' });
    expect(
      (await send('PUT', `salesOrder/id/${id}`, { version: '1', orderItems: [{ articleId: main.articleId, quantity: '1', parentItemId: 'nope' }] })).status,
    ).toBe(400);
    expect((await send('PUT', `salesOrder/id/${id}`, { version: '1', status: 'SOMETHING' })).status).toBe(400);
    // weclapp has no SHIPPED status; `shipped` is read-only (ignored when written), set when a shipment is booked.
    expect((await send('PUT', `salesOrder/id/${id}`, { version: '1', status: 'SHIPPED' })).status).toBe(400);
    const printed = await send<SalesOrder>('PUT', `salesOrder/id/${id}`, { version: '1', status: 'ORDER_CONFIRMATION_PRINTED', shipped: true });
    expect(printed.body).toMatchObject({ status: 'ORDER_CONFIRMATION_PRINTED', shipped: false, invoiced: false, version: '2' });
    expect((await get<ErpListResponse<SalesInvoice>>(`salesInvoice?salesOrderId-eq=${id}`)).body.result).toHaveLength(0);
    await sim.patchEntity('salesOrder', id, { shipped: true });
    expect((await get<SalesOrder>(`salesOrder/id/${id}`)).body).toMatchObject({ shipped: true, invoiced: true });
    const invoices = (await get<ErpListResponse<SalesInvoice>>(`salesInvoice?salesOrderId-eq=${id}`)).body.result;
    expect(invoices).toHaveLength(1);
    expect(invoices[0]).toMatchObject({ grossAmount: '126.00', status: 'OPEN_ITEM_CREATED' });
    expect(invoices[0]).not.toHaveProperty('taxAmount');
    expect((await send('POST', 'salesOrder', { customerId: 'nobody', orderItems: [] })).status).toBe(400);
  });

  it('creates quotations', async () => {
    const q = await send<Quotation>('POST', 'quotation', {
      customerNumber: CUSTOMER_NUMBERS.retailerNorway,
      quotationItems: [{ articleNumber: ARTICLE_NUMBERS.bsf8, quantity: '10' }],
    });
    expect(q.status).toBe(201);
    expect(q.body).toMatchObject({ status: 'OPEN', netAmount: '1672.30' });
    expect((await get<Quotation>(`quotation/id/${q.body.id}`)).body.quotationNumber).toBe(q.body.quotationNumber);
  });

  it('filters sales invoices by local invoice date', async () => {
    const march = (
      await get<ErpListResponse<SalesInvoice>>(`salesInvoice?invoiceDate-ge=${localMidnightMs('2025-03-01')}&invoiceDate-lt=${localMidnightMs('2025-04-01')}`)
    ).body.result;
    expect(march.map((i) => i.invoiceNumber)).toEqual(['RE-2025-0004', 'RE-2025-0005']);
    expect(localMidnightMs('2025-03-01')).toBe(Date.UTC(2025, 1, 28, 23));
    expect(localMidnightMs('2025-07-01')).toBe(Date.UTC(2025, 5, 30, 22));
  });
});

describe('control API', () => {
  it('fails the next N requests with a status, then recovers', async () => {
    await ctl('POST', '/__control/fail', { status: 503, count: 2 });
    expect((await get('article/count')).status).toBe(503);
    expect((await get('article/count')).status).toBe(503);
    expect((await get('article/count')).status).toBe(200);
    const log = (await ctl<SimRequestsAnswer>('GET', '/__control/requests')).requests.map((r) => r.status);
    expect(log.slice(-3)).toEqual([503, 503, 200]);
  });

  it('narrows faults by method and path', async () => {
    await ctl('POST', '/__control/fail', { status: 500, method: 'POST', path: '/salesOrder' });
    expect((await get('salesOrder')).status).toBe(200);
    expect(
      (await send('POST', 'salesOrder', { customerNumber: CUSTOMER_NUMBERS.webshop, orderItems: [{ articleNumber: 'BSF8', quantity: '1' }] })).status,
    ).toBe(500);
    expect(sim.data().salesOrder.size).toBe(0);
  });

  it('drops the connection after acting with resetAfterProcessing', async () => {
    await ctl('POST', '/__control/fail', { mode: 'resetAfterProcessing', method: 'POST' });
    await expect(
      send('POST', 'salesOrder', { customerNumber: CUSTOMER_NUMBERS.webshop, orderItems: [{ articleNumber: 'BSF8', quantity: '1' }] }),
    ).rejects.toThrow();
    expect(sim.data().salesOrder.size).toBe(1);
  });

  it('delays answers', async () => {
    await ctl('POST', '/__control/delay', { ms: 300 });
    const started = Date.now();
    expect((await get('article/count')).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('goes down (connection reset) and comes back up; can close the listener for a while', async () => {
    await ctl('POST', '/__control/down');
    await expect(get('article/count')).rejects.toThrow();
    await ctl('POST', '/__control/up');
    expect((await get('article/count')).status).toBe(200);
    await ctl('POST', '/__control/down', { mode: 'close', ms: 300 });
    await new Promise((r) => setTimeout(r, 100));
    const refused = await fetch(`${base}/article/count`, { headers: auth }).catch((e: { cause?: { code?: string } }) => e.cause?.code);
    expect(refused).toBe('ECONNREFUSED');
    await new Promise((r) => setTimeout(r, 400));
    expect((await get('article/count')).status).toBe(200);
  });

  it('delivers webhooks on demand and on changes to subscribers', async () => {
    const rx = await receiver();
    try {
      const d = await ctl<ErpWebhookDelivery>('POST', '/__control/webhook', { url: rx.url, entityName: 'salesOrder', entityId: '42', type: 'update' });
      expect(d).toMatchObject({ status: 200, error: null });
      expect(rx.bodies).toEqual([{ entityId: '42', entityName: 'salesOrder', type: 'update' }]);

      await ctl('POST', '/__control/subscribe', { url: rx.url });
      const patched = await ctl<ErpPatchAnswer<Article>>('PATCH', `/__control/article/${ARTICLE_NUMBERS.bsf8}`, {
        attributes: { shopUserGroup: 'internal' },
        name: 'BSF8 (new)',
      });
      expect(patched.entity).toMatchObject({ name: 'BSF8 (new)', version: '1' });
      expect(patched.deliveries).toHaveLength(1);
      expect(rx.bodies[1]).toEqual({ entityId: patched.entity.id, entityName: 'article', type: 'update' });

      // Writes through the API notify too.
      await send('POST', 'salesOrder', { customerNumber: CUSTOMER_NUMBERS.webshop, orderItems: [{ articleNumber: 'BSF8', quantity: '1' }] });
      await sim.idle();
      expect(rx.bodies[2]).toMatchObject({ entityName: 'salesOrder', type: 'create' });
      const state = await ctl<ErpSimulatorState>('GET', '/__control/state');
      expect(state.tenants.main.subscriptions).toEqual([rx.url]);
      expect(state.deliveries).toHaveLength(3);
      expect((await fetch(`${control}/__control/article/NOPE`, { method: 'PATCH', body: '{}' })).status).toBe(404);
    } finally {
      await rx.close();
    }
  });
});
