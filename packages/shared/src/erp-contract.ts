/**
 * The ERP wire contract: entity types of the weclapp-style REST API (v1) as the ERP simulator serves them and the
 * ordering service's ERP client reads and writes them (docs/decisions.md §6 ERP): one definition for both sides.
 * The shapes are subsets of weclapp's own description (vendored in `packages/shared/contracts/`, generated types
 * in `generated/weclapp-v1.ts`; docs/weclapp.md "Contract"); the money side is in `erp-contract-money.ts`.
 * weclapp conventions: ids and `version` are strings; amounts, prices and quantities are decimal strings with a
 * dot, in euros (`"50.34"`), net unless named gross; timestamps are epoch ms (UTC); document dates (`invoiceDate`,
 * `orderDate`) are local midnight of the tenant's time zone (Europe/Berlin). weclapp never sends `null` (it
 * leaves empty properties out), so everything not always set is optional; only the properties used are listed.
 */
import type { components } from './generated/weclapp-v1';
import type { ErpShippingCostItem, NewErpShippingCostItem } from './erp-contract-money';
export type { ErpCurrency, ErpShippingCostItem, ErpTax } from './erp-contract-money';

/**
 * `attributeKey`s of the ERP custom attribute definitions this service relies on (their ids differ per
 * tenant; look them up by key: `GET /customAttributeDefinition`). The ERP simulator seeds them, the ERP client reads by them.
 */
export const ERP_ATTRIBUTE_KEYS = {
  /** BOOLEAN (article): sold in the shop. */
  shopArticle: 'shopArticle',
  /** LIST (article): `public` | `retailer` | `internal`. */
  shopUserGroup: 'shopUserGroup',
  /** LIST (article): shop category. */
  shopCategory: 'shopCategory',
  /** LIST (article): `sicard9` | `sicard10` | `siac1`. */
  shopCardType: 'shopCardType',
  /** BOOLEAN (article): only sold as a sub item of a set. */
  shopSubitemOnly: 'shopSubitemOnly',
  /** STRING (article): comma list of configuration keys (`cardNumber,feedbackSignal`). */
  shopConfigurableAttributes: 'shopConfigurableAttributes',
  /** BOOLEAN (party in its customer role): a retailer. */
  retailer: 'retailer',
  /** BOOLEAN (customer): listed publicly. */
  retailerPublic: 'retailerPublic',
  /** STRING (customer): comma list of ISO 3166-1 alpha-2 countries served. */
  retailerServedCountries: 'retailerServedCountries',
  /** STRING (salesOrder, quotation): the service's idempotency reference (its order number). */
  shopReference: 'shopReference',
  /** LARGE_TEXT (article): a set's configurator rules per BOM slot, JSON array of {@link ErpSetSlotConfiguration}. */
  shopSetConfiguration: 'shopSetConfiguration',
} as const;

/** Value of a custom attribute on an entity; exactly one value field is set, by the definition's type. */
export interface ErpCustomAttribute {
  attributeDefinitionId: string;
  booleanValue?: boolean;
  /** Id of one of the definition's `selectableValues` (type LIST). */
  selectedValueId?: string;
  stringValue?: string;
}

/** Price of an article: `price` in `currencyName`, net (sales channel `NET1`), valid from `priceScaleValue` units. */
export interface ErpArticlePrice {
  id: string;
  price: string;
  currencyId: string;
  /** Deprecated in weclapp v1 (the id is the reference) but answered; the ISO code the product selects prices by. */
  currencyName?: string;
  priceScaleType: 'SCALE_FROM' | 'SCALE_TO';
  priceScaleValue: string;
  /** weclapp's `distributionChannel` (`NET1`: the first net price list). */
  salesChannel: components['schemas']['distributionChannel'];
  /** Customer-specific price when set (the product uses only prices without a customer). */
  customerId?: string;
  /** Validity, epoch ms; absent = open. */
  startDate?: number;
  endDate?: number;
}

/**
 * One slot of an article's sales bill of material (weclapp `salesBillOfMaterialArticleItem`: article, position,
 * quantity, nothing else). What the shop's set configurator needs per slot lives in the set article's custom
 * attribute `shopSetConfiguration` ({@link ErpSetSlotConfiguration}).
 */
