/**
 * The ERP wire contract: entity types of the weclapp-style REST API (v1) as the ERP simulator
 * (`@sports-timing/erp-simulator`) serves them and the ordering service's ERP client reads and writes them
 * (docs/decisions.md §6 ERP). One definition for both sides, so the simulator cannot drift from what the client expects.
 * weclapp conventions: ids and `version` are strings; money amounts, prices and quantities are decimal strings
 * with a dot, in euros (`"50.34"`), net unless named gross; timestamps are epoch milliseconds (UTC instants);
 * document dates (`invoiceDate`, `orderDate`) are local midnight of the tenant's time zone (Europe/Berlin).
 * A real tenant's entities carry more properties than typed here; only the ones this product uses are listed.
 */

/** Value of a custom attribute on an entity; exactly one value field is set, by the definition's type. */
export interface ErpCustomAttribute {
  attributeDefinitionId: string;
  booleanValue?: boolean;
  /** Id of one of the definition's `selectableValues` (type LIST). */
  selectedValueId?: string;
  stringValue?: string;
}

/** Price of an article: `price` in `currencyName`, net, valid from `priceScaleValue` units. */
export interface ErpArticlePrice {
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
 * are this product's additions, kept on the slot so the shop can import a set in one read; the simulator always
 * sends them, a client must still read an absent one as false / only the default article / none.
 */
export interface ErpBomItem {
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
export interface ErpArticleTranslation {
  languageCode: string;
  name: string;
  description: string;
}

/** weclapp `article`. `name`/`description` are the English texts; `translations` holds the others. */
export interface ErpArticle {
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
  articlePrices: ErpArticlePrice[];
  customAttributes: ErpCustomAttribute[];
  salesBillOfMaterialItems: ErpBomItem[];
  translations: ErpArticleTranslation[];
  createdDate: number;
  lastModifiedDate: number;
}

/** Address of a party (weclapp `address`). */
export interface ErpPartyAddress {
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
export interface ErpCustomer {
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
  addresses: ErpPartyAddress[];
  customAttributes: ErpCustomAttribute[];
  createdDate: number;
  lastModifiedDate: number;
}

/** Address printed on a sales document (free text, not a party address). */
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

/** A position of a sales order, quotation or invoice. Amounts net, euros. */
export interface ErpRecordItem {
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

/**
 * Status of a weclapp sales order: weclapp's `orderStatusType` (its OpenAPI v1 description). There is no
 * "shipped" status: shipping is the read-only boolean `shipped` (set by the ERP when the delivery is booked).
 */
export type ErpSalesOrderStatus = 'ORDER_ENTRY_IN_PROGRESS' | 'ORDER_CONFIRMATION_PRINTED' | 'CLOSED' | 'MANUALLY_CLOSED' | 'CANCELLED';

/** Every sales order status, in process order. */
export const ERP_SALES_ORDER_STATUSES: readonly ErpSalesOrderStatus[] = ['ORDER_ENTRY_IN_PROGRESS', 'ORDER_CONFIRMATION_PRINTED', 'CLOSED', 'MANUALLY_CLOSED', 'CANCELLED'];

/** weclapp `salesOrder`. Amounts: decimal euro strings; `netAmount` + `taxAmount` = `grossAmount`. */
export interface ErpSalesOrder {
  id: string;
  version: string;
  orderNumber: string;
  customerId: string;
  customerNumber: string;
  status: ErpSalesOrderStatus;
  orderDate: number;
  recordCurrencyName: string;
  orderNumberAtCustomer: string | null;
  commission: string | null;
  deliveryAddress: ErpRecordAddress | null;
  invoiceAddress: ErpRecordAddress | null;
  orderItems: ErpRecordItem[];
  netAmount: string;
  taxAmount: string;
  grossAmount: string;
  /** Payment already received (prepaid shop orders), for the ERP's open-item handling. */
  paid: boolean;
  /** Read-only in weclapp: the goods have left (a shipment was booked). */
  shipped: boolean;
  /** Read-only in weclapp: a sales invoice was created for the order. */
  invoiced: boolean;
  customAttributes: ErpCustomAttribute[];
  createdDate: number;
  lastModifiedDate: number;
}

/** weclapp `quotation`. */
export interface ErpQuotation {
  id: string;
  version: string;
  quotationNumber: string;
  customerId: string;
  customerNumber: string;
  status: 'OPEN' | 'ACCEPTED' | 'REJECTED';
  quotationDate: number;
  recordCurrencyName: string;
  commission: string | null;
  quotationItems: ErpRecordItem[];
  netAmount: string;
  taxAmount: string;
  grossAmount: string;
  customAttributes: ErpCustomAttribute[];
  createdDate: number;
  lastModifiedDate: number;
}

/**
 * Status of a weclapp sales invoice (`salesInvoiceStatusType`): `NEW` is a draft, `DOCUMENT_CREATED` has its
 * document, `ENTRY_COMPLETED` is booked, `OPEN_ITEM_CREATED` is booked with its open item, `CANCELLED` is void.
 */
export type ErpSalesInvoiceStatus = 'NEW' | 'DOCUMENT_CREATED' | 'ENTRY_COMPLETED' | 'OPEN_ITEM_CREATED' | 'CANCELLED';

/**
 * weclapp `salesInvoice`. `invoiceDate` is local midnight (Europe/Berlin) of the invoice's date. Amounts are
 * read-only decimal euro strings; weclapp gives net and gross, no tax amount (tax = gross − net).
 */
export interface ErpSalesInvoice {
  id: string;
  version: string;
  invoiceNumber: string;
  invoiceDate: number;
  customerId: string;
  customerNumber: string;
  salesOrderId: string | null;
  status: ErpSalesInvoiceStatus;
  recordCurrencyName: string;
  salesInvoiceItems: ErpRecordItem[];
  netAmount: string;
  grossAmount: string;
  createdDate: number;
  lastModifiedDate: number;
}

/** weclapp `customAttributeDefinition`: `attributeKey` is the stable name clients look definitions up by. */
export interface ErpCustomAttributeDefinition {
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

/** A quotation to create. */
export interface NewErpQuotation {
  customerId?: string;
  customerNumber?: string;
  quotationItems: NewErpRecordItem[];
  commission?: string;
  recordCurrencyName?: string;
  customAttributes?: ErpCustomAttribute[];
}

/** Answer of a list read (`GET /<entity>`): one page of entities; of `GET /<entity>/count`: `result` is the count. */
export interface ErpListResponse<T> {
  result: T[];
}

/** Body of an ERP webhook call (weclapp, unsigned): which entity changed and how (`create` | `update` | `delete`). */
export interface ErpWebhookPayload {
  entityId: string;
  entityName: string;
  type: string;
}
