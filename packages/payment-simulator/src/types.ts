/**
 * Objects of the payment simulator in Payrexx API v1 shapes (the ordering service's contract module
 * `services/ordering/src/payment/payrexx-contract.ts` holds the sources; the contract tests hold the
 * simulator to it). Amounts are integer cents (`amount`), currencies ISO 4217, `createdAt` unix seconds,
 * transaction times ISO 8601 with an offset (`2025-01-13T10:12:44+01:00`).
 */

/** Status of a paylink or gateway. */
type PaymentRequestStatus = 'waiting' | 'confirmed' | 'cancelled' | 'declined' | 'expired';

/**
 * Status of a transaction. Payrexx names; the simulator produces `waiting`, `confirmed`, `cancelled`,
 * `refunded`, `partially-refunded` and whatever `POST /__control/transaction-status` sets (any string,
 * to exercise statuses a receiver does not know).
 */
export type TransactionStatus = string;

/** A page field of a paylink: `fields[<type>][defaultValue|mandatory|name]`. */
export interface PaymentRequestField {
  defaultValue?: string;
  mandatory?: string;
  name?: string;
}

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
  /** Page fields as sent (`fields[email][defaultValue]` = the payer's e-mail prefill). */
  fields: Record<string, PaymentRequestField>;
  successRedirectUrl: string | null;
  failedRedirectUrl: string | null;
  cancelRedirectUrl: string | null;
  /** Unix seconds. */
  createdAt: number;
}

/** A product line of a transaction's invoice. */
export interface TransactionProduct {
  name: string;
  description: string | null;
  quantity: number;
  /** Unit price in cents. */
  amount: number;
  sku: string | null;
  vatRate: number | null;
}

/** The payer as the payment page collected them (billing and delivery). */
export type TransactionContact = Record<string, string | number | null>;

/**
 * A Payrexx transaction as the API answers it and a webhook carries it. A refund is a transaction of
 * its own: status `refunded`/`partially-refunded`, `originalTransactionId`/`Uuid` of the charge, the
 * refunded amount as `amount`.
 */
export interface Transaction {
  id: number;
  uuid: string;
  /** ISO 8601 with offset. */
  time: string;
  status: TransactionStatus;
  lang: string;
  psp: string;
  pspId: number;
  mode: 'TEST' | 'LIVE';
  type: string;
  referenceId: string | null;
  /** Cents: charged amount, or the refunded amount of a refund transaction. */
  amount: number;
  refundable: boolean;
  partiallyRefundable: boolean;
  /** Provider fee in cents. */
  payrexxFee: number;
  pageUuid: string | null;
  /** Payout that contains the transaction; null until paid out. */
  payoutUuid: string | null;
  originalTransactionId?: number;
  originalTransactionUuid?: string;
  metadata: Record<string, string>;
  payment: { brand: string; cardNumber: string; expiry: string | null; wallet: string | null };
  invoice: {
    number: string;
    paymentRequestId: number | null;
    referenceId: string | null;
    currency: string;
    originalAmount: number;
    /** Total refunded at the time of the snapshot. */
    refundedAmount: number;
    test: boolean;
    discount: null;
    shippingAmount: number | null;
    customFields: Record<string, { name: string; value: string }>;
    products: TransactionProduct[];
  };
  contact: TransactionContact | null;
  subscription: null;
  instanceName: string;
}

/** A transfer of a payout: signed cents, with its fee items. */
export interface PayoutTransfer {
  type: 'transaction' | 'transaction-reversal';
  amount: number;
  date_time: string;
  items: { type: string; amount: number }[];
  transaction: { id: number; uuid: string; referenceId: string | null; time: string; amount: number; currency: string; originalTransactionId: number | null };
}

/** A payout as `GET /Payout/`, `/Payout/{uuid}/` and `/Payout/{uuid}/details/` answer it. */
export interface Payout {
  uuid: string;
  object: 'payout';
  mode: 'TEST' | 'LIVE';
  /** Paid out (sum of the transfers), cents. */
  amount: number;
  /** Fees deducted, cents (positive). */
  total_fees: number;
  currency: string;
  /** `YYYY-MM-DD`. */
  date: string;
  statement: string;
  status: 'sent' | 'failed';
  destination: { type: string; iban: string; account_holder: string };
  transfers: PayoutTransfer[];
  merchant: null;
  is_manual_payout: boolean;
}

/**
 * Payrexx's answer envelope: `data` holds the objects (a single one for a read, write or delete of one
 * object); an error carries only its `message`.
 * @internal
 */
export type PayrexxResponse<T> = { status: 'success'; data: T[] } | { status: 'error'; message: string };

/** Body format of webhook deliveries. */
export type WebhookFormat = 'json' | 'form';

/** One webhook delivery attempt. */
export interface PaymentWebhookDelivery {
  /** Same for every attempt of one delivery. */
  deliveryId: number;
  attempt: number;
  url: string;
  format: WebhookFormat;
  /** `transaction` or `payout`. */
  event: 'transaction' | 'payout';
  /** Null for a payout event. */
  transactionId: number | null;
  /** The status the delivered payload carried (transaction or payout status). */
  transactionStatus: TransactionStatus | null;
  /** Number of form parameters (form format) or top-level JSON keys of the event object. */
  parameterCount: number;
  /** The body as sent. */
  body: string;
  /** Receiver's HTTP status, null when it did not answer. */
  status: number | null;
  error: string | null;
  at: string;
}

/** Answer of `POST /__control/pay`, `/__control/cancel`, `/__control/refund` and `/__control/transaction-status`. @internal */
export interface PaymentTransactionAnswer {
  transaction: Transaction;
}

/** Answer of `POST /__control/payout`: the new payout; null when nothing was left to pay out. @internal */
export interface PaymentPayoutAnswer {
  payout: Payout | null;
}

/** Answer of `GET /__control/deliveries`: every webhook attempt, oldest first. @internal */
export interface PaymentDeliveriesAnswer {
  deliveries: PaymentWebhookDelivery[];
}