interface ErpBomItem {
  id: string;
  positionNumber: number;
  /** Default article of the slot. */
  articleId: string;
  /** Deprecated in weclapp v1 but still answered; the id is the reference. */
  articleNumber?: string;
  /** Units per set, decimal string (`"5"`). */
  quantity: string;
  createdDate: number;
  lastModifiedDate: number;
  version: string;
}

/**
 * The configurator rules of one set slot, kept as JSON (an array, one entry per slot) in the set article's
 * LARGE_TEXT custom attribute `shopSetConfiguration` — weclapp's BOM item has no place for them. A client
 * reads an absent entry or field as false / only the default article / none.
 */
export interface ErpSetSlotConfiguration {
  positionNumber: number;
  /** Shown but not changeable by the customer. */
  locked?: boolean;
  /** The customer may change the configuration of the slot's article. */
  configurable?: boolean;
  /** The customer may leave the slot out. */
  optional?: boolean;
  /** Article numbers the customer may choose for this slot (the default included). */
  validArticleNumbers?: string[];
  /** Preset configuration of the slot's article (configuration key → value). */
  defaultConfiguration?: Record<string, string>;
  /** Configuration keys not applicable inside this set. */
  excludedCustomAttributes?: string[];
}

/**
 * Translations of an entity's texts (`GET /propertyTranslation/readPropertyTranslations?entityName=article&entityId=…`):
 * per property (`name`, `description`) its texts by locale. weclapp's article carries its texts in the tenant's
 * language only.
 */
export interface ErpPropertyTranslation {
  propertyName?: string;
  values?: { locale?: string; text?: string }[];
}

/** weclapp `article`. `name`/`description` are the tenant-language (English) texts; the others are property translations ({@link ErpPropertyTranslation}). */
export interface ErpArticle {
  id: string;
  version: string;
  articleNumber: string;
  name: string;
  description?: string;
  active: boolean;
  articleType: 'STORABLE' | 'SERVICE' | 'SALES_BILL_OF_MATERIAL' | 'BASIC';
  unitId: string;
  /** Tax rate class; `STANDARD` is 19 % in Germany. */
  taxRateType: 'STANDARD' | 'REDUCED' | 'ZERO';
  articlePrices?: ErpArticlePrice[];
  customAttributes?: ErpCustomAttribute[];
  salesBillOfMaterialItems?: ErpBomItem[];
  createdDate: number;
  lastModifiedDate: number;
}

/** Address of a party (weclapp `address`). */
interface ErpPartyAddress {
  id: string;
  street1?: string;
  street2?: string;
  zipcode?: string;
  city?: string;
  state?: string;
  /** ISO 3166-1 alpha-2. */
  countryCode?: string;
  deliveryAddress?: boolean;
  invoiceAddress?: boolean;
}

/**
 * A weclapp `party` in its customer role (`customer: true`), read from `/party` (`/customer` is deprecated in
 * v1 and gone in v2). `customerBlocked`: no new documents for it.
 */
export interface ErpCustomer {
  id: string;
  version: string;
  customer: boolean;
  customerNumber?: string;
  partyType?: 'ORGANIZATION' | 'PERSON';
  company?: string;
  firstName?: string;
  lastName?: string;
  email?: string;
  /** E.164. */
  phone?: string;
  website?: string;
  customerBlocked: boolean;
  /** The address used unless a document names another. */
  primaryAddressId?: string;
  addresses?: ErpPartyAddress[];
  customAttributes?: ErpCustomAttribute[];
  createdDate: number;
  lastModifiedDate: number;
}

/** Address printed on a sales document (free text, not a party address). */
export interface ErpRecordAddress {
  company?: string;
  firstName?: string;
  lastName?: string;
  street1?: string;
  street2?: string;
  zipcode?: string;
  city?: string;
  state?: string;
  countryCode?: string;
  phoneNumber?: string;
}

/** A position of a sales order, quotation or invoice. Amounts net, euros. */
export interface ErpRecordItem {
  id: string;
  positionNumber?: number;
  articleId?: string;
  /** Deprecated in weclapp v1, still answered. */
  articleNumber?: string;
  title?: string;
  description?: string;
  quantity?: string;
  unitPrice?: string;
  /** The price was set by hand (kept; else weclapp computes it from the article's prices). */
  manualUnitPrice?: boolean;
  netAmount?: string;
  grossAmount?: string;
  /** Percent off `quantity × unitPrice` (decimal string); `taxId`: the position's tax (`/tax`), else weclapp's choice. */
  discountPercentage?: string;
  taxId?: string;
  /** The main item of a set's sub item (absent for a main item). */
  parentItemId?: string;
}

