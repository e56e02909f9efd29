/**
 * The ERP simulator's API answers and writes (the routes of `simulator.ts`'s module comment): reads of the
 * entity collections, the version-checked update, the creation of sales orders and quotations, and booking a
 * shipment with its sales invoice. Refusals are {@link SimHttpError}s.
 */
import { SimHttpError, jsonObject, type SimRequest, type SimResponse } from '@sports-timing/shared/src/sim-server';
import { checkCurrency, checkCustomAttributes, checkDecimal, customerOf, items, checkShippingCostItems, totals, address } from './positions';
import { applyFilters, pageOf, parseListQuery } from './query';
import { TENANT_TIME_ZONE, localMidnightMs } from './seed';
import type { Tenant } from './tenant';
import {
  SALES_ORDER_STATUSES,
  type EntityName,
  type Quotation,
  type RecordAddress,
  type RecordItem,
  type SalesInvoice,
  type SalesOrder,
  type ShippingCostItem,
} from './types';
import { toCustomerView, toWire } from './wire';

/** Properties a client may write with PUT, per entity. */
const WRITABLE: Partial<Record<EntityName, readonly string[]>> = {
  article: [
    'articleNumber',
    'name',
    'description',
    'active',
    'articleType',
    'unitName',
    'taxRateType',
    'articlePrices',
    'customAttributes',
    'salesBillOfMaterialItems',
    'translations',
  ],
  salesOrder: [
    'status',
    'deliveryAddress',
    'invoiceAddress',
    'commission',
    'orderNumberAtCustomer',
    'customAttributes',
    'orderItems',
    'shippingCostItems',
    'recordCurrencyId',
    'headerDiscount',
  ],
  customer: ['company', 'email', 'phone', 'website', 'addresses', 'customAttributes', 'customerBlocked'],
};

/** Read-only properties: ignored when written through the API (as weclapp does); `shipped` and `invoiced` are set by the ERP's own processes (the control API's `shipped` stands for booking a shipment). */
const READ_ONLY = new Set(['id', 'version', 'createdDate', 'lastModifiedDate', 'shipped', 'invoiced', 'paid', 'netAmount', 'grossAmount']);

/** Answers an API request of tenant `t`; `parts` is the path below `/webapp/api/v1`. */
export function route(t: Tenant, req: SimRequest, parts: string[]): SimResponse {
  const [requested, second, id, ...rest] = parts;
  // Parties in their customer role live in the `customer` collection: `/party` answers them as parties,
  // the deprecated `/customer` in its older shape.
  const entity = requested === 'party' ? 'customer' : requested;
  const wire = (n: EntityName, e: object) => (n === 'customer' && requested === 'customer' ? toCustomerView(e) : toWire(n, e));
  if (entity === 'propertyTranslation' && second === 'readPropertyTranslations' && id === undefined && req.method === 'GET') return translations(t, req.query);
  const readable: EntityName[] = ['article', 'customer', 'salesOrder', 'quotation', 'salesInvoice', 'customAttributeDefinition', 'currency', 'tax'];
  if (!readable.includes(entity as EntityName) || rest.length > 0) throw new SimHttpError(404, `unknown endpoint ${parts.join('/')}`);
  const name = entity as EntityName;
  const collection = t.data[name] as Map<string, { id: string }>;
  if (second === undefined) {
    if (req.method === 'GET') {
      const q = parseListQuery(req.query);
      return { status: 200, json: { result: pageOf(applyFilters(collection.values(), q), q).map((e) => wire(name, e)) } };
    }
    if (req.method === 'POST' && name === 'salesOrder') return createSalesOrder(t, jsonObject(req.body));
    if (req.method === 'POST' && name === 'quotation') return createQuotation(t, jsonObject(req.body));
    throw new SimHttpError(405, `${req.method} not allowed on ${name}`);
  }
  if (second === 'count' && id === undefined) {
    if (req.method !== 'GET') throw new SimHttpError(405, `${req.method} not allowed`);
    return { status: 200, json: { result: applyFilters(collection.values(), parseListQuery(req.query)).length } };
  }
  if (second === 'id' && id !== undefined) {
    const found = collection.get(id);
    if (req.method === 'GET') {
      if (!found) throw new SimHttpError(404, `${name} with id ${id} not found`);
      return { status: 200, json: wire(name, found) };
    }
    if (req.method === 'PUT' && WRITABLE[name]) {
      if (!found) throw new SimHttpError(404, `${name} with id ${id} not found`);
      return { status: 200, json: wire(name, update(t, name, id, jsonObject(req.body), { checkVersion: true, notify: true })) };
    }
    throw new SimHttpError(405, `${req.method} not allowed on ${name}/id`);
  }
  throw new SimHttpError(404, `unknown endpoint ${parts.join('/')}`);
}

