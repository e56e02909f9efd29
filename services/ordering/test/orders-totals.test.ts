/**
 * Money arithmetic of orders (spec conventions: integer cents, half away from zero, per line) and the
 * discount evaluation rules, as pure functions: mixed VAT rates, exact allocation, large amounts.
 */
import { evaluateDiscountCodes, type DiscountCodeTerms } from '../src/discounts/discount-rules';
import { allocateProportionally, divRoundHalfAwayFromZero, percentOf } from '../src/money/money';
import { computeTotals } from '../src/orders/placement/totals';

test('rounding is half away from zero', () => {
  expect(divRoundHalfAwayFromZero(5n, 2n)).toBe(3n);
  expect(divRoundHalfAwayFromZero(-5n, 2n)).toBe(-3n);
  expect(divRoundHalfAwayFromZero(4n, 3n)).toBe(1n);
  expect(percentOf(250, 19)).toBe(48); // 47.5 → 48
  expect(percentOf(1050, 8.1)).toBe(85); // 85.05 → 85
  // Exact beyond 2^53: 10^13 cents × 19.99 %.
  expect(percentOf(10_000_000_000_000, 19.99)).toBe(1_999_000_000_000);
});

test('proportional allocation sums exactly and never exceeds a weight', () => {
  const parts = allocateProportionally(100, [1, 1, 1]);
  expect(parts).toEqual([34, 33, 33]);
  const weights = [333, 667, 0, 1];
  for (const total of [0, 1, 7, 500, 1001]) {
    const p = allocateProportionally(total, weights);
    expect(p.reduce((a, b) => a + b, 0)).toBe(total);
    p.forEach((x, i) => expect(x).toBeLessThanOrEqual(weights[i]));
  }
});

test('VAT per line after discounts, shipping at the highest rate, breakdown per rate', () => {
  const totals = computeTotals(
    [
      { netAmountCents: 10_000, discountNetCents: 1_000, vatRatePercent: 19 },
      { netAmountCents: 2_999, discountNetCents: 300, vatRatePercent: 7 },
      { netAmountCents: 1, discountNetCents: 0, vatRatePercent: 7 },
    ],
    590,
  );
  // 9000 × 19 % = 1710; 2699 × 7 % = 188.93 → 189; 1 × 7 % = 0.07 → 0; shipping 590 × 19 % = 112.1 → 112.
  expect(totals.lineVatCents).toEqual([1710, 189, 0]);
  expect(totals.vatBreakdown).toEqual([
    { vatRatePercent: 7, netCents: 2700, vatCents: 189 },
    { vatRatePercent: 19, netCents: 9590, vatCents: 1822 },
  ]);
  expect(totals).toMatchObject({
    itemsNetCents: 13_000,
    discountCents: 1_300,
    shippingNetCents: 590,
    netTotalCents: 12_290,
    vatCents: 2_011,
    grossTotalCents: 14_301,
  });
});

test('discounts spread over the applicable lines and stack on what is left', () => {
  const terms = (id: number, over: Partial<DiscountCodeTerms>): DiscountCodeTerms => ({
    codeId: id,
    code: `C${id}`,
    redemptions: 0,
    maxRedemptions: 1,
    campaignId: id,
    campaignName: `K${id}`,
    kind: 'percent',
    percent: 10,
    amountCents: null,
    currency: 'EUR',
    validFrom: null,
    validTo: null,
    minimumOrderNetCents: 0,
    restrictedArticleNumbers: [],
    ...over,
  });
  const known = new Map([
    ['C1', terms(1, { kind: 'fixedAmount', percent: null, amountCents: 1_000 })],
    ['C2', terms(2, { percent: 50, restrictedArticleNumbers: ['B'] })],
    ['C3', terms(3, { currency: 'CHF' })],
  ]);
  const lines = [
    { articleNumber: 'A', netAmountCents: 3_000 },
    { articleNumber: 'B', netAmountCents: 1_000 },
  ];
  const r = evaluateDiscountCodes(['c1', 'C2', 'C3'], known, lines, 'EUR', new Date());
  // 10.00 over 30.00 : 10.00 → 7.50 / 2.50; then 50 % of B's remaining 7.50 = 3.75.
  expect(r.results.map((x) => [x.isValid, x.reason, x.netAmountCents])).toEqual([
    [true, null, 1_000],
    [true, null, 375],
    [false, 'currencyMismatch', 0],
  ]);
  expect(r.lineDiscounts).toEqual([750, 625]);
  expect(r.totalDiscountNetCents).toBe(1_375);
});