/**
 * Status of a weclapp sales order: weclapp's `orderStatusType` (its OpenAPI v1 description). There is no
 * "shipped" status: shipping is the read-only boolean `shipped` (set by the ERP when the delivery is booked).
 */
export type ErpSalesOrderStatus = 'ORDER_ENTRY_IN_PROGRESS' | 'ORDER_CONFIRMATION_PRINTED' | 'CLOSED' | 'MANUALLY_CLOSED' | 'CANCELLED';

/** Every sales order status, in process order. */
export const ERP_SALES_ORDER_STATUSES: readonly ErpSalesOrderStatus[] = [
  'ORDER_ENTRY_IN_PROGRESS',
  'ORDER_CONFIRMATION_PRINTED',
  'CLOSED',
  'MANUALLY_CLOSED',
  'CANCELLED',
];

/** weclapp `salesOrder`. Amounts: read-only decimal euro strings, net and gross (tax = gross − net). */
export interface ErpSalesOrder {
  id: string;
  version: string;
  orderNumber: string;
  customerId?: string;
  status: ErpSalesOrderStatus;
  orderDate: number;
  orderNumberAtCustomer?: string;
  commission?: string;
  deliveryAddress?: ErpRecordAddress;
  invoiceAddress?: ErpRecordAddress;
  orderItems?: ErpRecordItem[];
  /** Shipping cost positions; the currency (`/currency` id, absent = the customer's); a discount in percent on all. */
  shippingCostItems?: ErpShippingCostItem[];
  recordCurrencyId?: string;
  headerDiscount?: string;
  netAmount?: string;
  grossAmount?: string;
  /** Read-only in weclapp: the order's payments cover it (booked in the ERP's accounting, not by this product). */
  paid: boolean;
  /** Read-only in weclapp: the goods have left (a shipment was booked). */
  shipped: boolean;
  /** Read-only in weclapp: a sales invoice was created for the order. */
  invoiced: boolean;
  customAttributes?: ErpCustomAttribute[];
  createdDate: number;
  lastModifiedDate: number;
}

/** Status of a weclapp quotation (`offerStatusType`). */
type ErpQuotationStatus = 'INQUIRED' | 'OPEN' | 'ACCEPTED' | 'REJECTED' | 'CANCELLED';

/** weclapp `quotation`. */
export interface ErpQuotation {
  id: string;
  version: string;
  quotationNumber: string;
  customerId?: string;
  status: ErpQuotationStatus;
  quotationDate: number;
  commission?: string;
  quotationItems?: ErpRecordItem[];
  netAmount?: string;
  grossAmount?: string;
  customAttributes?: ErpCustomAttribute[];
  createdDate: number;
  lastModifiedDate: number;
}

/**
 * Status of a weclapp sales invoice (`salesInvoiceStatusType`): `NEW` is a draft, `DOCUMENT_CREATED` has its
 * document, `ENTRY_COMPLETED` is booked, `OPEN_ITEM_CREATED` is booked with its open item, `CANCELLED` is void.
 */
type ErpSalesInvoiceStatus = 'NEW' | 'DOCUMENT_CREATED' | 'ENTRY_COMPLETED' | 'OPEN_ITEM_CREATED' | 'CANCELLED';

/**
 * weclapp `salesInvoice`. `invoiceDate` is local midnight (Europe/Berlin) of the invoice's date. Amounts are
 * read-only decimal euro strings; weclapp gives net and gross, no tax amount (tax = gross − net).
 */
export interface ErpSalesInvoice {
  id: string;
  version: string;
  invoiceNumber: string;
  invoiceDate: number;
  customerId?: string;
  /** Deprecated in weclapp v1, still answered. */
  customerNumber?: string;
  salesOrderId?: string;
  status: ErpSalesInvoiceStatus;
  /** Deprecated in weclapp v1 (the id is the reference), still answered; absent = the tenant's currency (EUR). */
  recordCurrencyName?: string;
  salesInvoiceItems?: ErpRecordItem[];
  netAmount?: string;
  grossAmount?: string;
  createdDate: number;
  lastModifiedDate: number;
}

