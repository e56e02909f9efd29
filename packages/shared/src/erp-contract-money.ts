/**
 * The money side of the ERP wire contract (part of `erp-contract.ts`, kept apart for its length): shipping cost
 * positions, currencies and taxes of weclapp, as the ERP client writes and reads them and the ERP simulator
 * serves them (docs/weclapp.md "Amounts"). Subsets of weclapp's generated types, proven at compile time below.
 */
import type { components } from './generated/weclapp-v1';

/**
 * A shipping cost position of a sales order (weclapp `salesOrderShippingCostItem`): a shipping article, its net
 * `unitPrice` (euros, decimal string, kept because `manualUnitPrice` is true) and its tax. weclapp answers
 * `netAmount`/`grossAmount` (read-only).
 */
export interface ErpShippingCostItem {
  id: string;
  articleId?: string;
  unitPrice?: string;
  manualUnitPrice: boolean;
  taxId: string;
  netAmount: string;
  grossAmount: string;
}

/** A shipping cost position to create (see {@link ErpShippingCostItem}). */
export interface NewErpShippingCostItem {
  articleId: string;
  unitPrice: string;
  manualUnitPrice: true;
  taxId: string;
}

/** weclapp `currency`: `name` is the ISO 4217 code (`EUR`), the id differs per tenant. */
export interface ErpCurrency {
  id: string;
  version: string;
  name: string;
  currencySymbol?: string;
  createdDate: number;
  lastModifiedDate: number;
}

/** weclapp `tax`: a tax with its rate `taxValue` (percent, decimal string); sales VAT is `taxType` VALUE_ADDED_TAX. */
export interface ErpTax {
  id: string;
  version: string;
  name: string;
  taxType: 'IMPORT_SALES_TAX' | 'INPUT_VAT' | 'INPUT_VAT_REVERSED' | 'VALUE_ADDED_TAX';
  taxValue: string;
  createdDate: number;
  lastModifiedDate: number;
}

/** Compile-time proof that the shapes above are subsets of weclapp's own types (see `erp-contract.ts`). */
type Subset<T extends U, U> = T;
type W = components['schemas'];
type _MoneyShapesAreWeclapps = [
  Subset<ErpShippingCostItem, W['salesOrderShippingCostItem']>,
  Subset<NewErpShippingCostItem, W['salesOrderShippingCostItem']>,
  Subset<ErpCurrency, W['currency']>,
  Subset<ErpTax, W['tax']>,
];
