/**
 * The books balance (docs/weclapp.md "Amounts", "Load management and exactly one sales order"):
 * 1. What the hand-off sends, priced with weclapp's arithmetic, is the shop order to the cent (net and gross)
 *    for plain, set, percent-discount, fixed-discount, free-shipping and foreign-VAT orders; the old shape
 *    (undiscounted prices, no shipping, no tax) does not balance (negative control).
 * 2. End to end: paid shop orders reach the ERP simulator as sales orders whose `netAmount`/`grossAmount` are the
 *    order's totals, with the currency set, all requests within weclapp's contract.
 * The queue and the periodic check of sales orders are in `erp-queue.test.ts`.
 */
import request from 'supertest';
import { documentAmount } from '@sports-timing/erp-simulator/src/amounts';
import { toErpSalesOrder, discountPercentageFor } from '../src/orders/flow/erp-sales-order';
import { allocateProportionally, percentOf } from '../src/money/money';
import type { StoredOrder, StoredOrderItem } from '../src/orders/order.types';
import { computeTotals } from '../src/orders/placement/totals';
import { orderBody } from './support/orders';
import { startOrderFlowStack, until, WEBHOOK_PATH, type OrderFlowStack } from './support/order-flow-stack';

const TAXES = new Map([
  [19, 't19'],
  [7, 't7'],
  [0, 't0'],
]);
const TAX_VALUE: Record<string, string> = { t19: '19', t7: '7', t0: '0' };

interface Line {
  article: string;
  quantity: number;
  unitCents: number;
  vat: number;
  /** Index of the main line of a sub item. */
  parent?: number;
}

/** A stored order as the shop computes it (`computeTotals`), with discounts per line as the codes spread them. */
function orderOf(lines: Line[], discount: { percent?: number; fixedCents?: number }, shippingNetCents: number, countryCode = 'DE'): StoredOrder {
  const nets = lines.map((l) => l.quantity * l.unitCents);
  const discounts =
    discount.percent !== undefined
      ? nets.map((n) => percentOf(n, discount.percent!))
      : discount.fixedCents !== undefined
        ? allocateProportionally(discount.fixedCents, nets)
        : nets.map(() => 0);
  const totals = computeTotals(
    lines.map((l, i) => ({ netAmountCents: nets[i], discountNetCents: discounts[i], vatRatePercent: l.vat })),
    shippingNetCents,
  );
  const items: StoredOrderItem[] = lines.map((l, i) => ({
    id: i + 1,
    parentItemId: l.parent !== undefined ? l.parent + 1 : null,
    lineNo: i + 1,
    position: i,
    articleNumber: l.article,
    articleName: l.article,
    quantity: l.quantity,
    configuration: { cardNumber: String(8000000 + i), note: '<b>&</b>' },
    articleBomItemOid: l.parent !== undefined ? i : 0,
    unitNetPriceCents: l.unitCents,
    netAmountCents: nets[i],
    discountNetCents: discounts[i],
    vatRatePercent: l.vat,
    vatCents: totals.lineVatCents[i],
    cardType: null,
    cardNumber: null,
  }));
  const address = {
    firstName: 'Ada',
    lastName: 'Runner',
    address1: 'Weg 1',
    zip: '8000',
    city: 'Town',
    countryCode,
  } as StoredOrder['shippingAddress'];
  return {
    id: 1,
    orderNumber: 'ORD-T',
    source: 'shop',
    state: 'paid',
    currency: 'EUR',
    shippingAddress: address,
    billingAddress: null,
    retailerCustomerOrderReference: null,
    items,
    ...totals,
  } as unknown as StoredOrder;
}

/** net and gross of what the hand-off sends, priced as weclapp prices it. */
function weclappTotals(order: StoredOrder, strip = false): { netCents: number; grossCents: number } {
  const draft = toErpSalesOrder(order, {
    customerId: 'c',
    articleIds: new Map(order.items.map((it) => [it.articleNumber, `a-${it.articleNumber}`])),
    currencyId: 'eur',
    taxIdByRate: TAXES,
    shippingArticleId: 'ship',
  });
  const positions = [...draft.order.orderItems, ...draft.subItems.map((s) => s.item)].map((it) => ({
    quantity: it.quantity,
    unitPrice: it.unitPrice!,
    // The old shape: no discount, and weclapp's own tax (19 %) for every position.
    discountPercentage: strip ? undefined : it.discountPercentage,
    taxValue: strip ? '19' : TAX_VALUE[it.taxId!],
  }));
  const shipping = strip ? [] : (draft.order.shippingCostItems ?? []).map((s) => ({ unitPrice: s.unitPrice, taxValue: TAX_VALUE[s.taxId] }));
  return documentAmount(positions, shipping);
}