/** weclapp's property translations of an article: `name` and `description` per locale (optionally one locale). */
function translations(t: Tenant, query: URLSearchParams): SimResponse {
  const entityName = query.get('entityName');
  const entityId = query.get('entityId');
  if (!entityName || !entityId) throw new SimHttpError(400, 'entityName and entityId are required');
  if (entityName !== 'article') return { status: 200, json: { result: [] } };
  const article = t.data.article.get(entityId);
  if (!article) throw new SimHttpError(404, `article with id ${entityId} not found`);
  const locale = query.get('locale');
  const texts = (article.translations ?? []).filter((x) => !locale || x.locale === locale);
  const result = (['name', 'description'] as const).map((propertyName) => ({
    propertyName,
    values: texts.filter((x) => x[propertyName]).map((x) => ({ locale: x.locale, text: x[propertyName] })),
  }));
  return { status: 200, json: { result } };
}

export function update(t: Tenant, name: EntityName, id: string, body: Record<string, unknown>, opts: { checkVersion: boolean; notify: boolean }): object {
  const collection = t.data[name] as unknown as Map<string, Record<string, unknown> & { id: string; version: string }>;
  const current = collection.get(id)!;
  const sentVersion = body.version === undefined ? undefined : JSON.stringify(body.version).replace(/^"|"$/g, '');
  if (opts.checkVersion && sentVersion !== undefined && sentVersion !== current.version) {
    throw new SimHttpError(409, `optimistic lock error: ${name} ${id} has version ${current.version}, the request sent ${sentVersion}`);
  }
  const writable = WRITABLE[name] ?? [];
  const next: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(body)) {
    if (READ_ONLY.has(key)) continue;
    if (!writable.includes(key)) throw new SimHttpError(400, `property ${key} of ${name} cannot be written`);
    const old = current[key];
    if (old !== null && old !== undefined && value !== null && (Array.isArray(old) ? !Array.isArray(value) : typeof old !== typeof value)) {
      throw new SimHttpError(400, `property ${key}: invalid value`);
    }
    next[key] = value;
  }
  if (body.customAttributes !== undefined) next.customAttributes = checkCustomAttributes(t, body.customAttributes, name);
  if (name === 'salesOrder') {
    const country = (next.deliveryAddress as RecordAddress | undefined)?.countryCode;
    if (body.orderItems !== undefined)
      next.orderItems = items(t, body.orderItems, 'orderItems', (current.orderItems as RecordItem[] | undefined) ?? [], country);
    if (body.shippingCostItems !== undefined) next.shippingCostItems = checkShippingCostItems(t, body.shippingCostItems);
    if (body.recordCurrencyId !== undefined) checkCurrency(t, body.recordCurrencyId);
    if (body.headerDiscount !== undefined) checkDecimal(body.headerDiscount, 'headerDiscount');
    Object.assign(
      next,
      totals(t, next.orderItems as RecordItem[], next.shippingCostItems as ShippingCostItem[] | undefined, next.headerDiscount as string | undefined),
    );
  }
  if (name === 'article' && next.articleNumber !== current.articleNumber && [...collection.values()].some((a) => a.articleNumber === next.articleNumber)) {
    throw new SimHttpError(400, `articleNumber ${String(next.articleNumber)} already exists`);
  }
  if (name === 'salesOrder' && !SALES_ORDER_STATUSES.includes(next.status as SalesOrder['status']))
    throw new SimHttpError(400, `status must be one of ${SALES_ORDER_STATUSES.join(', ')}`);
  next.version = String(Number(current.version) + 1);
  next.lastModifiedDate = Math.max(Date.now(), Number(current.lastModifiedDate) + 1);
  collection.set(id, next as typeof current);
  if (opts.notify) t.notify(name, id, 'update');
  return next;
}

/** Marks sales order `id` shipped (and invoiced, with its sales invoice) once; returns it. */
export function ship(t: Tenant, id: string): SalesOrder {
  const order = t.data.salesOrder.get(id)!;
  if (order.shipped) return order;
  const next: SalesOrder = {
    ...order,
    shipped: true,
    invoiced: true,
    version: String(Number(order.version) + 1),
    lastModifiedDate: Math.max(Date.now(), order.lastModifiedDate + 1),
  };
  t.data.salesOrder.set(id, next);
  invoiceSalesOrder(t, next);
  return next;
}

