/**
 * The document side of the ERP wire contract (part of `erp-contract.ts`, kept apart by responsibility): sales
 * orders, quotations and sales invoices with their addresses and positions, as weclapp answers them and as the
 * ordering service's ERP client creates them (docs/weclapp.md). The conventions of `erp-contract.ts` apply
 * (decimal euro strings, epoch ms, no `null`). Subsets of weclapp's generated types, proven at compile time below.
 */
import type { components } from './generated/weclapp-v1';
import type { ErpCustomAttribute } from './erp-contract';
import type { ErpShippingCostItem, NewErpShippingCostItem } from './erp-contract-money';

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

/** Compile-time proof that the shapes above are subsets of weclapp's own types (see `erp-contract.ts`). */
type Subset<T extends U, U> = T;
type W = components['schemas'];
type _DocumentShapesAreWeclapps = [
  Subset<ErpRecordAddress, W['recordAddress']>,
  Subset<ErpSalesOrder, W['salesOrder']>,
  Subset<ErpRecordItem, W['salesOrderItem']>,
  Subset<ErpQuotation, W['quotation']>,
  Subset<ErpSalesInvoice, W['salesInvoice']>,
  Subset<NewErpSalesOrder, W['salesOrder']>,
  Subset<NewErpRecordItem, W['salesOrderItem']>,
  Subset<NewErpQuotation, W['quotation']>,
];
