/**
 * Entities of the ERP simulator as it stores and serves them. The shapes are the shared ERP wire contract
 * (`@sports-timing/shared/src/erp-contract`, also used by the ordering service's ERP client), re-exported
 * here under the simulator's short names.
 */
import type { ErpArticle as WireArticle, ErpCustomAttributeDefinition, ErpCurrency, ErpCustomer, ErpTax } from '@sports-timing/shared/src/erp-contract';
import type { ErpQuotation, ErpSalesInvoice, ErpSalesOrder } from '@sports-timing/shared/src/erp-contract-documents';

export type {
  ErpCustomAttribute as CustomAttributeValue,
  ErpCustomAttributeDefinition as CustomAttributeDefinition,
  ErpCustomer as Customer,
  /** @internal */ ErpListResponse,
  ErpShippingCostItem as ShippingCostItem,
} from '@sports-timing/shared/src/erp-contract';
export type {
  ErpQuotation as Quotation,
  ErpRecordAddress as RecordAddress,
  ErpRecordItem as RecordItem,
  ErpSalesInvoice as SalesInvoice,
  ErpSalesOrder as SalesOrder,
} from '@sports-timing/shared/src/erp-contract-documents';
export { ERP_SALES_ORDER_STATUSES as SALES_ORDER_STATUSES } from '@sports-timing/shared/src/erp-contract-documents';

/** An article's name and description in one locale (ISO 639-1), answered as property translations. */
interface ArticleTranslation {
  locale: string;
  name: string;
  description: string;
}

/** An article as the simulator stores it: weclapp's article plus its texts in the other languages (weclapp keeps those apart, under `/propertyTranslation`). */
export type Article = WireArticle & { translations?: ArticleTranslation[] };
type ErpArticle = Article;

/** Entity collections of one tenant, by weclapp entity name. */
export interface TenantData {
  article: Map<string, ErpArticle>;
  customer: Map<string, ErpCustomer>;
  salesOrder: Map<string, ErpSalesOrder>;
  quotation: Map<string, ErpQuotation>;
  salesInvoice: Map<string, ErpSalesInvoice>;
  customAttributeDefinition: Map<string, ErpCustomAttributeDefinition>;
  currency: Map<string, ErpCurrency>;
  tax: Map<string, ErpTax>;
}

/** Name of an entity collection. */
export type EntityName = keyof TenantData;

/** Error answer of the API: weclapp's `error` plus the RFC 7807 fields newer weclapp versions send. */
export interface ErpErrorBody {
  /** `/webapp/view/api/errors.html#<kind>`, e.g. `#optimistic_lock` on a stale `version`. */
  type: string;
  title: string;
  /** The HTTP status. */
  status: number;
  detail: string;
  error: string;
}

/** Answer of `GET /<entity>/count`: the number of entities matching the filters. @internal */
export interface ErpCountResponse {
  result: number;
}

/** One tenant in the control API's state: each entity collection as an array, its webhook subscriptions and API base URL. */
export type ErpTenantState = { [K in EntityName]: TenantData[K] extends Map<string, infer V> ? V[] : never } & { subscriptions: string[]; baseUrl: string };