function createSalesOrder(t: Tenant, body: Record<string, unknown>): SimResponse {
  const customer = customerOf(t, body);
  if ('paid' in body) throw new SimHttpError(400, 'paid is read-only');
  // weclapp's limits (its description's maxLength): a longer value is refused with 400.
  if (typeof body.orderNumberAtCustomer === 'string' && body.orderNumberAtCustomer.length > 64)
    throw new SimHttpError(400, 'orderNumberAtCustomer: at most 64 characters');
  const deliveryAddress = address(body.deliveryAddress, 'deliveryAddress');
  const orderItems = items(t, body.orderItems ?? [], 'orderItems', [], deliveryAddress?.countryCode);
  const shippingCostItems = body.shippingCostItems === undefined ? undefined : checkShippingCostItems(t, body.shippingCostItems);
  const recordCurrencyId = body.recordCurrencyId === undefined ? undefined : checkCurrency(t, body.recordCurrencyId);
  const headerDiscount = body.headerDiscount === undefined ? undefined : checkDecimal(body.headerDiscount, 'headerDiscount');
  const status = body.status ?? 'ORDER_ENTRY_IN_PROGRESS';
  if (!SALES_ORDER_STATUSES.includes(status as SalesOrder['status'])) throw new SimHttpError(400, `status must be one of ${SALES_ORDER_STATUSES.join(', ')}`);
  const now = Date.now();
  const order: SalesOrder = {
    id: t.nextId(),
    version: '0',
    orderNumber: String(++t.orderSeq),
    customerId: customer.id,
    status: status as SalesOrder['status'],
    orderDate: typeof body.orderDate === 'number' ? body.orderDate : now,
    ...(typeof body.orderNumberAtCustomer === 'string' ? { orderNumberAtCustomer: body.orderNumberAtCustomer } : {}),
    ...(typeof body.commission === 'string' ? { commission: body.commission } : {}),
    deliveryAddress,
    invoiceAddress: address(body.invoiceAddress, 'invoiceAddress'),
    orderItems,
    ...(shippingCostItems ? { shippingCostItems } : {}),
    ...(recordCurrencyId ? { recordCurrencyId } : {}),
    ...(headerDiscount ? { headerDiscount } : {}),
    ...totals(t, orderItems, shippingCostItems, headerDiscount),
    paid: false,
    shipped: false,
    invoiced: false,
    customAttributes: body.customAttributes === undefined ? [] : checkCustomAttributes(t, body.customAttributes, 'salesOrder'),
    createdDate: now,
    lastModifiedDate: now,
  };
  t.data.salesOrder.set(order.id, order);
  t.notify('salesOrder', order.id, 'create');
  return { status: 201, json: toWire('salesOrder', order) };
}

function createQuotation(t: Tenant, body: Record<string, unknown>): SimResponse {
  const customer = customerOf(t, body);
  const quotationItems = items(t, body.quotationItems ?? [], 'quotationItems');
  const now = Date.now();
  const quotation: Quotation = {
    id: t.nextId(),
    version: '0',
    quotationNumber: String(++t.quotationSeq),
    customerId: customer.id,
    status: 'OPEN',
    quotationDate: now,
    ...(typeof body.commission === 'string' ? { commission: body.commission } : {}),
    quotationItems,
    ...totals(t, quotationItems),
    customAttributes: body.customAttributes === undefined ? [] : checkCustomAttributes(t, body.customAttributes, 'quotation'),
    createdDate: now,
    lastModifiedDate: now,
  };
  t.data.quotation.set(quotation.id, quotation);
  t.notify('quotation', quotation.id, 'create');
  return { status: 201, json: toWire('quotation', quotation) };
}

function invoiceSalesOrder(t: Tenant, order: SalesOrder): void {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: TENANT_TIME_ZONE, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
  const invoiceDate = localMidnightMs(today);
  const customer = order.customerId ? t.data.customer.get(order.customerId) : undefined;
  const invoice: SalesInvoice = {
    id: t.nextId(),
    version: '0',
    invoiceNumber: `RE-${today.slice(0, 4)}-${String(++t.invoiceSeq).padStart(4, '0')}`,
    invoiceDate,
    customerId: order.customerId,
    customerNumber: customer?.customerNumber,
    salesOrderId: order.id,
    status: 'OPEN_ITEM_CREATED',
    salesInvoiceItems: (order.orderItems ?? []).map(({ manualUnitPrice: _m, ...it }) => ({ ...it, id: t.nextId() })),
    netAmount: order.netAmount,
    grossAmount: order.grossAmount,
    createdDate: Date.now(),
    lastModifiedDate: Date.now(),
  };
  t.data.salesInvoice.set(invoice.id, invoice);
}
