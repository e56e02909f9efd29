/**
 * ErpClient against the ERP simulator over real HTTP: typed reads and writes of both tenants, paging,
 * the Europe/Berlin month of invoices, optimistic versions, and the failure discipline (retries on 5xx and
 * timeouts only, idempotent creation by reference, errors without the token).
 */
import { ARTICLE_NUMBERS, CUSTOMER_NUMBERS, DEFAULT_TOKENS, SEED_ARTICLES, createErpSimulator, type ErpSimulator } from '@sports-timing/erp-simulator';
import { zonedMidnightMs } from '@sports-timing/shared';
import { ErpClient, ErpError, customAttributeValue, createErpClient } from '../src/erp/erp.client';
import { ERP_ATTRIBUTE_KEYS, type ErpSystem } from '../src/erp/erp.types';

let sim: ErpSimulator;
const tokens: Record<ErpSystem, string> = { weclapp: DEFAULT_TOKENS.main, weclappSandbox: DEFAULT_TOKENS.sandbox };
const FAST = { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 40 };

function client(opts: { timeoutMs?: number; pageSize?: number; token?: string } = {}): ErpClient {
  return new ErpClient({
    baseUrls: { weclapp: sim.baseUrl('main'), weclappSandbox: sim.baseUrl('sandbox') },
    tokenProvider: async (system) => opts.token ?? tokens[system],
    timeoutMs: opts.timeoutMs ?? 2_000,
    pageSize: opts.pageSize,
    retry: FAST,
  });
}
/** The simulator's id of an article (straight from its store: no API request is logged). */
const articleId = async (articleNumber: string) => [...sim.data().article.values()].find((a) => a.articleNumber === articleNumber)!.id;
/** A one-item order of the German retailer, as `createSalesOrder` takes it. */
const retailerOrder = async () => ({
  order: {
    customerId: [...sim.data().customer.values()].find((c) => c.customerNumber === CUSTOMER_NUMBERS.retailerGermany)!.id,
    orderItems: [{ articleId: await articleId('BSF8'), quantity: '1' }],
  },
  subItems: [],
});
const apiRequests = () => sim.server.requests.filter((r) => r.path.includes('/webapp/api/v1/'));

beforeAll(async () => {
  sim = await createErpSimulator().start();
});
afterAll(() => sim.stop());
beforeEach(() => {
  sim.reset();
  sim.server.requests.length = 0;
});

