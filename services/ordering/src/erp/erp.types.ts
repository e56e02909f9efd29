/**
 * Client-side ERP types of the ordering service (docs/decisions.md §6 ERP; spec `ErpSystem`): tenants, the custom
 * attribute keys it relies on, writable change sets and the ping outcome. The wire types of the weclapp-style
 * REST API (v1) live in the shared contract `@sports-timing/shared/src/erp-contract` (and its `-documents` part; the ERP simulator
 * serves the same types) and are re-exported here; weclapp conventions (decimal strings, epoch ms) are
 * documented there.
 */
import type { ErpArticle } from '@sports-timing/shared/src/erp-contract';
import type { ErpSalesOrder } from '@sports-timing/shared/src/erp-contract-documents';
import type { components } from '../generated/openapi';

export type {
  ErpArticle,
  ErpArticlePrice,
  ErpPropertyTranslation,
  ErpSetSlotConfiguration,
  ErpCustomAttribute,
  ErpCustomAttributeDefinition,
  ErpCurrency,
  ErpCustomer,
  ErpTax,
} from '@sports-timing/shared/src/erp-contract';
export type {
  ErpQuotation,
  ErpRecordAddress,
  ErpRecordItem,
  ErpSalesInvoice,
  ErpSalesOrder,
  NewErpQuotation,
  NewErpRecordItem,
  NewErpSalesOrder,
} from '@sports-timing/shared/src/erp-contract-documents';
export { ERP_ATTRIBUTE_KEYS } from '@sports-timing/shared/src/erp-contract';

/** ERP tenant: `weclapp` (production) or `weclappSandbox` (spec `ErpSystem`). */
export type ErpSystem = components['schemas']['ErpSystem'];

/** Writable article properties for `updateArticle` (partial update). */
export type ErpArticleChanges = Partial<
  Pick<ErpArticle, 'name' | 'description' | 'active' | 'articlePrices' | 'customAttributes' | 'salesBillOfMaterialItems'>
>;

/** Writable sales order properties for `updateSalesOrder`. */
export type ErpSalesOrderChanges = Partial<
  Pick<ErpSalesOrder, 'status' | 'deliveryAddress' | 'invoiceAddress' | 'commission' | 'orderNumberAtCustomer' | 'customAttributes'>
>;

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
