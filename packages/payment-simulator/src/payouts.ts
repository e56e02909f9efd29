/**
 * Payouts as Payrexx makes them: the confirmed charges (gross minus fee) and refunds (reversals) not yet paid
 * out become one payout with a transfer each (facts: `services/ordering/src/payment/payrexx-contract.ts`).
 */
import { randomUUID } from 'node:crypto';
import type { Payout, PayoutTransfer, Transaction } from './types';

/** Whether `t` belongs into the next payout: a confirmed charge or a refund, not yet paid out. */
export function isOpenForPayout(t: Transaction): boolean {
  return t.payoutUuid === null && ((t.status === 'confirmed' && t.originalTransactionId === undefined) || t.originalTransactionId !== undefined);
}

/**
 * The payout of `open` (non-empty) dated `date` (`YYYY-MM-DD`); marks each transaction as paid out.
 * `timeOf` writes a transaction's time as the transfer's `date_time`.
 */
export function makePayout(open: Transaction[], date: string, timeOf: (t: Transaction) => string): Payout {
  const uuid = randomUUID().slice(0, 8);
  const transfers: PayoutTransfer[] = open.map((t) => {
    t.payoutUuid = uuid;
    const at = timeOf(t);
    const transaction = {
      id: t.id,
      uuid: t.uuid,
      referenceId: t.referenceId,
      time: t.time,
      amount: t.amount,
      currency: t.invoice.currency,
      originalTransactionId: t.originalTransactionId ?? null,
    };
    if (t.originalTransactionId !== undefined)
      return { type: 'transaction-reversal', amount: -t.amount, date_time: at, items: [{ type: 'transaction-reversal', amount: -t.amount }], transaction };
    return {
      type: 'transaction',
      amount: t.amount - t.payrexxFee,
      date_time: at,
      items: [
        { type: 'transaction', amount: t.amount },
        { type: 'transaction-fee', amount: -t.payrexxFee },
      ],
      transaction,
    };
  });
  return {
    uuid,
    object: 'payout',
    mode: 'TEST',
    amount: transfers.reduce((s, t) => s + t.amount, 0),
    total_fees: open.reduce((s, t) => s + (t.originalTransactionId === undefined ? t.payrexxFee : 0), 0),
    currency: 'EUR',
    date,
    statement: `PAYREXX ${date.replace(/-/g, '')}`,
    status: 'sent',
    destination: { type: 'bank_account', iban: 'CH9300762011623852957', account_holder: 'Sports Timing AG' },
    transfers,
    merchant: null,
    is_manual_payout: false,
  };
}
