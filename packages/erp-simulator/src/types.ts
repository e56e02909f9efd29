/**
 * Entities of the ERP simulator as it stores and serves them: the weclapp REST v1 shapes the ordering
 * service uses. Conventions of weclapp kept here: ids and `version` are strings, decimal amounts and
 * quantities are strings with a dot (`"50.34"`, euros, net unless named gross), timestamps are epoch
 * milliseconds (UTC instants; a document date such as `invoiceDate` is local midnight of the tenant's
 * time zone, Europe/Berlin).
 */

/** Value of a custom attribute on an entity; exactly one value field is set, by the definition's type. */
export interface CustomAttributeValue {
  attributeDefinitionId: string;
  booleanValue?: boolean;
  /** Id of one of the definition's `selectableValues` (type LIST). */
  selectedValueId?: string;
  stringValue?: string;
}

/** Price of an article: `price` in `currencyName`, net, valid from `priceScaleValue` units. */
export interface ArticlePrice {
  id: string;
  price: string;
  currencyName: string;
  priceScaleType: 'SCALE_FROM';
  priceScaleValue: string;
  salesChannel: 'NET1';
}

/**
 * One slot of an article's sales bill of material (weclapp: `salesBillOfMaterialItems`). weclapp stores
 * `articleId`, `articleNumber`, `quantity` and `positionNumber`; the configurator fields (`locked`,
 * `configurable`, `optional`, `validArticleNumbers`, `defaultConfiguration`, `excludedCustomAttributes`)
 * are this product's additions, kept on the slot so the shop can import a set in one read.
 */
export interface SalesBillOfMaterialItem {
  id: string;
  positionNumber: number;
  /** Default article of the slot. */
  articleId: string;
  articleNumber: string;
  /** Units per set, decimal string (`"5"`). */
  quantity: string;
  /** Shown but not changeable by the customer. */
  locked: boolean;
  /** The customer may change the configuration of the slot's article. */
  configurable: boolean;
  /** The customer may leave the slot out. */
  optional: boolean;
  /** Article numbers the customer may choose for this slot (the default included). */
  validArticleNumbers: string[];
  /** Preset configuration of the slot's article (configuration key → value). */
  defaultConfiguration: Record<string, string>;
  /** Configuration keys not applicable inside this set. */
  excludedCustomAttributes: string[];
}

/** Name and description of an article in one language (ISO 639-1). */
export interface ArticleTranslation {
  languageCode: string;
  name: string;
  description: string;
}

/** weclapp `article`. `name`/`description` are the English texts; `translations` holds the others. */
export interface Article {
  id: string;
  version: string;
  articleNumber: string;
  name: string;
  description: string;
  active: boolean;
  articleType: 'STORABLE' | 'SERVICE' | 'SALES_BILL_OF_MATERIAL';
  unitName: string;
  /** Tax rate class; `STANDARD` is 19 % in Germany. */
  taxRateType: 'STANDARD' | 'REDUCED' | 'ZERO';
  articlePrices: ArticlePrice[];
  customAttributes: CustomAttributeValue[];
  salesBillOfMaterialItems: SalesBillOfMaterialItem[];
  translations: ArticleTranslation[];
  createdDate: number;
  lastModifiedDate: number;
}

/** Address of a party (weclapp `address`). */
export interface PartyAddress {
  id: string;
  street1: string;
  street2: string | null;
  zipcode: string | null;
  city: string;
  state: string | null;
  /** ISO 3166-1 alpha-2. */
  countryCode: string;
  primeAddress: boolean;
  deliveryAddress: boolean;
  invoiceAddress: boolean;
}

/** weclapp `customer` (a party of type customer). */
export interface Customer {
  id: string;
  version: string;
  customerNumber: string;
  partyType: 'ORGANIZATION' | 'PERSON';
  company: string | null;
  firstName: string | null;
  lastName: string | null;
  email: string | null;
  /** E.164. */
  phone: string | null;
  website: string | null;
  currencyName: string;
  blocked: boolean;
  addresses: PartyAddress[];
  customAttributes: CustomAttributeValue[];
  createdDate: number;
  lastModifiedDate: number;
}

