/**
 * The weclapp sales order of a stored order, so that what weclapp books is what the customer paid, to the cent
 * (docs/weclapp.md "Sales orders" and "Amounts"):
 * - positions at the shop's net unit price (`manualUnitPrice`), each line's share of the discount codes as the
 *   position's `discountPercentage` (chosen so that weclapp's rounding gives back the shop's discounted net
 *   amount exactly; a fixed-amount code is already spread over the lines by the shop, so it is percentages too);
 * - every position and the shipping cost position carry the `taxId` of the shop's VAT rate, so that weclapp
 *   does not determine a tax of its own (e.g. zero for an export the shop charged VAT on);
 * - shipping as a shipping cost position (the shipping article, net price, tax of the order's highest rate, as
 *   the shop taxes it); none when the order has no shipping costs;
 * - the currency by id (`recordCurrencyId`), else weclapp takes the customer's default currency.
 */
import type { ErpSalesOrderDraft } from '../../erp/erp.client';
import type { ErpRecordAddress, NewErpRecordItem } from '../../erp/erp.types';
import { PermanentJobError } from '../../outbox/outbox.service';
import type { OrderAddress, StoredOrder } from '../order.types';

/** The ERP ids a sales order refers to, looked up by the caller (cached by the ERP client). */
export interface ErpOrderRefs {
  /** The ERP customer (the retailer, or the web-shop customer). */
  customerId: string;
  /** ERP article id by article number. */
  articleIds: ReadonlyMap<string, string>;
  /** `/currency` id of the order's currency. */
  currencyId: string;
  /** `/tax` id (sales VAT) by VAT rate in percent. */
  taxIdByRate: ReadonlyMap<number, string>;
  /** ERP article id of the shipping cost position. */
  shippingArticleId: string;
}

/** weclapp's limit of a position's `description` (HTML), characters. */
const DESCRIPTION_MAX = 255;

/** Euros as the ERP's decimal string, from integer cents. */
function euros(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** `num / den` rounded half away from zero (den > 0). */
function roundDiv(num: number, den: number): number {
  return Math.sign(num) * Math.floor((2 * Math.abs(num) + den) / (2 * den));
}

/** 10^5: weclapp's decimals have at most five places. */
const SCALE = 100_000;

/**
 * The `discountPercentage` (decimal string, ≤ 5 places) that makes weclapp's position arithmetic
 * (`round(net × (1 − p/100))`, docs/weclapp.md "Amounts") give exactly `netCents − discountCents`; null when
 * there is no discount. Throws a `RangeError` when no such percentage exists (a line beyond about €100 000,
 * where five decimals no longer reach every cent).
 * @internal
 */
export function discountPercentageFor(netCents: number, discountCents: number): string | null {
  if (discountCents === 0) return null;
  if (netCents <= 0 || discountCents < 0 || discountCents > netCents) throw new RangeError(`discount ${discountCents} of a line of ${netCents} cents`);
  const target = netCents - discountCents;
  const guess = Math.round((discountCents * 100 * SCALE) / netCents);
  for (const p of [guess, guess - 1, guess + 1]) {
    if (p < 0 || p > 100 * SCALE) continue;
    if (roundDiv(netCents * (100 * SCALE - p), 100 * SCALE) === target) {
      const whole = Math.floor(p / SCALE);
      const frac = String(p % SCALE)
        .padStart(5, '0')
        .replace(/0+$/, '');
      return frac ? `${whole}.${frac}` : String(whole);
    }
  }
  throw new RangeError(`no discount percentage with 5 decimals turns ${netCents} into ${target} cents`);
}

/** Text as HTML (weclapp's `description` is HTML): the markup characters escaped. */
function html(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The configuration of a position as its description, HTML, one line per key, cut to weclapp's 255 characters. */
function descriptionOf(configuration: Record<string, string>): string | undefined {
  const lines = Object.entries(configuration).map(([k, v]) => html(`${k}: ${v}`));
  if (lines.length === 0) return undefined;
  let text = lines.join('<br>');
  // Cut at a line boundary where possible, never inside an entity; the order in the shop keeps the whole configuration.
  if (text.length > DESCRIPTION_MAX) {
    text = text.slice(0, DESCRIPTION_MAX - 1);
    const amp = text.lastIndexOf('&');
    if (amp > text.lastIndexOf(';')) text = text.slice(0, amp);
    text += '…';
  }
  return text;
}

function erpAddress(a: OrderAddress, phoneFallback: string | null = null): ErpRecordAddress {
  const out: ErpRecordAddress = {
    company: a.organisation ?? undefined,
    firstName: a.firstName ?? undefined,
    lastName: a.lastName ?? undefined,
    street1: a.address1 ?? undefined,
    street2: a.address2 ?? undefined,
    zipcode: a.zip ?? undefined,
    city: a.city ?? undefined,
    state: a.state ?? undefined,
    countryCode: a.countryCode ?? undefined,
    phoneNumber: a.phoneNumber ?? phoneFallback ?? undefined,
  };
  // weclapp has no empty properties: an unset field is left out, never sent as null or "".
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined && v !== ''));
}

