/**
 * The demo data of the ERP simulator: a tenant built from the shop catalogue (`seed-catalogue.ts`: cards,
 * stations, accessories, sets), the custom attribute definitions that mark shop articles, currencies and taxes,
 * and the accounts (`seed-accounts.ts`: retailers as customers, booked sales invoices).
 *
 * Article numbers, customer numbers and attribute keys are stable strings: the ordering service's own demo
 * catalogue and tests refer to them (import these constants rather than repeating the strings). Prices are
 * net euros as decimal strings, like weclapp; VAT is the German standard rate (19 %).
 */
import { zonedMidnightMs } from '@sports-timing/shared/src/time-zones';
import { ERP_ATTRIBUTE_KEYS, type ErpSetSlotConfiguration } from '@sports-timing/shared/src/erp-contract';
import type { Article, CustomAttributeDefinition, Customer, SalesInvoice, TenantData } from './types';
import { SEED_CUSTOMERS, SEED_INVOICES } from './seed-accounts';
import { CARD_TYPES, CATEGORIES, SEED_ARTICLES, USER_GROUPS } from './seed-catalogue';

/**
 * `attributeKey` of the custom attribute definitions (the shared contract's list). Clients find a definition's
 * id by its key (`GET /customAttributeDefinition`), never by a hard-coded id.
 */
export const ATTRIBUTE_KEYS = ERP_ATTRIBUTE_KEYS;

/** Id of the unit "piece" every seed article is counted in (weclapp: a `unit` entity). */
const UNIT_ID_PIECE = '10';
/** Id of the currency EUR (weclapp: a `currency` entity; tenant-specific in a real weclapp). */
export const CURRENCY_ID_EUR = '248';
/** Id of the currency CHF (a second currency, so that a document's currency is a real choice). */
const CURRENCY_ID_CHF = '249';

/**
 * The tenant's sales taxes (weclapp `tax`, `taxType` VALUE_ADDED_TAX): German standard, reduced and zero rate,
 * plus a second 19 % tax of another kind (import sales tax) that a client must not pick for sales VAT.
 */
const SEED_TAXES: readonly { id: string; name: string; taxType: 'VALUE_ADDED_TAX' | 'IMPORT_SALES_TAX'; taxValue: string }[] = [
  { id: '301', name: 'Einfuhrumsatzsteuer 19%', taxType: 'IMPORT_SALES_TAX', taxValue: '19' },
  { id: '302', name: 'Umsatzsteuer 19%', taxType: 'VALUE_ADDED_TAX', taxValue: '19' },
  { id: '303', name: 'Umsatzsteuer 7%', taxType: 'VALUE_ADDED_TAX', taxValue: '7' },
  { id: '304', name: 'Steuerfrei (Ausfuhr)', taxType: 'VALUE_ADDED_TAX', taxValue: '0' },
];
/** The user the simulator's own changes are recorded as (weclapp's `lastModifiedByUserId`). */
export const SYSTEM_USER_ID = '1';

/** Default API tokens of the simulator's tenants (development only; a real tenant has its own). */
export const DEFAULT_TOKENS = { main: 'dev-erp-token-weclapp', sandbox: 'dev-erp-token-weclapp-sandbox' } as const;

/** German standard VAT rate in percent, applied to every demo amount. */
export const VAT_RATE_PERCENT = 19;

/** Time zone of the tenant: document dates are local midnight there. */
export const TENANT_TIME_ZONE = 'Europe/Berlin';

/** Epoch ms of local midnight of `YYYY-MM-DD` in `timeZone`. */
export function localMidnightMs(date: string, timeZone = TENANT_TIME_ZONE): number {
  const [y, m, d] = date.split('-').map(Number);
  return zonedMidnightMs(y, m, d, timeZone);
}

/** Euros (decimal string) → integer cents. */
function toCents(euros: string | number): number {
  return Math.round(Number(euros) * 100);
}

/** Integer cents → euros with two decimals (`"50.34"`). */
export function toEuros(cents: number): string {
  return (cents / 100).toFixed(2);
}

/** Allocates ids; the seed and the simulator share one sequence per tenant so ids never collide. */
export type IdAllocator = () => string;

