/**
 * Tables of the payment side. Mirrors migrations 0006 and 0009.
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
   * foreign), `unknownOrder`, `amountMismatch`, `applied:<from>-><to>`, `noChange:<state>`.
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
  recorded_at: ColumnType<Date, Date | undefined, never>;
}

/** All payment tables. */
export interface PaymentTables {
  payment_deliveries: PaymentDeliveriesTable;
  payment_refunds: PaymentRefundsTable;
}