/** Address printed on a sales document (free text, not a party address). */
export interface RecordAddress {
  company?: string | null;
  firstName?: string | null;
  lastName?: string | null;
  street1?: string | null;
  street2?: string | null;
  zipcode?: string | null;
  city?: string | null;
  state?: string | null;
  countryCode?: string | null;
  phoneNumber?: string | null;
}

/** A position of a sales order, quotation or invoice. Amounts net, euros. */
export interface RecordItem {
  id: string;
  positionNumber: number;
  articleId: string;
  articleNumber: string;
  title: string;
  description: string | null;
  quantity: string;
  unitPrice: string;
  netAmount: string;
  /** Parent position for a set's sub item, null for a main item. */
  parentItemId: string | null;
}

/** Status of a weclapp sales order (the subset used here). */
export type SalesOrderStatus = 'ORDER_ENTRY_IN_PROGRESS' | 'ORDER_CONFIRMATION_PRINTED' | 'SHIPPED' | 'CLOSED' | 'CANCELLED';

/** Every sales order status, in process order. */
export const SALES_ORDER_STATUSES: readonly SalesOrderStatus[] = ['ORDER_ENTRY_IN_PROGRESS', 'ORDER_CONFIRMATION_PRINTED', 'SHIPPED', 'CLOSED', 'CANCELLED'];

/** weclapp `salesOrder`. Amounts: decimal euro strings; `netAmount` + `taxAmount` = `grossAmount`. */
export interface SalesOrder {
  id: string;
  version: string;
  orderNumber: string;
  customerId: string;
  customerNumber: string;
  status: SalesOrderStatus;
  orderDate: number;
  recordCurrencyName: string;
  orderNumberAtCustomer: string | null;
  commission: string | null;
  deliveryAddress: RecordAddress | null;
  invoiceAddress: RecordAddress | null;
  orderItems: RecordItem[];
  netAmount: string;
  taxAmount: string;
  grossAmount: string;
  /** Payment already received (prepaid shop orders), for the ERP's open-item handling. */
  paid: boolean;
  customAttributes: CustomAttributeValue[];
  createdDate: number;
  lastModifiedDate: number;
}

/** weclapp `quotation`. */
export interface Quotation {
  id: string;
  version: string;
  quotationNumber: string;
  customerId: string;
  customerNumber: string;
  status: 'OPEN' | 'ACCEPTED' | 'REJECTED';
  quotationDate: number;
  recordCurrencyName: string;
  commission: string | null;
  quotationItems: RecordItem[];
  netAmount: string;
  taxAmount: string;
  grossAmount: string;
  customAttributes: CustomAttributeValue[];
  createdDate: number;
  lastModifiedDate: number;
}

/** weclapp `salesInvoice`. `invoiceDate` is local midnight (Europe/Berlin) of the invoice's date. */
export interface SalesInvoice {
  id: string;
  version: string;
  invoiceNumber: string;
  invoiceDate: number;
  customerId: string;
  customerNumber: string;
  salesOrderId: string | null;
  status: 'BOOKED';
  recordCurrencyName: string;
  salesInvoiceItems: RecordItem[];
  netAmount: string;
  taxAmount: string;
  grossAmount: string;
  createdDate: number;
  lastModifiedDate: number;
}

/** weclapp `customAttributeDefinition`: `attributeKey` is the stable name clients look definitions up by. */
export interface CustomAttributeDefinition {
  id: string;
  version: string;
  attributeKey: string;
  label: string;
  attributeType: 'BOOLEAN' | 'LIST' | 'STRING';
  /** Entities the attribute applies to (`article`, `customer`, `salesOrder`, `quotation`). */
  entities: string[];
  selectableValues: { id: string; value: string }[];
  active: boolean;
  createdDate: number;
  lastModifiedDate: number;
}

/** Entity collections of one tenant, by weclapp entity name. */
export interface TenantData {
  article: Map<string, Article>;
  customer: Map<string, Customer>;
  salesOrder: Map<string, SalesOrder>;
  quotation: Map<string, Quotation>;
  salesInvoice: Map<string, SalesInvoice>;
  customAttributeDefinition: Map<string, CustomAttributeDefinition>;
}

/** Name of an entity collection. */
export type EntityName = keyof TenantData;
