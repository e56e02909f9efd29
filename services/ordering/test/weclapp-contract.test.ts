/**
 * Contract tests of the weclapp integration (docs/weclapp.md "Contract"): every request the ErpClient sends
 * and every answer the ERP simulator gives is held to weclapp's own OpenAPI v1 description (vendored in
 * `packages/shared/contracts/`) by the simulator's contract check: unknown, read-only and deprecated request
 * properties fail, what a creation needs must be there, answers carry weclapp's always-present properties and
 * nothing weclapp does not have. Negative controls bend a request and an answer and show both are caught.
 */
import { ARTICLE_NUMBERS, CUSTOMER_NUMBERS, DEFAULT_TOKENS, createErpSimulator, type ErpSimulator } from '@sports-timing/erp-simulator';
import { loadWeclappContract } from '@sports-timing/shared/src/weclapp-contract';
import { ErpClient } from '../src/erp/erp.client';

let sim: ErpSimulator;

beforeAll(async () => {
  sim = await createErpSimulator().start();
});
afterAll(async () => {
  await sim.stop();
});
beforeEach(() => sim.reset());

const client = () =>
  new ErpClient({
    baseUrls: { weclapp: sim.baseUrl('main'), weclappSandbox: sim.baseUrl('sandbox') },
    tokenProvider: async (system) => (system === 'weclapp' ? DEFAULT_TOKENS.main : DEFAULT_TOKENS.sandbox),
    timeoutMs: 2_000,
    retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
  });