describe('reads and writes', () => {
  it('lists every article over several pages, and finds one by id or number', async () => {
    const erp = client({ pageSize: 4 });
    const articles = await erp.listArticles('weclapp');
    expect(articles.map((a) => a.articleNumber)).toEqual(SEED_ARTICLES.map((a) => a.articleNumber));
    expect(apiRequests().filter((r) => r.path.endsWith('/article'))).toHaveLength(Math.ceil((SEED_ARTICLES.length + 1) / 4));
    const siac = await erp.findArticleByNumber('weclapp', ARTICLE_NUMBERS.siac);
    expect(siac).toMatchObject({ articleNumber: 'SIAC1', articlePrices: [{ price: '50.34', currencyName: 'EUR' }] });
    expect((await erp.getArticle('weclapp', siac!.id))!.id).toBe(siac!.id);
    expect(await erp.getArticle('weclapp', '999999')).toBeNull();
    expect(await erp.findArticleByNumber('weclapp', 'NOPE')).toBeNull();
    expect((await erp.listArticles('weclapp', { articleNumbers: [ARTICLE_NUMBERS.bsf8, ARTICLE_NUMBERS.bs11] })).map((a) => a.articleNumber)).toEqual([
      'BSF8',
      'BS11-BL',
    ]);
    expect(await erp.listArticles('weclapp', { modifiedAfter: Date.now() + 60_000 })).toEqual([]);
  });

  it('reads custom attributes through their definitions', async () => {
    const erp = client();
    const defs = await erp.listCustomAttributeDefinitions('weclapp');
    expect(defs.map((d) => d.attributeKey)).toEqual(expect.arrayContaining(Object.values(ERP_ATTRIBUTE_KEYS)));
    const group = await erp.attributeDefinition('weclapp', ERP_ATTRIBUTE_KEYS.shopUserGroup);
    const shop = await erp.attributeDefinition('weclapp', ERP_ATTRIBUTE_KEYS.shopArticle);
    const pack = await erp.findArticleByNumber('weclapp', ARTICLE_NUMBERS.bsf8RetailerPack);
    expect(customAttributeValue(pack!.customAttributes, group)).toBe('retailer');
    expect(customAttributeValue(pack!.customAttributes, shop)).toBe(true);
    const spare = await erp.findArticleByNumber('weclapp', ARTICLE_NUMBERS.spareBoard);
    expect(customAttributeValue(spare!.customAttributes, shop)).toBe(false);
    await expect(erp.attributeDefinition('weclapp', 'noSuchKey')).rejects.toMatchObject({ code: 'configuration', retryable: false });
  });

  it('lists retailers as customers', async () => {
    const erp = client();
    const retailers = await erp.listCustomers('weclapp', { retailersOnly: true });
    expect(retailers.map((c) => c.customerNumber)).toEqual([
      CUSTOMER_NUMBERS.retailerGermany,
      CUSTOMER_NUMBERS.retailerSwitzerland,
      CUSTOMER_NUMBERS.retailerNorway,
    ]);
    expect(await erp.listCustomers('weclapp')).toHaveLength(4);
    expect((await erp.getCustomer('weclapp', retailers[0].id))!.company).toBe('OL-Sport Nord GmbH');
  });

  it('serves both tenants with their own base URL and token', async () => {
    const erp = client();
    const sandboxArticle = await erp.findArticleByNumber('weclappSandbox', ARTICLE_NUMBERS.bsf8);
    await erp.updateArticle('weclappSandbox', sandboxArticle!.id, { name: 'Sandbox BSF8' }, sandboxArticle!.version);
    expect((await erp.findArticleByNumber('weclappSandbox', ARTICLE_NUMBERS.bsf8))!.name).toBe('Sandbox BSF8');
    expect((await erp.findArticleByNumber('weclapp', ARTICLE_NUMBERS.bsf8))!.name).toBe('BSF8 control station');
    const fromConfig = createErpClient({ erpBaseUrlWeclapp: sim.baseUrl('main'), erpBaseUrlWeclappSandbox: sim.baseUrl('sandbox') }, async (s) => tokens[s]);
    expect(fromConfig.baseUrl('weclappSandbox')).toBe(sim.baseUrl('sandbox'));
    expect((await fromConfig.ping('weclappSandbox')).isReachable).toBe(true);
  });

  it('updates an article with its version; a stale version is a conflict', async () => {
    const erp = client();
    const a = (await erp.findArticleByNumber('weclapp', ARTICLE_NUMBERS.bsm8))!;
    const updated = await erp.updateArticle('weclapp', a.id, { name: 'BSM8 master station (USB-C)' }, a.version);
    expect(updated).toMatchObject({ name: 'BSM8 master station (USB-C)', version: String(Number(a.version) + 1) });
    const stale = await erp.updateArticle('weclapp', a.id, { name: 'lost update' }, a.version).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(ErpError);
    expect(stale).toMatchObject({ code: 'conflict', status: 409, retryable: false, entity: 'article', system: 'weclapp' });
    // A conflict is not retried: one PUT per update attempt.
    expect(apiRequests().filter((r) => r.method === 'PUT')).toHaveLength(2);
    expect((await erp.getArticle('weclapp', a.id))!.name).toBe('BSM8 master station (USB-C)');
  });

  it('creates a sales order once per reference and reads it back', async () => {
    const erp = client();
    const order = {
      order: {
        customerId: await erp.customerIdByNumber('weclapp', CUSTOMER_NUMBERS.webshop),
        orderItems: [{ articleId: await articleId(ARTICLE_NUMBERS.siCard10), quantity: '3' }],
        deliveryAddress: { firstName: 'Ada', lastName: 'Runner', street1: 'Weg 1', zipcode: '10115', city: 'Berlin', countryCode: 'DE' },
      },
      subItems: [],
    };
    const first = await erp.createSalesOrder('weclapp', order, 'ORD-2026-000001');
    expect(first.created).toBe(true);
    expect(first.salesOrder).toMatchObject({ netAmount: '100.59', grossAmount: '119.70', status: 'ORDER_ENTRY_IN_PROGRESS', paid: false });
    const again = await erp.createSalesOrder('weclapp', order, 'ORD-2026-000001');
    expect(again).toEqual({ salesOrder: first.salesOrder, created: false });
    expect(sim.data().salesOrder.size).toBe(1);
    expect((await erp.findSalesOrderByReference('weclapp', 'ORD-2026-000001'))!.id).toBe(first.salesOrder.id);
    const shipped = await erp.updateSalesOrder('weclapp', first.salesOrder.id, { status: 'ORDER_CONFIRMATION_PRINTED' }, first.salesOrder.version);
    expect(shipped.status).toBe('ORDER_CONFIRMATION_PRINTED');
    expect((await erp.getSalesOrder('weclapp', first.salesOrder.id))!.version).toBe(shipped.version);
    expect(await erp.getSalesOrder('weclapp', '424242')).toBeNull();
    const bad = await erp.createSalesOrder('weclapp', { order: { customerId: 'nobody', orderItems: [] }, subItems: [] }, 'ORD-X').catch((e: unknown) => e);
    expect(bad).toMatchObject({ code: 'badRequest', status: 400, retryable: false });
  });

  it('creates a quotation once per reference', async () => {
    const erp = client();
    const q = {
      customerId: await erp.customerIdByNumber('weclapp', CUSTOMER_NUMBERS.retailerSwitzerland),
      quotationItems: [{ articleId: await articleId(ARTICLE_NUMBERS.siac), quantity: '100' }],
    };
    const first = await erp.createQuotation('weclapp', q, 'SUB-7');
    expect(first.created).toBe(true);
    expect((await erp.createQuotation('weclapp', q, 'SUB-7')).created).toBe(false);
    expect((await erp.getQuotation('weclapp', first.quotation.id))!.quotationNumber).toBe(first.quotation.quotationNumber);
    expect(await erp.getQuotation('weclapp', '1')).toBeNull();
  });

  it('lists the sales invoices of a month in Europe/Berlin', async () => {
    const erp = client();
    expect((await erp.listSalesInvoices('weclapp', 2025, 3)).map((i) => i.invoiceNumber)).toEqual(['RE-2025-0004', 'RE-2025-0005']);
    expect((await erp.listSalesInvoices('weclapp', 2025, 2)).map((i) => i.invoiceNumber)).toEqual(['RE-2025-0002', 'RE-2025-0003']);
    expect(await erp.listSalesInvoices('weclapp', 2024, 12)).toEqual([]);
    expect(zonedMidnightMs(2025, 3, 1, 'Europe/Berlin')).toBe(Date.UTC(2025, 1, 28, 23));
    expect(zonedMidnightMs(2025, 4, 1, 'Europe/Berlin')).toBe(Date.UTC(2025, 2, 31, 22));
  });

  it('pings', async () => {
    const ok = await client().ping('weclapp');
    expect(ok).toMatchObject({ system: 'weclapp', isReachable: true, httpStatus: 200, message: `OK: ${SEED_ARTICLES.length} articles` });
    const wrong = await client({ token: 'wrong-token-123' }).ping('weclapp');
    expect(wrong).toMatchObject({ isReachable: false, httpStatus: 401 });
    expect(wrong.message).not.toContain('wrong-token-123');
  });
});

