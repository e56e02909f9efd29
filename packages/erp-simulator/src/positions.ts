/**
 * What the ERP simulator checks and computes for a document's positions, as weclapp does (docs/weclapp.md):
 * custom attribute values, the customer, order and shipping cost items (article, quantity, price, discount,
 * tax determined by delivery country), the sums (`amounts.ts`) and the simple field checks. Refusals are
 * {@link SimHttpError}s (400).
 */
import { EU_COUNTRIES } from '@sports-timing/shared/src/eu-countries';
import { SimHttpError } from '@sports-timing/shared/src/sim-server';
import { positionAmount, shippingAmount } from './amounts';
import { VAT_RATE_PERCENT, toEuros } from './seed';
import type { Tenant } from './tenant';
import type { CustomAttributeValue, Customer, RecordAddress, RecordItem, ShippingCostItem } from './types';

/** VAT percent by an article's `taxRateType`, for positions that name no `taxId`. */
const RATE_OF_TYPE: Record<string, string> = { STANDARD: '19', REDUCED: '7', ZERO: '0' };

export function checkCustomAttributes(t: Tenant, value: unknown, entityName: string): CustomAttributeValue[] {
  if (!Array.isArray(value)) throw new SimHttpError(400, 'customAttributes must be an array');
  return value.map((v, i) => {
    const a = v as CustomAttributeValue;
    const def = a && typeof a === 'object' ? t.data.customAttributeDefinition.get(String(a.attributeDefinitionId)) : undefined;
    if (!def) throw new SimHttpError(400, `customAttributes[${i}]: unknown attributeDefinitionId`);
    if (def.attributeType === 'BOOLEAN' && typeof a.booleanValue !== 'boolean') throw new SimHttpError(400, `customAttributes[${i}]: booleanValue required`);
    if (!(def.entities ?? []).includes(entityName)) throw new SimHttpError(400, `customAttributes[${i}]: ${def.attributeKey} does not apply to ${entityName}`);
    if (def.attributeType === 'LIST' && !(def.selectableValues ?? []).some((s) => s.id === a.selectedValueId))
      throw new SimHttpError(400, `customAttributes[${i}]: selectedValueId is not a value of ${def.attributeKey}`);
    if ((def.attributeType === 'STRING' || def.attributeType === 'LARGE_TEXT') && typeof a.stringValue !== 'string')
      throw new SimHttpError(400, `customAttributes[${i}]: stringValue required`);
    return a;
  });
}

export function customerOf(t: Tenant, body: Record<string, unknown>): Customer {
  const customer =
    typeof body.customerId === 'string'
      ? t.data.customer.get(body.customerId)
      : typeof body.customerNumber === 'string'
        ? [...t.data.customer.values()].find((c) => c.customerNumber === body.customerNumber)
        : undefined;
  if (!customer) throw new SimHttpError(400, 'customerId or customerNumber of an existing customer is required');
  if (customer.customerBlocked) throw new SimHttpError(400, `customer ${customer.customerNumber} is blocked`);
  return customer;
}

/**
 * Validates new positions; amounts net euros. `unitPrice` is kept only with `manualUnitPrice: true`, else the
 * article's EUR price applies. `parentItemId` must name one of `existing` (items already on the document).
 */
export function items(t: Tenant, raw: unknown, field: string, existing: RecordItem[] = [], deliveryCountry?: string): RecordItem[] {
  if (!Array.isArray(raw)) throw new SimHttpError(400, `${field} must be an array`);
  const items: RecordItem[] = [];
  raw.forEach((r: unknown, i) => {
    const it = (r ?? {}) as Record<string, unknown>;
    if (typeof it.id === 'string') {
      const kept = existing.find((x) => x.id === it.id);
      if (!kept) throw new SimHttpError(400, `${field}[${i}].id ${it.id} is not an item of this document`);
      items.push(kept);
      return;
    }
    if ('parentPositionNumber' in it || 'paid' in it) throw new SimHttpError(400, `${field}[${i}]: unknown property`);
    const article =
      typeof it.articleId === 'string'
        ? t.data.article.get(it.articleId)
        : typeof it.articleNumber === 'string'
          ? [...t.data.article.values()].find((a) => a.articleNumber === it.articleNumber)
          : undefined;
    if (!article) throw new SimHttpError(400, `${field}[${i}]: articleId of an existing article is required`);
    const quantity = Number(it.quantity);
    if (!Number.isFinite(quantity) || quantity <= 0) throw new SimHttpError(400, `${field}[${i}].quantity must be a positive number`);
    const listPrice = article.articlePrices?.find((p) => p.currencyName === 'EUR')?.price ?? '0';
    const manual = it.manualUnitPrice === true && it.unitPrice !== undefined;
    const price = manual ? String(it.unitPrice) : listPrice;
    if (!/^-?\d+(\.\d{1,5})?$/.test(price)) throw new SimHttpError(400, `${field}[${i}].unitPrice must be a decimal`);
    const discountPercentage = it.discountPercentage === undefined ? undefined : checkDecimal(it.discountPercentage, `${field}[${i}].discountPercentage`);
    if (discountPercentage !== undefined && Number(discountPercentage) > 100)
      throw new SimHttpError(400, `${field}[${i}].discountPercentage must be at most 100`);
    const taxId = it.taxId === undefined ? determineTax(t, article.taxRateType, deliveryCountry) : checkTax(t, it.taxId, `${field}[${i}].taxId`);
    let parentItemId: string | undefined;
    if (it.parentItemId !== undefined) {
      parentItemId = typeof it.parentItemId === 'string' ? it.parentItemId : JSON.stringify(it.parentItemId);
      if (!existing.some((x) => x.id === parentItemId && x.parentItemId === undefined))
        throw new SimHttpError(400, `${field}[${i}].parentItemId must name a main item of this document`);
    }
    items.push({
      id: t.nextId(),
      positionNumber: typeof it.positionNumber === 'number' ? it.positionNumber : existing.length + items.length + 1,
      articleId: article.id,
      articleNumber: article.articleNumber,
      title: typeof it.title === 'string' ? it.title : article.name,
      ...(typeof it.description === 'string' ? { description: it.description } : {}),
      quantity: String(quantity),
      unitPrice: price,
      manualUnitPrice: manual,
      ...(discountPercentage !== undefined ? { discountPercentage } : {}),
      taxId,
      ...(parentItemId ? { parentItemId } : {}),
    });
  });
  return items;
}