/** The VAT rates an order's ERP sales order needs a tax for: every line's, and the shipping rate (the highest). */
export function vatRatesOf(order: StoredOrder): number[] {
  return [...new Set(order.items.map((it) => it.vatRatePercent))];
}

/**
 * The ERP sales order of `order` (see the module comment). An article without an ERP id, a VAT rate without a
 * tax, or a discount weclapp cannot express are `PermanentJobError`s (the order cannot be booked as it is).
 */
export function toErpSalesOrder(order: StoredOrder, refs: ErpOrderRefs): ErpSalesOrderDraft {
  const taxOf = (rate: number) => {
    const id = refs.taxIdByRate.get(rate);
    if (!id) throw new PermanentJobError(`the ERP has no sales tax of ${rate} %`);
    return id;
  };
  const positionOf = new Map<number, number>();
  const shippingRate = order.items.reduce((max, it) => Math.max(max, it.vatRatePercent), 0);
  const draft: ErpSalesOrderDraft = {
    order: {
      customerId: refs.customerId,
      recordCurrencyId: refs.currencyId,
      orderItems: [],
      deliveryAddress: erpAddress(order.shippingAddress),
      invoiceAddress: erpAddress(order.billingAddress ?? order.shippingAddress),
      commission: order.orderNumber,
      ...(order.retailerCustomerOrderReference ? { orderNumberAtCustomer: order.retailerCustomerOrderReference } : {}),
      ...(order.shippingNetCents > 0
        ? {
            shippingCostItems: [
              {
                articleId: refs.shippingArticleId,
                unitPrice: euros(order.shippingNetCents),
                manualUnitPrice: true,
                taxId: taxOf(shippingRate),
              },
            ],
          }
        : {}),
    },
    subItems: [],
  };
  order.items.forEach((it, i) => {
    const articleId = refs.articleIds.get(it.articleNumber);
    if (!articleId) throw new PermanentJobError(`article ${it.articleNumber} has no ERP id`);
    positionOf.set(it.id, i + 1);
    let discountPercentage: string | null;
    try {
      discountPercentage = discountPercentageFor(it.netAmountCents, it.discountNetCents);
    } catch (err) {
      throw new PermanentJobError(`position ${i + 1}: ${(err as Error).message}`);
    }
    const description = descriptionOf(it.configuration);
    const item: Omit<NewErpRecordItem, 'parentItemId'> = {
      articleId,
      positionNumber: i + 1,
      quantity: String(it.quantity),
      unitPrice: euros(it.unitNetPriceCents),
      manualUnitPrice: true,
      taxId: taxOf(it.vatRatePercent),
      ...(discountPercentage !== null ? { discountPercentage } : {}),
      title: it.articleName,
      ...(description !== undefined ? { description } : {}),
    };
    const parent = it.parentItemId !== null ? positionOf.get(it.parentItemId) : undefined;
    if (parent !== undefined) draft.subItems.push({ parentPositionNumber: parent, item });
    else draft.order.orderItems.push(item);
  });
  return draft;
}
