/**
 * Objects of the payment simulator in Payrexx API v1 shapes. Amounts are integer cents (`amount`),
 * currencies ISO 4217, `createdAt` unix seconds, transaction `time` `YYYY-MM-DD HH:MM:SS` in UTC.
 */

/** Status of a paylink or gateway. */
export type PaymentRequestStatus = 'waiting' | 'confirmed' | 'cancelled' | 'declined' | 'expired';

/** Status of a transaction (Payrexx names). */
export type TransactionStatus = 'waiting' | 'confirmed' | 'cancelled' | 'declined' | 'authorized' | 'reserved' | 'refunded' | 'partially-refunded' | 'chargeback' | 'error' | 'uncaptured';

/** A paylink (Payrexx `Invoice`) or a `Gateway`: something a payer pays once. */
export interface PaymentRequest {
  id: number;
  hash: string;
  /** Payment page URL. */
  link: string;
  status: PaymentRequestStatus;
  referenceId: string | null;
  title: string;
  description: string | null;
  purpose: string | null;
  /** Gross amount in cents. */
  amount: number;
  currency: string;
  email: string | null;
  successRedirectUrl: string | null;
  failedRedirectUrl: string | null;
  cancelRedirectUrl: string | null;
  /** Unix seconds. */
  createdAt: number;
}

/** A Payrexx transaction. */
export interface Transaction {
  id: number;
  uuid: string;
  /** `YYYY-MM-DD HH:MM:SS`, UTC. */
  time: string;
  status: TransactionStatus;
  lang: string;
  psp: string;
  pspId: number;
  mode: 'TEST' | 'LIVE';
  referenceId: string | null;
  /** Gross amount in cents. */
  amount: number;
  /** Amount refunded so far, in cents. */
  refundedAmount: number;
  currency: string;
  /** Provider fee in cents. */
  fee: number;
  payment: { brand: string; cardNumber: string };
  invoice: { paymentRequestId: number | null; referenceId: string | null; amount: number; currency: string; test: boolean };
  contact: { email: string | null };
  /** Payout that contains the transaction; null until paid out. */
  payoutUuid: string | null;
}

/** A payout: confirmed transactions minus fees, transferred to the merchant's bank account. */
export interface Payout {
  uuid: string;
  /** Amount paid out (after fees), cents. */
  amount: number;
  /** Fees deducted, cents. */
  fees: number;
  currency: string;
  status: 'open' | 'paid' | 'failed';
  /** `YYYY-MM-DD`. */
  date: string;
  statementDescriptor: string | null;
  transactionIds: number[];
}

/**
 * Payrexx's answer envelope: `data` holds the objects (a single one for a read, write or delete of one
 * object); an error carries only its `message`.
 */
export type PayrexxResponse<T> = { status: 'success'; data: T[] } | { status: 'error'; message: string };

/** A payout as `GET /Payout/` lists it: {@link Payout} with the number of its transactions instead of their ids. */
export interface PayoutSummary extends Omit<Payout, 'transactionIds'> {
  transactionCount: number;
}

/** A transaction in a payout's detail: gross `amount` and `fee` in cents. */
export type PayoutTransaction = Pick<Transaction, 'id' | 'uuid' | 'referenceId' | 'time' | 'amount' | 'fee' | 'currency'>;

/** A payout as `GET /Payout/{uuid}/` answers it: the summary with its transactions. */
export interface PayoutDetail extends PayoutSummary {
  transactions: PayoutTransaction[];
}

/** The transaction as a status webhook carries it: without the merchant-side `fee`, `refundedAmount` and `payoutUuid`. */
export type WebhookTransaction = Omit<Transaction, 'payoutUuid' | 'refundedAmount' | 'fee'>;