const CASES: [string, StoredOrder][] = [
  [
    'plain',
    orderOf(
      [
        { article: 'SIAC1', quantity: 1, unitCents: 5294, vat: 19 },
        { article: 'BSF8', quantity: 3, unitCents: 16723, vat: 19 },
      ],
      {},
      590,
    ),
  ],
  [
    'set',
    orderOf(
      [
        { article: 'SIAC-STARTER', quantity: 1, unitCents: 5294, vat: 19 },
        { article: 'SIAC1', quantity: 1, unitCents: 0, vat: 19, parent: 0 },
        { article: 'CARD-HOLDER', quantity: 1, unitCents: 210, vat: 19, parent: 0 },
      ],
      {},
      590,
    ),
  ],
  [
    'percent discount',
    orderOf(
      [
        { article: 'SIAC1', quantity: 3, unitCents: 5295, vat: 19 },
        { article: 'SI-CARD10', quantity: 7, unitCents: 3353, vat: 19 },
        { article: 'CARD-HOLDER', quantity: 1, unitCents: 5, vat: 19 },
      ],
      { percent: 12.5 },
      1290,
      'AT',
    ),
  ],
  [
    'fixed discount',
    orderOf(
      [
        { article: 'SIAC1', quantity: 1, unitCents: 5294, vat: 19 },
        { article: 'BSF8', quantity: 2, unitCents: 16723, vat: 19 },
        { article: 'CARD-HOLDER', quantity: 3, unitCents: 210, vat: 19 },
      ],
      { fixedCents: 1000 },
      590,
    ),
  ],
  ['free shipping', orderOf([{ article: 'SIAC1', quantity: 2, unitCents: 5294, vat: 19 }], { percent: 10 }, 0)],
  [
    'foreign VAT (export to CH, 19 % and 7 %)',
    orderOf(
      [
        { article: 'SIAC1', quantity: 1, unitCents: 5294, vat: 19 },
        { article: 'BOOK', quantity: 3, unitCents: 1999, vat: 7 },
        { article: 'FREE', quantity: 1, unitCents: 1, vat: 0 },
      ],
      { percent: 33 },
      2490,
      'CH',
    ),
  ],
];

describe('what the hand-off sends balances with the shop order, priced with weclapp arithmetic', () => {
  test.each(CASES)('%s', (_name, order) => {
    expect(weclappTotals(order)).toEqual({ netCents: order.netTotalCents, grossCents: order.grossTotalCents });
  });

  test('negative control: undiscounted positions without shipping and taxes do not balance', () => {
    for (const [name, order] of CASES) {
      const old = weclappTotals(order, true);
      expect({
        name,
        balances: old.netCents === order.netTotalCents && old.grossCents === order.grossTotalCents,
      }).toEqual({ name, balances: false });
    }
  });

  test('a discount percentage reproduces the shop cents wherever weclapp rounds, also against its own rounding of the plain percentage', () => {
    // 0.5 cent cases: 10 % of 5 cents is 0.5 → the shop deducts 1 (half away from zero), weclapp's 90 % of 5 is 4.5 → 5.
    expect(discountPercentageFor(5, 1)).toBe('20');
    for (let net = 1; net <= 3000; net += 7) {
      for (const d of [0, 1, Math.floor(net / 3), net - 1, net]) {
        if (d < 0 || d > net) continue;
        const p = discountPercentageFor(net, d);
        const back =
          p === null ? net : documentAmount([{ quantity: '1', unitPrice: (net / 100).toFixed(2), discountPercentage: p, taxValue: '0' }], []).netCents;
        expect(back).toBe(net - d);
      }
    }
  });
});