/** Sends a raw JSON request to the main tenant, as a client that departs from the contract would. */
async function raw(method: string, path: string, body: unknown): Promise<number> {
  const res = await fetch(`${sim.baseUrl()}/${path}`, {
    method,
    headers: { AuthenticationToken: DEFAULT_TOKENS.main, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.status;
}

test('every request the client sends and every answer the simulator gives conform to weclapp’s contract', async () => {
  const erp = client();
  expect((await erp.ping('weclapp')).isReachable).toBe(true);
  await erp.listCustomAttributeDefinitions('weclapp');
  const articles = await erp.listArticles('weclapp');
  await erp.listArticles('weclapp', { modifiedAfter: 0, articleNumbers: [ARTICLE_NUMBERS.siac, ARTICLE_NUMBERS.bsf8] });
  const set = (await erp.findArticleByNumber('weclapp', ARTICLE_NUMBERS.trainingSet))!;
  expect(await erp.articleTranslations('weclapp', set.id)).toEqual(expect.arrayContaining([expect.objectContaining({ propertyName: 'name' })]));
  const updated = await erp.updateArticle('weclapp', set.id, { name: `${set.name} (2027)` }, set.version);
  await erp.getArticle('weclapp', updated.id);
  await erp.getArticle('weclapp', '999999');
  const retailers = await erp.listCustomers('weclapp', { retailersOnly: true });
  await erp.getCustomer('weclapp', retailers[0].id);
  const webshop = await erp.customerIdByNumber('weclapp', CUSTOMER_NUMBERS.webshop);

  // A set with a sub item: main items first, the sub item added under its main item's id.
  const byNumber = new Map(articles.map((a) => [a.articleNumber, a.id]));
  const draft = {
    order: {
      customerId: webshop,
      orderItems: [
        {
          articleId: byNumber.get(ARTICLE_NUMBERS.siacStarter)!,
          positionNumber: 1,
          quantity: '1',
          unitPrice: '52.94',
          manualUnitPrice: true,
          title: 'SIAC starter set',
        },
      ],
      deliveryAddress: { firstName: 'Ada', lastName: 'Runner', street1: 'Weg 1', zipcode: '10115', city: 'Berlin', countryCode: 'DE' },
      commission: 'SO-2026-000001',
    },
    subItems: [
      {
        parentPositionNumber: 1,
        item: {
          articleId: byNumber.get(ARTICLE_NUMBERS.siac)!,
          positionNumber: 2,
          quantity: '1',
          unitPrice: '0.00',
          manualUnitPrice: true,
          title: 'SIAC',
          description: 'cardNumber: 8000001',
        },
      },
    ],
  };
  const { salesOrder } = await erp.createSalesOrder('weclapp', draft, 'SO-2026-000001');
  expect(salesOrder.orderItems).toHaveLength(2);
  expect(salesOrder.orderItems![1]).toMatchObject({ parentItemId: salesOrder.orderItems![0].id, unitPrice: '0.00', manualUnitPrice: true });
  expect(salesOrder.orderItems![0]).toMatchObject({ unitPrice: '52.94', manualUnitPrice: true });
  // Found by its reference again: no second order, no second set of sub items.
  const again = await erp.createSalesOrder('weclapp', draft, 'SO-2026-000001');
  expect(again).toMatchObject({ created: false, salesOrder: { id: salesOrder.id } });
  expect(again.salesOrder.orderItems).toHaveLength(2);
  await erp.findSalesOrderByReference('weclapp', 'SO-2026-000001');
  const printed = await erp.updateSalesOrder('weclapp', salesOrder.id, { status: 'ORDER_CONFIRMATION_PRINTED' }, again.salesOrder.version);
  await sim.patchEntity('salesOrder', printed.id, { shipped: true });
  expect(await erp.getSalesOrder('weclapp', printed.id)).toMatchObject({ shipped: true, invoiced: true });
  const { quotation } = await erp.createQuotation(
    'weclapp',
    { customerId: retailers[0].id, quotationItems: [{ articleId: byNumber.get(ARTICLE_NUMBERS.bsf8)!, quantity: '10' }], commission: 'Center subscription' },
    'CQ-1',
  );
  await erp.getQuotation('weclapp', quotation.id);
  const now = new Date();
  await erp.listSalesInvoices('weclapp', now.getUTCFullYear(), now.getUTCMonth() + 1);
  await erp.listSalesInvoices('weclapp', 2025, 3);

  const calls = sim.server.requests.filter((r) => r.path.includes('/webapp/api/v1/'));
  expect(calls.length).toBeGreaterThanOrEqual(20);
  expect(sim.contractViolations).toEqual([]);
});

test('negative control: a request bent away from the contract is caught', async () => {
  const customerId = await client().customerIdByNumber('weclapp', CUSTOMER_NUMBERS.webshop);
  // The shape the client sent before it followed weclapp's description.
  await raw('POST', 'salesOrder', {
    customerNumber: CUSTOMER_NUMBERS.webshop,
    paid: true,
    recordCurrencyName: 'EUR',
    orderItems: [{ articleNumber: 'SIAC1', quantity: '1', parentPositionNumber: 1 }],
  });
  await raw('POST', 'salesOrder', { customerId, orderItems: [{ quantity: '1' }] });
  expect(sim.contractViolations.filter((v) => v.side === 'request')).toEqual([
    {
      side: 'request',
      method: 'POST',
      path: '/salesOrder',
      errors: expect.arrayContaining([
        '/: missing customerId',
        '/customerNumber: deprecated property',
        '/paid: readOnly property',
        '/recordCurrencyName: deprecated property',
        '/orderItems/0: unknown property parentPositionNumber',
        '/orderItems/0/articleNumber: deprecated property',
        '/orderItems/0: missing articleId',
      ]),
    },
    { side: 'request', method: 'POST', path: '/salesOrder', errors: ['/orderItems/0: missing articleId'] },
  ]);
});

test('negative control: an answer bent away from the contract is caught', async () => {
  const erp = client();
  const customerId = await erp.customerIdByNumber('weclapp', CUSTOMER_NUMBERS.webshop);
  const articleId = (await erp.findArticleByNumber('weclapp', ARTICLE_NUMBERS.siac))!.id;
  const { salesOrder } = await erp.createSalesOrder('weclapp', { order: { customerId, orderItems: [{ articleId, quantity: '1' }] }, subItems: [] }, 'SO-BENT');
  expect(sim.contractViolations).toEqual([]);
  // The simulator's old habits: a SHIPPED status, a tax amount, a null where weclapp leaves the property out.
  Object.assign(sim.data().salesOrder.get(salesOrder.id)!, { status: 'SHIPPED', taxAmount: '0.19', commission: null });
  const article = sim.data().article.get(articleId)!;
  Object.assign((article.salesBillOfMaterialItems ??= []), [{ id: '1', positionNumber: 1, articleId, quantity: '1', locked: true }]);
  await erp.getSalesOrder('weclapp', salesOrder.id).catch(() => undefined);
  await erp.getArticle('weclapp', articleId);
  const answers = sim.contractViolations.filter((v) => v.side === 'answer');
  expect(answers).toEqual([
    {
      side: 'answer',
      method: 'GET',
      path: '/salesOrder/id/{id}',
      errors: expect.arrayContaining(['/: unknown property taxAmount', '/status: must be equal to one of the allowed values']),
    },
    { side: 'answer', method: 'GET', path: '/article/id/{id}', errors: ['/salesBillOfMaterialItems/0: unknown property locked'] },
  ]);
});

test('the contract module itself: weclapp’s read-only flags, required flags and closed objects', () => {
  const contract = loadWeclappContract();
  expect(contract.requestErrors('PUT', '/salesOrder/id/1', { id: '1', version: '3', status: 'CLOSED' })).toEqual([]);
  expect(contract.requestErrors('PUT', '/salesOrder/id/1', { version: '3', shipped: true })).toEqual(['/shipped: readOnly property']);
  expect(contract.requestErrors('GET', '/nowhere', undefined)).toBeNull();
  expect(
    contract.entityErrors('salesInvoice', {
      id: '1',
      version: '0',
      createdDate: 1,
      lastModifiedDate: 1,
      invoiceNumber: 'RE-1',
      invoiceDate: 1,
      status: 'BOOKED',
    }),
  ).toEqual(expect.arrayContaining(['/: missing paymentStatus', '/status: must be equal to one of the allowed values']));
});

test('the deprecated /customer view of the same parties conforms too', async () => {
  const res = await fetch(`${sim.baseUrl()}/customer?pageSize=100`, { headers: { AuthenticationToken: DEFAULT_TOKENS.main } });
  const { result } = (await res.json()) as { result: { id: string; blocked: boolean }[] };
  expect(result.length).toBeGreaterThan(3);
  expect(result.every((c) => c.blocked === false)).toBe(true);
  await (await fetch(`${sim.baseUrl()}/customer/id/${result[0].id}`, { headers: { AuthenticationToken: DEFAULT_TOKENS.main } })).arrayBuffer();
  expect(sim.contractViolations).toEqual([]);
});
