/**
 * Wire types of the ERP's weclapp-style REST API (v1) as the ordering service reads and writes them
 * (DESIGN §6 ERP; spec `ErpSystem`). weclapp conventions: ids and `version` are strings; money amounts,
 * prices and quantities are decimal strings with a dot, in euros (`"50.34"`), net unless named gross;
 * timestamps are epoch milliseconds (UTC instants); document dates (`invoiceDate`, `orderDate`) are local
 * midnight of the tenant's time zone (Europe/Berlin). Entities carry more properties than typed here;
 * only the ones the service uses are listed.
 */
import type { components } from '../generated/openapi';

/** ERP tenant: `weclapp` (production) or `weclappSandbox` (spec `ErpSystem`). */
export type ErpSystem = components['schemas']['ErpSystem'];

/** Every ERP tenant. */
export const ERP_SYSTEMS: readonly ErpSystem[] = ['weclapp', 'weclappSandbox'];

/**
 * `attributeKey`s of the ERP custom attribute definitions this service relies on (their ids differ per
 * tenant; look them up with `ErpClient.attributeDefinition`).
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
  /** BOOLEAN (customer): a retailer. */
  retailer: 'retailer',
  /** BOOLEAN (customer): listed publicly. */
  retailerPublic: 'retailerPublic',
  /** STRING (customer): comma list of ISO 3166-1 alpha-2 countries served. */
  retailerServedCountries: 'retailerServedCountries',
  /** STRING (salesOrder, quotation): the service's idempotency reference (its order number). */
  shopReference: 'shopReference',
} as const;

/** A custom attribute value on an entity: one of the value fields, by the definition's type. */
export interface ErpCustomAttribute {
  attributeDefinitionId: string;
  booleanValue?: boolean | null;
  /** Id of a `selectableValues` entry (type LIST). */
  selectedValueId?: string | null;
  stringValue?: string | null;
}

/** `customAttributeDefinition`. */
export interface ErpCustomAttributeDefinition {
  id: string;
  version: string;
  attributeKey: string;
  label: string;
  attributeType: 'BOOLEAN' | 'LIST' | 'STRING' | string;
  entities?: string[];
  selectableValues?: { id: string; value: string }[];
  active?: boolean;
}

/** A price of an article: net `price` (euros, decimal string) in `currencyName` from `priceScaleValue` units. */
export interface ErpArticlePrice {
  id?: string;
  price: string;
  currencyName: string;
  priceScaleValue?: string;
  salesChannel?: string;
}

/**
 * A slot of an article's sales bill of material (`salesBillOfMaterialItems`). `articleId`/`articleNumber`
 * name the default article, `quantity` is per set (decimal string). The configurator fields (`locked`,
 * `configurable`, `optional`, `validArticleNumbers`, `defaultConfiguration`, `excludedCustomAttributes`)
 * may be absent on a real tenant: absent means false / only the default article / none.
 */
export interface ErpBomItem {
  id?: string;
  positionNumber: number;
  articleId: string;
  articleNumber: string;
  quantity: string;
  locked?: boolean;
  configurable?: boolean;
  optional?: boolean;
  validArticleNumbers?: string[];
  defaultConfiguration?: Record<string, string>;
  excludedCustomAttributes?: string[];
}

/** `article`. `name`/`description` are the default-language (English) texts. */
export interface ErpArticle {
  id: string;
  version: string;
  articleNumber: string;
  name: string;
  description?: string | null;
  active: boolean;
  articleType?: string;
  unitName?: string | null;
  taxRateType?: string | null;
  articlePrices?: ErpArticlePrice[];
  customAttributes?: ErpCustomAttribute[];
  salesBillOfMaterialItems?: ErpBomItem[];
  /** Texts in further languages (ISO 639-1). */
  translations?: { languageCode: string; name: string; description?: string | null }[];
  createdDate?: number;
  lastModifiedDate: number;
}

/** Writable article properties for `updateArticle` (partial update). */
export type ErpArticleChanges = Partial<Pick<ErpArticle, 'name' | 'description' | 'active' | 'articlePrices' | 'customAttributes' | 'salesBillOfMaterialItems' | 'translations'>>;

/** An address of a party. */
export interface ErpPartyAddress {
  id?: string;
  street1?: string | null;
  street2?: string | null;
  zipcode?: string | null;
  city?: string | null;
  state?: string | null;
  /** ISO 3166-1 alpha-2. */
  countryCode?: string | null;
  primeAddress?: boolean;
  deliveryAddress?: boolean;
  invoiceAddress?: boolean;
}

/** `customer`. */
export interface ErpCustomer {
  id: string;
  version: string;
  customerNumber: string;
  partyType?: string;
  company?: string | null;
  firstName?: string | null;
  lastName?: string | null;
  email?: string | null;
  phone?: string | null;
  website?: string | null;
  blocked?: boolean;
  addresses?: ErpPartyAddress[];
  customAttributes?: ErpCustomAttribute[];
  lastModifiedDate: number;
}