/**
 * Prices a document's positions and shipping cost positions as weclapp does (`amounts.ts`): sets each one's
 * `netAmount`/`grossAmount` and answers the document's sums.
 */
export function totals(
  t: Tenant,
  items: RecordItem[] = [],
  shipping: ShippingCostItem[] = [],
  headerDiscount?: string,
): { netAmount: string; grossAmount: string } {
  const rate = (taxId: string | undefined) => (taxId ? (t.data.tax.get(taxId)?.taxValue ?? '0') : String(VAT_RATE_PERCENT));
  let net = 0;
  let gross = 0;
  for (const it of items) {
    const a = positionAmount(
      { quantity: it.quantity ?? '0', unitPrice: it.unitPrice ?? '0', discountPercentage: it.discountPercentage, taxValue: rate(it.taxId) },
      headerDiscount,
    );
    it.netAmount = toEuros(a.netCents);
    it.grossAmount = toEuros(a.grossCents);
    net += a.netCents;
    gross += a.grossCents;
  }
  for (const sc of shipping) {
    const a = shippingAmount({ unitPrice: sc.unitPrice ?? '0', taxValue: rate(sc.taxId) });
    Object.assign(sc, {
      netAmount: toEuros(a.netCents),
      grossAmount: toEuros(a.grossCents),
      netAmountInCompanyCurrency: toEuros(a.netCents),
      grossAmountInCompanyCurrency: toEuros(a.grossCents),
      unitPriceInCompanyCurrency: sc.unitPrice ?? '0',
    });
    net += a.netCents;
    gross += a.grossCents;
  }
  return { netAmount: toEuros(net), grossAmount: toEuros(gross) };
}

/** A decimal string with at most 5 places (weclapp's pattern), else 400. */
export function checkDecimal(value: unknown, field: string): string {
  if (typeof value !== 'string' || !/^\d{1,13}(\.\d{1,5})?$/.test(value)) throw new SimHttpError(400, `${field} must be a decimal string`);
  return value;
}

function checkTax(t: Tenant, value: unknown, field: string): string {
  if (typeof value !== 'string' || !t.data.tax.has(value)) throw new SimHttpError(400, `${field}: unknown tax`);
  return value;
}

export function checkCurrency(t: Tenant, value: unknown): string {
  if (typeof value !== 'string' || !t.data.currency.has(value)) throw new SimHttpError(400, 'recordCurrencyId: unknown currency');
  return value;
}

/**
 * The tax weclapp picks for a position without `taxId` (its tax rules, simplified): the article's rate type
 * for deliveries into the EU (or without a delivery country), the zero-rate tax for exports.
 */
function determineTax(t: Tenant, taxRateType: string | undefined, deliveryCountry: string | undefined): string {
  const value = deliveryCountry && !EU_COUNTRIES.has(deliveryCountry) ? '0' : (RATE_OF_TYPE[taxRateType ?? 'STANDARD'] ?? '19');
  return [...t.data.tax.values()].find((x) => x.taxType === 'VALUE_ADDED_TAX' && Number(x.taxValue) === Number(value))!.id;
}

/** Validates shipping cost positions (article, net `unitPrice`, `taxId` required). */
export function checkShippingCostItems(t: Tenant, raw: unknown): ShippingCostItem[] {
  if (!Array.isArray(raw)) throw new SimHttpError(400, 'shippingCostItems must be an array');
  return raw.map((r: unknown, i) => {
    const it = (r ?? {}) as Record<string, unknown>;
    const article = typeof it.articleId === 'string' ? t.data.article.get(it.articleId) : undefined;
    if (!article) throw new SimHttpError(400, `shippingCostItems[${i}]: articleId of an existing article is required`);
    const unitPrice = checkDecimal(it.unitPrice, `shippingCostItems[${i}].unitPrice`);
    const taxId = checkTax(t, it.taxId, `shippingCostItems[${i}].taxId`);
    return { id: t.nextId(), articleId: article.id, unitPrice, manualUnitPrice: it.manualUnitPrice === true, taxId, netAmount: '0.00', grossAmount: '0.00' };
  });
}

export function address(raw: unknown, field: string): RecordAddress | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new SimHttpError(400, `${field} must be an object`);
  return raw;
}