describe('failure discipline', () => {
  it('retries a read on 503 and succeeds', async () => {
    sim.server.fail({ status: 503, count: 2, path: '/article/count' });
    expect((await client().ping('weclapp')).isReachable).toBe(false);
    sim.server.clearFaults();
    sim.server.requests.length = 0;
    sim.server.fail({ status: 503, count: 2 });
    const a = await client().findArticleByNumber('weclapp', ARTICLE_NUMBERS.siac);
    expect(a!.articleNumber).toBe('SIAC1');
    expect(apiRequests().map((r) => r.status)).toEqual([503, 503, 200]);
  });

  it('gives up after the retry budget with a retryable server error', async () => {
    sim.server.fail({ status: 502, count: 10 });
    const err = await client()
      .listArticles('weclapp')
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'server', status: 502, retryable: true });
    expect(apiRequests()).toHaveLength(FAST.maxAttempts);
  });

  it('never retries a 4xx', async () => {
    sim.server.fail({ status: 400, count: 1 });
    const err = await client()
      .listCustomers('weclapp')
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'badRequest', status: 400, retryable: false, entity: 'party' });
    expect(apiRequests()).toHaveLength(1);
  });

  it('times out on a slow answer, and retries it', async () => {
    sim.server.delay({ ms: 400, count: 10 });
    const err = await client({ timeoutMs: 100 })
      .getArticle('weclapp', '1')
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'timeout', status: null, retryable: true });
    expect((err as Error).message).toMatch(/no answer within 100 ms after 3 attempt/);
    sim.server.clearFaults();
    sim.server.delay({ ms: 400, count: 1 });
    expect(await client({ timeoutMs: 150 }).listCustomAttributeDefinitions('weclapp')).toHaveLength(11);
  });

  it('reports a wrong token clearly, without the token', async () => {
    const secret = 'tok_6f1c2d9e8a7b4c3d';
    const err = await client({ token: secret })
      .listArticles('weclapp')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ErpError);
    expect(err).toMatchObject({ code: 'unauthorized', status: 401, retryable: false });
    expect((err as Error).message).toMatch(/^ERP weclapp: GET article answered 401/);
    expect(JSON.stringify({ ...(err as object), message: (err as Error).message, stack: (err as Error).stack })).not.toContain(secret);
    const missing = await new ErpClient({
      baseUrls: { weclapp: sim.baseUrl(), weclappSandbox: sim.baseUrl('sandbox') },
      tokenProvider: () => Promise.reject(new Error(`vault down ${secret}`)),
    })
      .listArticles('weclapp')
      .catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: 'configuration', retryable: false });
    expect((missing as Error).message).not.toContain(secret);
  });

  /** A create guard as the hand-off keeps it in the database: one claim per `settleMs`, given back on a definite refusal. */
  function memoryGuard(settleMs: number) {
    let claimedAt: number | null = null;
    return {
      claim: () => {
        if (claimedAt !== null && Date.now() - claimedAt < settleMs) return Promise.resolve(false);
        claimedAt = Date.now();
        return Promise.resolve(true);
      },
      release: () => {
        claimedAt = null;
        return Promise.resolve();
      },
    };
  }

  it('after a 503 on the sales order POST it does not POST again until the settle time passed, then creates it once', async () => {
    sim.server.fail({ status: 503, count: 1, method: 'POST' });
    const guard = memoryGuard(300);
    const first = await client()
      .createSalesOrder('weclapp', await retailerOrder(), 'ORD-503', guard)
      .catch((e: unknown) => e);
    expect(first).toMatchObject({ code: 'server', status: 503, retryable: true });
    // The 503 may have come after weclapp carried the POST out: within the settle time only lookups.
    expect(
      await client()
        .createSalesOrder('weclapp', await retailerOrder(), 'ORD-503', guard)
        .catch((e: unknown) => e),
    ).toMatchObject({ code: 'createPending', retryable: true });
    await new Promise((r) => setTimeout(r, 350));
    const r = await client().createSalesOrder('weclapp', await retailerOrder(), 'ORD-503', guard);
    expect(r.created).toBe(true);
    expect(sim.data().salesOrder.size).toBe(1);
    expect(
      apiRequests()
        .filter((x) => x.method === 'POST')
        .map((x) => x.status),
    ).toEqual([503, 201]);
  });

  it('finds a sales order whose POST was carried out but whose answer was lost, instead of creating a second', async () => {
    sim.server.fail({ mode: 'resetAfterProcessing', method: 'POST' });
    const guard = memoryGuard(60_000);
    expect(
      await client()
        .createSalesOrder('weclapp', await retailerOrder(), 'ORD-LOST', guard)
        .catch((e: unknown) => e),
    ).toMatchObject({ code: 'network', retryable: true });
    const r = await client().createSalesOrder('weclapp', await retailerOrder(), 'ORD-LOST', guard);
    expect(r.created).toBe(false);
    expect(sim.data().salesOrder.size).toBe(1);
    expect(apiRequests().filter((x) => x.method === 'POST')).toHaveLength(1);
    expect((await client().findSalesOrderByReference('weclapp', 'ORD-LOST'))!.id).toBe(r.salesOrder.id);
  });

  it('waits out a 429 (Retry-After) on reads; a 429 on the POST gives the claim back at once (weclapp did not carry it out)', async () => {
    sim.server.fail({ status: 429, count: 1, method: 'GET', path: '/article', retryAfter: 1 });
    const started = Date.now();
    expect((await client().listArticles('weclapp')).length).toBeGreaterThan(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    sim.server.fail({ status: 429, count: 1, method: 'POST' });
    const guard = memoryGuard(60_000);
    expect(
      await client()
        .createSalesOrder('weclapp', await retailerOrder(), 'ORD-429', guard)
        .catch((e: unknown) => e),
    ).toMatchObject({ code: 'rateLimited', status: 429, retryable: true });
    expect((await client().createSalesOrder('weclapp', await retailerOrder(), 'ORD-429', guard)).created).toBe(true);
    expect(sim.data().salesOrder.size).toBe(1);
  });

  it('reports an unreachable ERP as a retryable network error', async () => {
    await sim.server.down('close');
    try {
      const err = await client()
        .getSalesOrder('weclapp', '1')
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'network', status: null, retryable: true });
      expect((err as Error).message).toContain('ECONNREFUSED');
      expect((await client().ping('weclapp')).isReachable).toBe(false);
    } finally {
      await sim.server.up();
    }
  });
});
