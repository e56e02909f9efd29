/**
 * Totals of an order (ordering spec conventions and `createShopOrder` "VAT and totals"): VAT per order
 * line on its net amount after its share of the discounts, rounded half away from zero to whole cents;
 * shipping taxed at the highest VAT rate of the order; a breakdown per VAT rate. Integer cents throughout.
 */
import { percentOf } from '../../money/money';
import type { VatAmount } from '../order.types';

/** What the totals are computed from: per line its net amount, discount share and VAT rate. */
export interface TotalsLine {
  netAmountCents: number;
  discountNetCents: number;
  vatRatePercent: number;
}

/** The totals of an order, in cents. */
export interface OrderTotals {
  itemsNetCents: number;
  discountCents: number;
  shippingNetCents: number;
  /** itemsNet − discount + shipping. */
  netTotalCents: number;
  /** Σ line VAT + shipping VAT. */
  vatCents: number;
  /** netTotal + vat. */
  grossTotalCents: number;
  /** Per line (input order): VAT on `netAmountCents − discountNetCents`. */
  lineVatCents: number[];
  /** Per rate, ascending. */
  vatBreakdown: VatAmount[];
}

/** Computes the totals of `lines` plus `shippingNetCents` of shipping. */
export function computeTotals(lines: readonly TotalsLine[], shippingNetCents: number): OrderTotals {
  const byRate = new Map<number, VatAmount>();
  const addToRate = (rate: number, net: number, vat: number) => {
    const entry = byRate.get(rate) ?? { vatRatePercent: rate, netCents: 0, vatCents: 0 };
    entry.netCents += net;
    entry.vatCents += vat;
    byRate.set(rate, entry);
  };
  const lineVatCents = lines.map((l) => {
    const taxable = l.netAmountCents - l.discountNetCents;
    const vat = percentOf(taxable, l.vatRatePercent);
    addToRate(l.vatRatePercent, taxable, vat);
    return vat;
  });
  if (shippingNetCents > 0) {
    const rate = lines.reduce((max, l) => Math.max(max, l.vatRatePercent), 0);
    addToRate(rate, shippingNetCents, percentOf(shippingNetCents, rate));
  }
  const itemsNetCents = lines.reduce((s, l) => s + l.netAmountCents, 0);
  const discountCents = lines.reduce((s, l) => s + l.discountNetCents, 0);
  const vatBreakdown = [...byRate.values()].sort((a, b) => a.vatRatePercent - b.vatRatePercent);
  const vatCents = vatBreakdown.reduce((s, v) => s + v.vatCents, 0);
  const netTotalCents = itemsNetCents - discountCents + shippingNetCents;
  return { itemsNetCents, discountCents, shippingNetCents, netTotalCents, vatCents, grossTotalCents: netTotalCents + vatCents, lineVatCents, vatBreakdown };
}