function defs(nextId: IdAllocator, now: number): CustomAttributeDefinition[] {
  const def = (
    attributeKey: string,
    label: string,
    attributeType: CustomAttributeDefinition['attributeType'],
    entities: string[],
    values: readonly string[] = [],
  ): CustomAttributeDefinition => ({
    id: nextId(),
    version: '0',
    attributeKey,
    label,
    attributeType,
    entities,
    selectableValues: values.map((value) => ({ id: nextId(), value })),
    active: true,
    createdDate: now,
    lastModifiedDate: now,
  });
  const k = ATTRIBUTE_KEYS;
  return [
    def(k.shopArticle, 'Shop article', 'BOOLEAN', ['article']),
    def(k.shopUserGroup, 'Shop user group', 'LIST', ['article'], USER_GROUPS),
    def(k.shopCategory, 'Shop category', 'LIST', ['article'], CATEGORIES),
    def(k.shopCardType, 'Card type', 'LIST', ['article'], CARD_TYPES),
    def(k.shopSubitemOnly, 'Shop: sub item only', 'BOOLEAN', ['article']),
    def(k.shopConfigurableAttributes, 'Shop: configuration fields', 'STRING', ['article']),
    def(k.retailer, 'Retailer', 'BOOLEAN', ['customer']),
    def(k.retailerPublic, 'Retailer: public listing', 'BOOLEAN', ['customer']),
    def(k.retailerServedCountries, 'Retailer: served countries', 'STRING', ['customer']),
    def(k.shopReference, 'Shop reference', 'STRING', ['salesOrder', 'quotation']),
    def(k.shopSetConfiguration, 'Shop: set configurator', 'LARGE_TEXT', ['article']),
  ];
}

/** Builds the custom attribute value of definition `key` from a plain value (select values by text). */
export function attributeValue(definitions: Iterable<CustomAttributeDefinition>, key: string, value: boolean | string) {
  const def = [...definitions].find((d) => d.attributeKey === key);
  if (!def) throw new Error(`unknown custom attribute ${key}`);
  if (def.attributeType === 'BOOLEAN') return { attributeDefinitionId: def.id, booleanValue: Boolean(value) };
  if (def.attributeType === 'LIST') {
    const sel = (def.selectableValues ?? []).find((v) => v.value === value);
    if (!sel) throw new Error(`custom attribute ${key} has no value ${String(value)}`);
    return { attributeDefinitionId: def.id, selectedValueId: sel.id };
  }
  return { attributeDefinitionId: def.id, stringValue: String(value) };
}

