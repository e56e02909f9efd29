/**
 * Tables of the payment side. Mirrors migrations 0006, 0009 and 0013.
 */
import type { ColumnType, Generated } from 'kysely';

/** `payment_deliveries`: every payment-provider webhook delivery and what it led to. */
interface PaymentDeliveriesTable {
  id: Generated<number>;
  received_at: ColumnType<Date, Date | undefined, never>;
  content_type: string | null;
  /** `transaction.id` of the body (the only field used, to re-fetch the transaction). */
  transaction_id: number | null;
  /** `transaction.status` as the body claims it (informational only). */
  claimed_status: string | null;
  /** The status the provider reported when re-fetched. */
  provider_status: string | null;
  order_id: number | null;
  /**
   * `queued` (recorded, re-fetch not started; repeats merge into it), `fetching` (re-fetch started),
   * `merged` (a duplicate from before merging existed), `unknownTransaction` (the provider does not know it: forged or
   * foreign), `unknownOrder`, `amountMismatch:flagged` (another currency), `partialPayment:held`,
   * `excessPayment:flagged`, `testPayment:flagged`, `latePayment:refundNeeded`, `onHold:<status>`,
   * `refundRecorded:<total cents>`, `refundMismatch:flagged`, `applied:<from>-><to>`, `noChange:<state or reason>`
   * (docs/payrexx.md).
   */
  outcome: string;
  /** Further deliveries of the same transaction id and claimed status merged into this one while it was queued. */
  repeats: Generated<number>;
}

/** `payment_refunds`: a refund transaction of an order's paying transaction, recorded once. */
interface PaymentRefundsTable {
  /** The refund's own provider transaction id. */
  transaction_id: number;
  order_id: number;
  /** The charge it refunds (`originalTransactionId`). */
  original_transaction_id: number;
  /** Refunded amount, cents. */
  amount_cents: ColumnType<string, number, never>;
  currency: string;
  /** `refunded` or `partially-refunded` as the provider reported it. */
  status: string;
  /** The provider's `invoice.refundedAmount` (cents) on this refund: the charge's refunded total as it counts it; null when absent. */
  reported_refunded_cents: ColumnType<string | null, number | null | undefined, never>;
  recorded_at: ColumnType<Date, Date | undefined, never>;
}

/** `payment_receipts`: a confirmed charge of an order, recorded once (docs/payrexx.md "Payments of an order"). */
interface PaymentReceiptsTable {
  /** The charge's provider transaction id. */
  transaction_id: number;
  order_id: number;
  /** Charged amount, cents. */
  amount_cents: ColumnType<string, number, never>;
  currency: string;
  /** `TEST`/`LIVE` as the provider reported it; null when absent (and for receipts from before migration 0013). */
  mode: string | null;
  recorded_at: ColumnType<Date, Date | undefined, never>;
}

/** All payment tables. */
export interface PaymentTables {
  payment_deliveries: PaymentDeliveriesTable;
  payment_refunds: PaymentRefundsTable;
  payment_receipts: PaymentReceiptsTable;
}
