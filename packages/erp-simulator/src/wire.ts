/**
 * The simulator's entities as weclapp answers them (its OpenAPI v1 description, vendored in
 * `packages/shared/contracts/`): empty properties left out (weclapp never sends `null`), the simulator's own
 * bookkeeping (an article's other-language texts, served under `/propertyTranslation`) left out, and the
 * properties weclapp flags as always present (`x-weclapp.required`) filled with what a fresh tenant has for
 * them; sub-entities (prices, BOM items, addresses, positions, list values) carry their own id, version and
 * dates as weclapp's do.
 */
import { CURRENCY_ID_EUR, SYSTEM_USER_ID } from './seed';
import type { EntityName } from './types';

type Json = Record<string, unknown>;

/** weclapp's values of the always-present properties the product does not use, per entity. */
const ENTITY_DEFAULTS: Record<EntityName, Json> = {
  article: {
    applyCashDiscount: true,
    availableInSale: true,
    batchNumberRequired: false,
    billOfMaterialPartDeliveryPossible: false,
    defaultPriceCalculationType: 'SALES',
    defineIndividualTaskTemplates: false,
    productionArticle: false,
    productionConfigurationRule: 'ALL_COMPONENTS',
    serialNumberRequired: false,
    showOnDeliveryNote: true,
    useAvailableForSalesChannels: false,
    useSalesBillOfMaterialItemPrices: false,
    useSalesBillOfMaterialItemPricesForPurchase: false,
    useSalesBillOfMaterialSubitemCosts: false,
  },
  customer: {
    allowPurchaseOrderCreation: false,
    commissionBlock: false,
    competitor: false,
    customerAllowDropshippingOrderCreation: false,
    customerBusinessType: 'B2B',
    customerDeliveryBlock: false,
    customerInsolvent: false,
    customerInsured: false,
    customerUseCustomsTariffNumber: false,
    enableDropshippingInNewSupplySources: false,
    factoring: false,
    fixedResponsibleUser: false,
    formerSalesPartner: false,
    habitualExporter: false,
    invoiceBlock: false,
    optInEmail: false,
    optInLetter: false,
    optInPhone: false,
    optInSms: false,
    purchaseViaPlafond: false,
    salesPartner: false,
    supplier: false,
    supplierMergeItemsForOcrInvoiceUpload: false,
    supplierOrderBlock: false,
  },
  salesOrder: {
    sentToRecipient: false,
    applyShippingCostsOnlyOnce: false,
    onlyServices: false,
    projectModeActive: false,
    recordCommentInheritance: true,
    recordFreeTextInheritance: true,
    recordOpeningInheritance: true,
    salesOrderPaymentType: 'STANDARD',
    servicesFinished: false,
    template: false,
  },
  quotation: {
    sentToRecipient: false,
    activeVersion: true,
    quotationType: 'SALES_ORDER',
    quotationVersion: 1,
    recordCommentInheritance: true,
    recordFreeTextInheritance: true,
    recordOpeningInheritance: true,
    template: false,
  },
  salesInvoice: {
    sentToRecipient: false,
    cancellationSlipCommissionBlock: false,
    commissionBlock: false,
    creditResetsOrderState: false,
    directDebitFileCreated: false,
    dunningBlockState: 'UNBLOCKED',
    paymentStatus: 'OPEN',
    salesInvoiceType: 'STANDARD_INVOICE',
  },
  currency: {},
  tax: {},
  customAttributeDefinition: {
    defaultBooleanValue: false,
    mandatory: false,
    readOnly: false,
    showInOverview: false,
    showOnCreationDialog: false,
    systemCustomAttribute: false,
  },
};

/** Always-present properties of sub-entities, by the property that holds them. */
const CHILD_DEFAULTS: Record<string, Json> = {
  articlePrices: { currencyId: CURRENCY_ID_EUR, lastModifiedByUserId: SYSTEM_USER_ID },
  orderItems: { availability: 'NOT_CHECKED', availabilityForAllWarehouses: 'NOT_CHECKED', invoicedQuantity: '0', shippedQuantity: '0' },
  quotationItems: { alternative: false, optional: false },
  shippingCostItems: { manualUnitCost: false },
  selectableValues: { active: true, defaultValue: false },
};

/** Properties the simulator keeps for itself, per entity. */
const PRIVATE: Partial<Record<EntityName, readonly string[]>> = { article: ['translations'] };

/** `value` without `null`/`undefined` properties, at every depth. */
function compact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(compact);
  if (value === null || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) if (v !== null && v !== undefined) out[k] = compact(v);
  return out;
}

/** The deprecated `/customer` view's always-present flags (its own names for what a party says in its customer role). */
const CUSTOMER_VIEW_DEFAULTS: Json = {
  deliveryBlock: false,
  insolvent: false,
  insured: false,
  invoiceBlock: false,
  optIn: false,
  optInLetter: false,
  optInPhone: false,
  optInSms: false,
  responsibleUserFixed: false,
  useCustomsTariffNumber: false,
};

/**
 * A party in its customer role as the deprecated `/customer` endpoint answers it (`blocked` for
 * `customerBlocked`, no party-only properties).
 */
export function toCustomerView(party: object): Json {
  const p = toWire('customer', party);
  const partyOnly = new Set(['customer', 'customerBlocked', ...Object.keys(ENTITY_DEFAULTS.customer)]);
  const out: Json = { ...CUSTOMER_VIEW_DEFAULTS, blocked: p.customerBlocked };
  for (const [k, v] of Object.entries(p)) if (!partyOnly.has(k)) out[k] = v;
  return out;
}

/** An entity of collection `name` as weclapp answers it (see the module comment; the `customer` collection holds parties). */
export function toWire(name: EntityName, entity: object): Json {
  const e = compact(entity) as Json;
  for (const key of PRIVATE[name] ?? []) delete e[key];
  const stamp = { createdDate: e.createdDate, lastModifiedDate: e.lastModifiedDate, version: '0' };
  for (const [key, v] of Object.entries(e)) {
    if (!Array.isArray(v) || !v.every((x) => x !== null && typeof x === 'object' && 'id' in x)) continue;
    e[key] = v.map((child: Json) => ({ ...stamp, ...CHILD_DEFAULTS[key], ...child }));
  }
  return { ...ENTITY_DEFAULTS[name], ...e };
}
