/**
 * Tables of the payment side. Mirrors migration 0006.
 */
import type { ColumnType, Generated } from 'kysely';

/** `payment_deliveries`: every payment-provider webhook delivery and what it led to. */
export interface PaymentDeliveriesTable {
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
   * `queued` (recorded, re-fetch pending), `unknownTransaction` (the provider does not know it: forged or
   * foreign), `unknownOrder`, `amountMismatch`, `applied:<from>-><to>`, `noChange:<state>`.
   */
  outcome: string;
}

/** All payment tables. */
export interface PaymentTables {
  payment_deliveries: PaymentDeliveriesTable;
}
