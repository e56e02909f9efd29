/**
 * How the simulator prices a sales order, standing in for weclapp's own arithmetic (docs/weclapp.md "Amounts";
 * what is and is not verified against a real tenant is written there):
 * - a position's net amount is `quantity × unitPrice × (1 − discountPercentage/100)`, then, when the document
 *   has a `headerDiscount`, `× (1 − headerDiscount/100)`; each step rounded half away from zero to the cent;
 * - a position's gross amount is its net amount plus the tax of its `taxId` (`taxValue` percent of the net,
 *   rounded to the cent): weclapp answers `grossAmount` per position;
 * - a shipping cost position is `unitPrice` net plus the tax of its `taxId` likewise;
 * - the document's `netAmount` and `grossAmount` are the sums over positions and shipping cost positions.
 * Decimal strings (≤ 5 decimals, weclapp's pattern) are computed exactly (BigInt), never in floating point.
 */

/** 10^5: weclapp's decimals have at most five places. */
const SCALE = 100_000n;

/** A decimal string (`"12.5"`, `"-3.14159"`) as an integer of 1/100 000 units. */
function scaled(decimal: string): bigint {
  const m = /^(-?)(\d+)(?:\.(\d{1,5}))?$/.exec(decimal.trim());
  if (!m) throw new RangeError(`not a decimal with at most 5 places: ${decimal}`);
  const v = BigInt(m[2]) * SCALE + BigInt((m[3] ?? '').padEnd(5, '0'));
  return m[1] ? -v : v;
}

/** `num / den` rounded half away from zero (den > 0). */
function roundDiv(num: bigint, den: bigint): bigint {
  const q = (2n * (num < 0n ? -num : num) + den) / (2n * den);
  return num < 0n ? -q : q;
}

/** One position as weclapp prices it. */
export interface PricedPosition {
  quantity: string;
  /** Net euros per unit (decimal string). */
  unitPrice: string;
  /** Percent off (decimal string); absent = none. */
  discountPercentage?: string;
  /** The tax rate of the position's tax, percent (decimal string). */
  taxValue: string;
}

/** One shipping cost position: net `unitPrice` euros and its tax rate in percent. */
export interface PricedShipping {
  unitPrice: string;
  taxValue: string;
}

/** Net and gross in cents. */
export interface CentsAmount {
  netCents: number;
  grossCents: number;
}

/** Net and gross of one position, cents (see the module comment). */
export function positionAmount(p: PricedPosition, headerDiscount?: string): CentsAmount {
  // quantity × price × (100 − discount) / 100, in cents: scales 10^5 · 10^5 · 10^5, /100 for percent, ×100 for cents.
  const factor = SCALE * 100n - scaled(p.discountPercentage ?? '0');
  let net = roundDiv(scaled(p.quantity) * scaled(p.unitPrice) * factor, SCALE * SCALE * SCALE);
  if (headerDiscount !== undefined) net = roundDiv(net * (SCALE * 100n - scaled(headerDiscount)), SCALE * 100n);
  const tax = roundDiv(net * scaled(p.taxValue), SCALE * 100n);
  return { netCents: Number(net), grossCents: Number(net + tax) };
}

/** Net and gross of one shipping cost position, cents. */
export function shippingAmount(s: PricedShipping): CentsAmount {
  const net = roundDiv(scaled(s.unitPrice) * 100n, SCALE);
  const tax = roundDiv(net * scaled(s.taxValue), SCALE * 100n);
  return { netCents: Number(net), grossCents: Number(net + tax) };
}

/** A document's `netAmount` and `grossAmount` in cents: the sums over its positions and shipping cost positions. @internal */
export function documentAmount(positions: readonly PricedPosition[], shipping: readonly PricedShipping[], headerDiscount?: string): CentsAmount {
  const all = [...positions.map((p) => positionAmount(p, headerDiscount)), ...shipping.map(shippingAmount)];
  return { netCents: all.reduce((s, a) => s + a.netCents, 0), grossCents: all.reduce((s, a) => s + a.grossCents, 0) };
}
