/**
 * Types of the payment provider client (docs/payrexx.md). Two layers:
 * - the provider's wire shapes (Payrexx API v1: envelope `{ status, data: [...] }`, amounts in cents as
 *   `amount`, `createdAt` unix seconds, transaction `time` as `YYYY-MM-DD HH:MM:SS` UTC), and
 * - what the client returns: the spec's schemas (`PaymentPaylink`, `PaymentTransaction`, `PaymentPayout`,
 *   `PaymentPayoutDetails`; amounts `amountCents`, times ISO 8601 UTC), so the dev passthrough handlers
 *   answer them unchanged.
 */
import type { components } from '../generated/openapi';

/** A paylink (spec `PaymentPaylink`). */
export type PaymentPaylink = components['schemas']['PaymentPaylink'];
/** A transaction (spec `PaymentTransaction`). */
export type PaymentTransaction = components['schemas']['PaymentTransaction'];
/** A payout (spec `PaymentPayout`). */
export type PaymentPayout = components['schemas']['PaymentPayout'];
/** A payout with its transactions (spec `PaymentPayoutDetails`). */
export type PaymentPayoutDetails = components['schemas']['PaymentPayoutDetails'];

/** A paylink to create. Amount gross, integer cents. */
export interface NewPaylink {
  amountCents: number;
  /** ISO 4217, e.g. `EUR`. */
  currency: string;
  /** Passed back in transactions and webhooks; the order number for order paylinks. */
  referenceId?: string;
  title?: string;
  /** Shown on the payment page; required by the provider, so the title (else the reference) is sent when omitted. */
  description?: string;
  /** Purpose shown on statements. */
  purpose?: string;
  /** Payer e-mail to prefill (`fields[email][defaultValue]`, mandatory on the page). */
  email?: string;
  /** Where the payment page sends the payer after paying, failing or cancelling. */
  successUrl?: string;
  failedUrl?: string;
  cancelUrl?: string;
}

/** Payrexx envelope (see `payrexx-contract.ts` `envelopeOf`). */
export interface PayrexxEnvelope<T> {
  status: 'success' | 'error';
  data?: T[];
  message?: string;
}

/** Payrexx `Invoice` (paylink) or `Gateway` as answered (`payrexx-contract.ts` `InvoiceSchema`). */
export interface PayrexxPaymentRequest {
  id: number;
  hash: string;
  link: string;
  status: string;
  referenceId?: string | null;
  title?: string | null;
  description?: string | null;
  purpose?: string | null;
  amount: number | string;
  currency: string;
  /** Unix seconds. */
  createdAt?: number;
}

/** Payrexx `Transaction` as answered or carried by a webhook (`payrexx-contract.ts` `TransactionSchema`); form values are strings. */
export interface PayrexxTransaction {
  id: number | string;
  uuid: string;
  /** `YYYY-MM-DD HH:MM:SS` (UTC) or ISO 8601 with an offset. */
  time: string;
  status: string;
  psp?: string | null;
  referenceId?: string | null;
  /** Cents; for a refund transaction the refunded amount. */
  amount: number | string;
  currency?: string;
  originalTransactionId?: number | string | null;
  /** `TEST` or `LIVE` (`payrexx-contract.ts` `TransactionSchema`, from Payrexx's webhook "Transaction" page). */
  mode?: string | null;
  payment?: { brand?: string | null } | null;
  /** `refundedAmount`: cents refunded of the charge in total [DOC-WH changelog 2021-10-12]. */
  invoice?: { paymentRequestId?: number | string | null; referenceId?: string | null; currency?: string; refundedAmount?: number | string | null } | null;
}

/** A transfer of a payout (`payrexx-contract.ts` `TransferSchema`): signed cents. */
export interface PayrexxTransfer {
  type: string;
  amount: number;
  date_time: string;
  items: { type: string; amount: number }[];
  transaction?: { id: number; uuid: string; referenceId?: string | null; time?: string; amount?: number; currency?: string } | null;
}

/** Payrexx `Payout` as answered (`payrexx-contract.ts` `PayoutSchema`). */
export interface PayrexxPayout {
  uuid: string | number;
  amount: number;
  total_fees: number;
  currency: string;
  status: string;
  date: string;
  statement?: string | null;
  transfers?: PayrexxTransfer[];
  is_manual_payout?: boolean;
}

/** Outcome of `PaymentClient.ping`: never throws, reports. */
export interface PaymentPingResult {
  baseUrl: string;
  isReachable: boolean;
  httpStatus: number | null;
  latencyMs: number;
  message: string;
}
