/**
 * The ERP wire contract: entity types of the weclapp-style REST API (v1) as the ERP simulator serves them and the
 * ordering service's ERP client reads and writes them (docs/decisions.md §6 ERP): one definition for both sides.
 * The shapes are subsets of weclapp's own description (vendored in `packages/shared/contracts/`, generated types
 * in `generated/weclapp-v1.ts`; docs/weclapp.md "Contract"); the documents (sales orders, quotations, invoices)
 * are in `erp-contract-documents.ts`, the money side in `erp-contract-money.ts`.
 * weclapp conventions: ids and `version` are strings; amounts, prices and quantities are decimal strings with a
 * dot, in euros (`"50.34"`), net unless named gross; timestamps are epoch ms (UTC); document dates (`invoiceDate`,
 * `orderDate`) are local midnight of the tenant's time zone (Europe/Berlin). weclapp never sends `null` (it
 * leaves empty properties out), so everything not always set is optional; only the properties used are listed.
 */
import type { components } from './generated/weclapp-v1';
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

/** Answer of a list read (`GET /<entity>`): one page of entities; of `GET /<entity>/count`: `result` is the count. @internal */
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
  Subset<ErpCustomAttributeDefinition, W['customAttributeDefinition']>,
  Subset<ErpCustomAttribute, W['customAttribute']>,
  Subset<ErpPropertyTranslation, W['propertyTranslation']>,
];