/** Builds a tenant's entities from the seed; `now` stamps created/modified dates. */
export function seedTenant(nextId: IdAllocator, now: number): TenantData {
  const data: TenantData = {
    article: new Map(),
    customer: new Map(),
    salesOrder: new Map(),
    quotation: new Map(),
    salesInvoice: new Map(),
    customAttributeDefinition: new Map(),
    currency: new Map(),
    tax: new Map(),
  };
  for (const [id, name, currencySymbol] of [
    [CURRENCY_ID_EUR, 'EUR', '€'],
    [CURRENCY_ID_CHF, 'CHF', 'CHF'],
  ] as const) {
    data.currency.set(id, { id, version: '0', name, currencySymbol, createdDate: now, lastModifiedDate: now });
  }
  for (const t of SEED_TAXES) data.tax.set(t.id, { ...t, version: '0', createdDate: now, lastModifiedDate: now });
  for (const d of defs(nextId, now)) data.customAttributeDefinition.set(d.id, d);
  const definitions = [...data.customAttributeDefinition.values()];
  const attr = (key: string, value: boolean | string) => attributeValue(definitions, key, value);

  const byNumber = new Map<string, Article>();
  for (const s of SEED_ARTICLES) {
    const customAttributes = [
      attr(ATTRIBUTE_KEYS.shopArticle, s.isShopArticle),
      attr(ATTRIBUTE_KEYS.shopUserGroup, s.userGroup),
      attr(ATTRIBUTE_KEYS.shopCategory, s.category),
    ];
    if (s.cardType) customAttributes.push(attr(ATTRIBUTE_KEYS.shopCardType, s.cardType));
    if (s.subitemOnly) customAttributes.push(attr(ATTRIBUTE_KEYS.shopSubitemOnly, true));
    if (s.configurableAttributes) customAttributes.push(attr(ATTRIBUTE_KEYS.shopConfigurableAttributes, s.configurableAttributes.join(',')));
    const article: Article = {
      id: nextId(),
      version: '0',
      articleNumber: s.articleNumber,
      name: s.name.en,
      description: s.description.en,
      active: true,
      articleType: s.bom ? 'SALES_BILL_OF_MATERIAL' : s.service ? 'SERVICE' : 'STORABLE',
      unitId: UNIT_ID_PIECE,
      taxRateType: 'STANDARD',
      articlePrices: [
        {
          id: nextId(),
          price: s.netPrice,
          currencyId: CURRENCY_ID_EUR,
          currencyName: 'EUR',
          priceScaleType: 'SCALE_FROM',
          priceScaleValue: '1',
          salesChannel: 'NET1',
        },
      ],
      customAttributes,
      salesBillOfMaterialItems: [],
      translations: (['de', 'fr'] as const).map((locale) => ({ locale, name: s.name[locale], description: s.description[locale] })),
      createdDate: now,
      lastModifiedDate: now,
    };
    byNumber.set(s.articleNumber, article);
    data.article.set(article.id, article);
  }
  for (const s of SEED_ARTICLES) {
    const article = byNumber.get(s.articleNumber)!;
    article.salesBillOfMaterialItems = (s.bom ?? []).map((b) => ({
      id: nextId(),
      positionNumber: b.position,
      articleId: byNumber.get(b.defaultArticle)!.id,
      articleNumber: b.defaultArticle,
      quantity: String(b.quantity ?? 1),
      createdDate: now,
      lastModifiedDate: now,
      version: '0',
    }));
    if (s.bom) {
      const slots: ErpSetSlotConfiguration[] = s.bom.map((b) => ({
        positionNumber: b.position,
        locked: b.locked ?? false,
        configurable: b.configurable ?? false,
        optional: b.optional ?? false,
        validArticleNumbers: b.valid,
        defaultConfiguration: b.configuration ?? {},
        excludedCustomAttributes: b.excluded ?? [],
      }));
      article.customAttributes!.push(attr(ATTRIBUTE_KEYS.shopSetConfiguration, JSON.stringify(slots)));
    }
  }

  const customers = new Map<string, Customer>();
  for (const c of SEED_CUSTOMERS) {
    const customAttributes = [attr(ATTRIBUTE_KEYS.retailer, c.retailer)];
    if (c.retailer) {
      customAttributes.push(attr(ATTRIBUTE_KEYS.retailerPublic, c.retailerPublic ?? false));
      customAttributes.push(attr(ATTRIBUTE_KEYS.retailerServedCountries, (c.servedCountries ?? []).join(',')));
    }
    const addressId = nextId();
    const customer: Customer = {
      id: nextId(),
      primaryAddressId: addressId,
      version: '0',
      customerNumber: c.customerNumber,
      partyType: 'ORGANIZATION',
      company: c.company,
      email: c.email,
      phone: c.phone,
      ...(c.website ? { website: c.website } : {}),
      customer: true,
      customerBlocked: false,
      addresses: [
        {
          id: addressId,
          street1: c.street1,
          ...(c.street2 ? { street2: c.street2 } : {}),
          zipcode: c.zipcode,
          city: c.city,
          ...(c.state ? { state: c.state } : {}),
          countryCode: c.countryCode,
          deliveryAddress: true,
          invoiceAddress: true,
        },
      ],
      customAttributes,
      createdDate: now,
      lastModifiedDate: now,
    };
    customers.set(c.customerNumber, customer);
    data.customer.set(customer.id, customer);
  }

  for (const inv of SEED_INVOICES) {
    const customer = customers.get(inv.customerNumber)!;
    const items = inv.items.map((it, i) => {
      const a = byNumber.get(it.articleNumber)!;
      const unit = toCents(a.articlePrices![0].price);
      return {
        id: nextId(),
        positionNumber: i + 1,
        articleId: a.id,
        articleNumber: a.articleNumber,
        title: a.name,
        quantity: String(it.quantity),
        unitPrice: toEuros(unit),
        netAmount: toEuros(unit * it.quantity),
      };
    });
    const net = items.reduce((sum, it) => sum + toCents(it.netAmount), 0);
    const tax = Math.round((net * VAT_RATE_PERCENT) / 100);
    const invoiceDate = localMidnightMs(inv.date);
    const invoice: SalesInvoice = {
      id: nextId(),
      version: '0',
      invoiceNumber: inv.invoiceNumber,
      invoiceDate,
      customerId: customer.id,
      customerNumber: customer.customerNumber,
      status: inv.status ?? 'OPEN_ITEM_CREATED',
      salesInvoiceItems: items,
      netAmount: toEuros(net),
      grossAmount: toEuros(net + tax),
      createdDate: invoiceDate,
      lastModifiedDate: invoiceDate,
    };
    data.salesInvoice.set(invoice.id, invoice);
  }
  return data;
}
