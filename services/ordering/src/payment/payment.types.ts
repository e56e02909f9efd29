/**
 * Types of the payment provider client (DESIGN §6 payment provider; issue 7). Two layers:
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
/** Transaction status as the provider reports it (spec `PaymentTransactionStatus`). */
export type PaymentTransactionStatus = components['schemas']['PaymentTransactionStatus'];
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
  description?: string;
  /** Purpose shown on statements. */
  purpose?: string;
  /** Payer e-mail to prefill. */
  email?: string;
  /** Where the payment page sends the payer after paying, failing or cancelling. */
  successUrl?: string;
  failedUrl?: string;
  cancelUrl?: string;
}

/** Payrexx envelope. */
export interface PayrexxEnvelope<T> {
  status: 'success' | 'error';
  data?: T[];
  message?: string;
}

/** Payrexx `Invoice` (paylink) or `Gateway` as sent. */
export interface PayrexxPaymentRequest {
  id: number;
  hash: string;
  link: string;
  status: string;
  referenceId?: string | null;
  title?: string | null;
  description?: string | null;
  purpose?: string | null;
  amount: number;
  currency: string;
  /** Unix seconds. */
  createdAt?: number;
}

/** Payrexx `Transaction` as sent. */
export interface PayrexxTransaction {
  id: number;
  uuid: string;
  time: string;
  status: string;
  psp?: string | null;
  referenceId?: string | null;
  amount: number;
  currency?: string;
  payment?: { brand?: string | null } | null;
  invoice?: { paymentRequestId?: number | null; referenceId?: string | null; amount?: number; currency?: string } | null;
}

/** Payrexx `Payout` as sent (list entry; the detail adds `transactions`). */
export interface PayrexxPayout {
  uuid: string;
  amount: number;
  fees: number;
  currency: string;
  status: string;
  date: string;
  statementDescriptor?: string | null;
  transactionCount?: number;
  transactions?: { id: number; uuid: string; referenceId?: string | null; time: string; amount: number; fee: number; currency?: string }[];
}

/** Outcome of `PaymentClient.ping`: never throws, reports. */
export interface PaymentPingResult {
  baseUrl: string;
  isReachable: boolean;
  httpStatus: number | null;
  latencyMs: number;
  message: string;
}