/** One value of a LIST custom attribute definition. */
interface ErpCustomAttributeListValue {
  id: string;
  value: string;
}

/** weclapp `customAttributeDefinition`: `attributeKey` is the stable name clients look definitions up by. */
export interface ErpCustomAttributeDefinition {
  id: string;
  version: string;
  attributeKey: string;
  label: string;
  /** LARGE_TEXT and STRING carry `stringValue`, LIST `selectedValueId`, BOOLEAN `booleanValue`. */
  attributeType: 'BOOLEAN' | 'LIST' | 'STRING' | 'LARGE_TEXT';
  selectableValues?: ErpCustomAttributeListValue[];
  /** Entities the attribute applies to (`article`, `customer`, `salesOrder`, `quotation`). */
  entities?: string[];
  active: boolean;
  createdDate: number;
  lastModifiedDate: number;
}

/**
 * A position to create: the article by `articleId`, `quantity` as a decimal string, `unitPrice` net euros
 * (decimal string) kept as given because `manualUnitPrice` is true (else weclapp prices it itself); a set's sub
 * item names its main item by `parentItemId` (an existing item's id: sub items are added once the main items
 * exist, see `ErpClient.createSalesOrder`).
 */
export interface NewErpRecordItem {
  articleId: string;
  positionNumber?: number;
  quantity: string;
  unitPrice?: string;
  manualUnitPrice?: boolean;
  /** Percent off `quantity × unitPrice` (≤ 5 decimals); `taxId` books the shop's VAT rate, not weclapp's choice. */
  discountPercentage?: string;
  taxId?: string;
  title?: string;
  /** HTML, at most 255 characters in weclapp. */
  description?: string;
  parentItemId?: string;
}

/** A sales order to create (the customer by its id; the currency by its id, else the customer's default). */
export interface NewErpSalesOrder {
  customerId: string;
  orderItems: NewErpRecordItem[];
  shippingCostItems?: NewErpShippingCostItem[];
  recordCurrencyId?: string;
  headerDiscount?: string;
  deliveryAddress?: ErpRecordAddress;
  invoiceAddress?: ErpRecordAddress;
  /** The buyer's own reference (a retailer's order number). */
  orderNumberAtCustomer?: string;
  commission?: string;
  customAttributes?: ErpCustomAttribute[];
}

/** A quotation to create. */
export interface NewErpQuotation {
  customerId: string;
  quotationItems: NewErpRecordItem[];
  commission?: string;
  customAttributes?: ErpCustomAttribute[];
}

/** Answer of a list read (`GET /<entity>`): one page of entities; of `GET /<entity>/count`: `result` is the count. */
export interface ErpListResponse<T> {
  result: T[];
}

/**
 * Compile-time proof that the shapes above are subsets of weclapp's own generated types (`generated/weclapp-v1.ts`):
 * a property weclapp does not have, or one of another type, fails `pnpm typecheck`.
 */
type Subset<T extends U, U> = T;
type W = components['schemas'];
type _ErpShapesAreWeclapps = [
  // openapi-typescript renders weclapp's BOM item (`salesBillOfMaterialArticleItem`) as an empty record: the
  // contract tests hold that one.
  Subset<Omit<ErpArticle, 'salesBillOfMaterialItems'>, W['article']>,
  Subset<ErpArticlePrice, W['articlePriceWithoutArticleReference']>,
  Subset<ErpCustomer, W['party']>,
  Subset<ErpPartyAddress, W['address']>,
  Subset<ErpRecordAddress, W['recordAddress']>,
  Subset<ErpSalesOrder, W['salesOrder']>,
  Subset<ErpRecordItem, W['salesOrderItem']>,
  Subset<ErpQuotation, W['quotation']>,
  Subset<ErpSalesInvoice, W['salesInvoice']>,
  Subset<ErpCustomAttributeDefinition, W['customAttributeDefinition']>,
  Subset<ErpCustomAttribute, W['customAttribute']>,
  Subset<ErpPropertyTranslation, W['propertyTranslation']>,
  Subset<NewErpSalesOrder, W['salesOrder']>,
  Subset<NewErpRecordItem, W['salesOrderItem']>,
  Subset<NewErpQuotation, W['quotation']>,
];