/** An address printed on a sales document. */
export interface ErpRecordAddress {
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

/** A position of a sales order, quotation or invoice (amounts net euros, decimal strings). */
export interface ErpRecordItem {
  id: string;
  positionNumber: number;
  articleId: string;
  articleNumber: string;
  title?: string | null;
  description?: string | null;
  quantity: string;
  unitPrice: string;
  netAmount?: string;
  /** Position of the set a sub item belongs to; null for a main item. */
  parentItemId?: string | null;
}

/**
 * A position to create: the article by `articleNumber` (or `articleId`), `quantity` as a decimal string,
 * `unitPrice` net euros (decimal string; default: the ERP's price), `parentPositionNumber` for a set's sub
 * item (the position number of its main item, listed earlier).
 */
export interface NewErpRecordItem {
  articleNumber?: string;
  articleId?: string;
  positionNumber?: number;
  quantity: string;
  unitPrice?: string;
  title?: string;
  description?: string;
  parentPositionNumber?: number;
}

/** weclapp sales order status (the subset used). */
export type ErpSalesOrderStatus = 'ORDER_ENTRY_IN_PROGRESS' | 'ORDER_CONFIRMATION_PRINTED' | 'SHIPPED' | 'CLOSED' | 'CANCELLED';

/** `salesOrder`. Amounts euros (decimal strings): `netAmount` + `taxAmount` = `grossAmount`. */
export interface ErpSalesOrder {
  id: string;
  version: string;
  orderNumber: string;
  customerId: string;
  customerNumber?: string;
  status: ErpSalesOrderStatus | string;
  orderDate?: number;
  recordCurrencyName?: string;
  orderNumberAtCustomer?: string | null;
  commission?: string | null;
  deliveryAddress?: ErpRecordAddress | null;
  invoiceAddress?: ErpRecordAddress | null;
  orderItems: ErpRecordItem[];
  netAmount?: string;
  taxAmount?: string;
  grossAmount?: string;
  paid?: boolean;
  customAttributes?: ErpCustomAttribute[];
  lastModifiedDate: number;
}

/** A sales order to create (the customer by `customerId` or `customerNumber`). */
export interface NewErpSalesOrder {
  customerId?: string;
  customerNumber?: string;
  orderItems: NewErpRecordItem[];
  deliveryAddress?: ErpRecordAddress;
  invoiceAddress?: ErpRecordAddress;
  /** The buyer's own reference (a retailer's order number). */
  orderNumberAtCustomer?: string;
  commission?: string;
  recordCurrencyName?: string;
  /** Already paid (prepaid shop orders). */
  paid?: boolean;
  customAttributes?: ErpCustomAttribute[];
}

/** Writable sales order properties for `updateSalesOrder`. */
export type ErpSalesOrderChanges = Partial<Pick<ErpSalesOrder, 'status' | 'deliveryAddress' | 'invoiceAddress' | 'commission' | 'orderNumberAtCustomer' | 'paid' | 'customAttributes'>>;

/** `quotation`. */
export interface ErpQuotation {
  id: string;
  version: string;
  quotationNumber: string;
  customerId: string;
  customerNumber?: string;
  status: string;
  quotationDate?: number;
  commission?: string | null;
  quotationItems: ErpRecordItem[];
  netAmount?: string;
  taxAmount?: string;
  grossAmount?: string;
  customAttributes?: ErpCustomAttribute[];
  lastModifiedDate: number;
}

/** A quotation to create. */
export interface NewErpQuotation {
  customerId?: string;
  customerNumber?: string;
  quotationItems: NewErpRecordItem[];
  commission?: string;
  recordCurrencyName?: string;
  customAttributes?: ErpCustomAttribute[];
}

/** `salesInvoice`. `invoiceDate`: local midnight (Europe/Berlin) of the invoice date, epoch ms. */
export interface ErpSalesInvoice {
  id: string;
  version: string;
  invoiceNumber: string;
  invoiceDate: number;
  customerId: string;
  customerNumber?: string;
  salesOrderId?: string | null;
  status?: string;
  recordCurrencyName?: string;
  salesInvoiceItems?: ErpRecordItem[];
  netAmount: string;
  taxAmount?: string;
  grossAmount: string;
  lastModifiedDate: number;
}

/** Outcome of `ErpClient.ping`: never throws, reports. */
export interface ErpPingResult {
  system: ErpSystem;
  baseUrl: string;
  isReachable: boolean;
  /** HTTP status of the answer; null when none arrived. */
  httpStatus: number | null;
  latencyMs: number;
  /** Short, token-free description. */
  message: string;
}