describe('end to end against the ERP simulator', () => {
  let stack: OrderFlowStack;
  beforeAll(async () => {
    stack = await startOrderFlowStack('erp-books-test');
    await stack.control('subscribe', { url: `${stack.url}${WEBHOOK_PATH}`, format: 'json' });
    const db = stack.ctx.database.db;
    for (const [name, kind, percent, amount] of [
      ['Percent', 'percent', '12.50', null],
      ['Fixed', 'fixedAmount', null, 1000],
    ] as const) {
      const c = await db
        .insertInto('discount_campaigns')
        .values({
          name,
          description: null,
          kind,
          percent,
          amount_cents: amount,
          currency: 'EUR',
          valid_from: null,
          valid_to: null,
          max_redemptions_per_code: 100,
          created_by: null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await db.insertInto('discount_codes').values({ campaign_id: c.id, code: name.toUpperCase(), max_redemptions: 100 }).execute();
    }
  });
  afterAll(() => stack.close());

  let card = 8400000;
  async function placeAndPay(overrides: Parameters<typeof orderBody>[0]): Promise<number> {
    const res = await request(stack.url).post('/api/grpc-json/v1/shop/orders').send(orderBody(overrides));
    expect(res.status).toBe(200);
    const id = (res.body as { oid: number }).oid;
    const row = await stack.ctx.database.db.selectFrom('orders').select('paylink_id').where('id', '=', id).executeTakeFirstOrThrow();
    await stack.control('pay', { invoiceId: row.paylink_id });
    return id;
  }

  test('plain, set, percent, fixed and export orders: the sales order books the order total, net and gross', async () => {
    const siac = () => ({ articleNumber: 'SIAC1', quantity: 1, configuration: { cardNumber: String(card++) } });
    const ids = [
      await placeAndPay({ orderItems: [siac(), { articleNumber: 'BSF8', quantity: 3 }] }),
      await placeAndPay({
        orderItems: [
          {
            articleNumber: 'SIAC-STARTER',
            quantity: 1,
            subitems: [
              {
                articleNumber: 'SIAC1',
                quantity: 1,
                articleBomItemOid: 1,
                configuration: { cardNumber: String(card++) },
              },
            ],
          },
        ],
      }),
      await placeAndPay({
        orderItems: [siac(), { articleNumber: 'SI-CARD10', quantity: 7 }],
        discountCodes: ['PERCENT'],
      }),
      await placeAndPay({ orderItems: [siac(), { articleNumber: 'BSF8', quantity: 2 }], discountCodes: ['FIXED'] }),
      await placeAndPay({
        orderItems: [siac()],
        shippingAddress: {
          firstName: 'Anna',
          lastName: 'Muster',
          address1: 'Bahnhofstrasse 1',
          zip: '8001',
          city: 'Zürich',
          countryCode: 'CH',
          phoneNumber: '+41441234567',
        },
      }),
    ];
    const db = stack.ctx.database.db;
    await until(
      'all transferred',
      async () => (await db.selectFrom('orders').select('state').where('id', 'in', ids).execute()).every((r) => r.state === 'transferred'),
      30_000,
    );
    const eur = [...stack.erp!.data().currency.values()].find((c) => c.name === 'EUR')!.id;
    for (const id of ids) {
      const o = await db
        .selectFrom('orders')
        .select(['order_number', 'net_total_cents', 'gross_total_cents', 'discount_cents', 'shipping_net_cents', 'erp_sales_order_id'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      const so = stack.erp!.data().salesOrder.get(o.erp_sales_order_id!)!;
      expect({
        order: o.order_number,
        net: so.netAmount,
        gross: so.grossAmount,
        currency: so.recordCurrencyId,
      }).toEqual({
        order: o.order_number,
        net: (Number(o.net_total_cents) / 100).toFixed(2),
        gross: (Number(o.gross_total_cents) / 100).toFixed(2),
        currency: eur,
      });
      expect(so.shippingCostItems).toHaveLength(1);
    }
    // The discounts were really there, and the export was taxed as the shop taxed it.
    const rows = await db.selectFrom('orders').select(['discount_cents', 'vat_cents']).where('id', 'in', ids).orderBy('id').execute();
    expect(rows.map((r) => Number(r.discount_cents) > 0)).toEqual([false, false, true, true, false]);
    expect(Number(rows[4].vat_cents)).toBeGreaterThan(0);
    expect(stack.erp!.contractViolations).toEqual([]);
  });
});
