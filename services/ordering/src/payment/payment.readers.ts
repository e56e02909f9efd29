/**
 * Readers of the payment provider's answers (docs/payrexx.md "Tolerant readers"): Payrexx wire shapes
 * (`payment.types.ts`) to the spec's schemas (amounts integer cents, times ISO 8601 UTC). A value in an
 * unexpected form throws {@link InvalidAnswer}; the list readers catch it per item, so one bad item is served
 * flagged (`readError`) and the others as they are.
 */
import { stringify } from 'csv-stringify/sync';
import { enumValues } from '@sports-timing/shared';
import type {
  PaymentPaylink,
  PaymentPayout,
  PaymentPayoutDetails,
  PaymentTransaction,
  PayrexxPaymentRequest,
  PayrexxPayout,
  PayrexxTransaction,
  PayrexxTransfer,
} from './payment.types';

const PAYLINK_STATUSES = enumValues<PaymentPaylink['status']>({
  waiting: true,
  authorized: true,
  reserved: true,
  confirmed: true,
  cancelled: true,
  declined: true,
  expired: true,
});

/** A value of an answer in a form the service cannot read. */
export class InvalidAnswer extends Error {}

function oneOf<T extends string>(values: readonly T[], v: unknown, what: string): T {
  if (typeof v === 'string' && (values as readonly string[]).includes(v)) return v as T;
  throw new InvalidAnswer(`unknown ${what} ${JSON.stringify(v)}`);
}

/** A status string as the provider sent it (unknown values kept: the provider adds statuses without notice). */
function statusText(v: unknown, what: string): string {
  if (typeof v === 'string' && v !== '' && v.length <= 40) return v;
  throw new InvalidAnswer(`${what} ${JSON.stringify(v)} is not a status`);
}

function cents(v: unknown, what: string): number {
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'string' && /^-?\d{1,15}$/.test(v)) return Number(v);
  throw new InvalidAnswer(`${what} is not an integer amount`);
}

function optionalInt(v: unknown): number | null {
  if (v === null || v === undefined || v === '') return null;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,10}$/.test(v) ? Number(v) : NaN;
  return Number.isSafeInteger(n) ? n : null;
}

/**
 * Provider time → ISO 8601 UTC with `Z`. `YYYY-MM-DD HH:MM:SS` without an offset is UTC; a time with an
 * offset (`2025-10-01T11:36:07+02:00`) is converted, keeping the instant (docs/payrexx.md, Times).
 */
function payrexxTimeToIso(v: unknown): string {
  const m = typeof v === 'string' ? /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.\d+)?(Z|[+-]\d{2}:?\d{2})?$/.exec(v) : null;
  if (!m) throw new InvalidAnswer(`transaction time ${JSON.stringify(v)} is not YYYY-MM-DD HH:MM:SS`);
  const offset = m[3] === undefined || m[3] === 'Z' ? 'Z' : m[3].includes(':') ? m[3] : `${m[3].slice(0, 3)}:${m[3].slice(3)}`;
  const t = new Date(`${m[1]}T${m[2]}${offset}`);
  if (Number.isNaN(t.getTime())) throw new InvalidAnswer(`transaction time ${JSON.stringify(v)} is not a valid time`);
  return `${t.toISOString().slice(0, 19)}Z`;
}

/** `YYYY-MM-DD HH:MM:SS` in UTC, the format of the `filterDatetimeUtc*` parameters. */
export function utcFilterTime(d: Date): string {
  return d.toISOString().slice(0, 19).replace('T', ' ');
}

/** A paylink (`Invoice`) or gateway as the spec's `PaymentPaylink`; throws {@link InvalidAnswer}. */
export function toPaylink(r: PayrexxPaymentRequest): PaymentPaylink {
  return {
    id: r.id,
    hash: r.hash,
    link: r.link,
    status: oneOf(PAYLINK_STATUSES, r.status, 'paylink status'),
    title: r.title ?? '',
    description: r.description ?? null,
    amountCents: cents(r.amount, 'amount'),
    currency: r.currency,
    referenceId: r.referenceId ?? null,
    purpose: r.purpose ?? null,
    createdAt: new Date((r.createdAt ?? 0) * 1000).toISOString(),
  };
}

/** `TEST`/`LIVE` as sent; null when absent; anything else is not read (the mode decides whether a payment counts). */
function modeOf(v: unknown): 'TEST' | 'LIVE' | null {
  if (v === null || v === undefined || v === '') return null;
  if (v === 'TEST' || v === 'LIVE') return v;
  throw new InvalidAnswer(`transaction mode ${JSON.stringify(v)} is neither TEST nor LIVE`);
}

/**
 * A provider transaction (API answer or webhook body) in the spec's shape; throws {@link InvalidAnswer}. Unknown
 * statuses are kept; a refund keeps its `originalTransactionId` and carries the refunded amount as `amountCents`;
 * `mode` and `invoice.refundedAmount` are read when present.
 */
export function toPaymentTransaction(t: PayrexxTransaction): PaymentTransaction {
  const id = optionalInt(t.id);
  if (id === null) throw new InvalidAnswer('transaction id is not an integer');
  const refunded = t.invoice?.refundedAmount;
  return {
    id,
    uuid: t.uuid,
    status: statusText(t.status, 'transaction status'),
    time: payrexxTimeToIso(t.time),
    referenceId: t.referenceId ?? t.invoice?.referenceId ?? null,
    amountCents: cents(t.amount, 'amount'),
    currency: t.currency ?? t.invoice?.currency ?? '',
    psp: t.psp ?? null,
    paymentMethod: t.payment?.brand || null,
    paylinkId: optionalInt(t.invoice?.paymentRequestId),
    originalTransactionId: optionalInt(t.originalTransactionId),
    mode: modeOf(t.mode),
    refundedAmountCents: refunded === null || refunded === undefined || refunded === '' ? null : cents(refunded, 'invoice.refundedAmount'),
  };
}

/**
 * A transaction of a list, read per item: one with a value in an unexpected form is served flagged
 * (`readError`; unreadable id, amount and time 0, status `unreadable`) instead of failing the list. A payment
 * among them is not lost: its webhook's re-fetch retries until the provider answers readably.
 */
export function toListedTransaction(t: PayrexxTransaction): PaymentTransaction {
  try {
    return toPaymentTransaction(t);
  } catch (err) {
    if (!(err instanceof InvalidAnswer)) throw err;
    const raw = t as unknown as Record<string, unknown>;
    const or = <T>(read: () => T, fallback: T): T => {
      try {
        return read();
      } catch {
        return fallback;
      }
    };
    return {
      id: optionalInt(raw.id) ?? 0,
      uuid: typeof raw.uuid === 'string' ? raw.uuid : '',
      status: or(() => statusText(raw.status, 'status'), 'unreadable'),
      time: or(() => payrexxTimeToIso(raw.time), new Date(0).toISOString().replace('.000', '')),
      referenceId: typeof raw.referenceId === 'string' ? raw.referenceId : null,
      amountCents: or(() => cents(raw.amount, 'amount'), 0),
      currency: typeof raw.currency === 'string' ? raw.currency : '',
      psp: typeof raw.psp === 'string' ? raw.psp : null,
      paymentMethod: null,
      paylinkId: null,
      originalTransactionId: optionalInt(raw.originalTransactionId),
      mode: or(() => modeOf(raw.mode), null),
      refundedAmountCents: null,
      readError: err.message.slice(0, 200),
    };
  }
}

const TRANSACTION_TRANSFERS = new Set(['transaction', 'transaction-reversal']);

function toPayout(p: PayrexxPayout): PaymentPayout & { date: string } {
  return {
    uuid: String(p.uuid),
    amountCents: cents(p.amount, 'amount'),
    feesCents: cents(p.total_fees, 'total_fees'),
    currency: p.currency,
    status: statusText(p.status, 'payout status'),
    date: p.date,
    transactionCount: (p.transfers ?? []).filter((t) => TRANSACTION_TRANSFERS.has(t.type)).length,
    statementDescriptor: p.statement ?? null,
    isManualPayout: p.is_manual_payout === true,
  };
}

/**
 * A payout of a list, read per item (docs/payrexx.md "Tolerant readers"): a value in an unexpected form flags
 * this payout (`readError`, unreadable amounts 0, an unreadable date null) instead of failing the whole list.
 */
export function toListedPayout(p: PayrexxPayout): PaymentPayout {
  try {
    return toPayout(p);
  } catch (err) {
    if (!(err instanceof InvalidAnswer)) throw err;
    const orZero = (v: unknown) => {
      try {
        return cents(v, 'amount');
      } catch {
        return 0;
      }
    };
    const raw = p as unknown as Record<string, unknown>;
    return {
      uuid: typeof raw.uuid === 'string' || typeof raw.uuid === 'number' ? String(raw.uuid) : '',
      amountCents: orZero(raw.amount),
      feesCents: orZero(raw.total_fees),
      currency: typeof raw.currency === 'string' ? raw.currency : '',
      status: typeof raw.status === 'string' && raw.status !== '' && raw.status.length <= 40 ? raw.status : 'unreadable',
      date: typeof raw.date === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(raw.date) ? raw.date : null,
      transactionCount: Array.isArray(raw.transfers)
        ? (raw.transfers as { type?: unknown }[]).filter((t) => typeof t?.type === 'string' && TRANSACTION_TRANSFERS.has(t.type)).length
        : 0,
      statementDescriptor: typeof raw.statement === 'string' ? raw.statement : null,
      isManualPayout: raw.is_manual_payout === true,
      readError: err.message.slice(0, 200),
    };
  }
}

/** A payout's transaction transfer: gross from the transfer's own item, fee from its fee items (both signed). */
function toPayoutTransaction(t: PayrexxTransfer, currency: string): PaymentPayoutDetails['transactions'][number] {
  const netAmountCents = cents(t.amount, 'transfer amount');
  if (t.items !== undefined && !Array.isArray(t.items)) throw new InvalidAnswer('transfer items is not a list');
  const feeCents = -(t.items ?? []).filter((i) => /fee/.test(i.type)).reduce((sum, i) => sum + cents(i.amount, 'fee'), 0);
  const tx = t.transaction ?? null;
  return {
    transferType: t.type,
    transactionId: tx?.id ?? 0,
    uuid: tx?.uuid ?? '',
    referenceId: tx?.referenceId ?? null,
    time: payrexxTimeToIso(tx?.time ?? t.date_time),
    amountCents: netAmountCents + feeCents,
    feeCents,
    netAmountCents,
    currency: tx?.currency ?? currency,
  };
}

/**
 * A payout with its transaction transfers (`Payout/{uuid}/details`); throws {@link InvalidAnswer} when the
 * payout's own values cannot be read. A transfer with a value in an unexpected form is served flagged
 * (`readError`, its amounts 0) and the other transfers as they are.
 */
export function toPayoutDetails(p: PayrexxPayout): PaymentPayoutDetails {
  return {
    ...toPayout(p),
    transactions: (p.transfers ?? [])
      .filter((t) => TRANSACTION_TRANSFERS.has(t.type))
      .map((t) => {
        try {
          return toPayoutTransaction(t, p.currency);
        } catch (err) {
          if (!(err instanceof InvalidAnswer)) throw err;
          const tx = (t.transaction ?? {}) as Record<string, unknown>;
          return {
            transferType: t.type,
            transactionId: optionalInt(tx.id) ?? 0,
            uuid: typeof tx.uuid === 'string' ? tx.uuid : '',
            referenceId: typeof tx.referenceId === 'string' ? tx.referenceId : null,
            time: new Date(0).toISOString().replace('.000', ''),
            amountCents: 0,
            feeCents: 0,
            netAmountCents: 0,
            currency: p.currency,
            readError: err.message.slice(0, 200),
          };
        }
      }),
  };
}

/**
 * The accounting CSV of a payout, built from its details (docs/payrexx.md, Payouts): one line per
 * transaction transfer, then a `total` line; amounts in currency units with two decimals.
 */
export function payoutAccountingCsv(p: PaymentPayoutDetails): string {
  const money = (c: number) => (c / 100).toFixed(2);
  const rows: (string | number)[][] = [
    ['payoutUuid', 'payoutDate', 'transferType', 'transactionId', 'transactionUuid', 'referenceId', 'time', 'amount', 'fee', 'net', 'currency'],
  ];
  for (const t of p.transactions)
    rows.push([
      p.uuid,
      p.date,
      t.transferType,
      t.transactionId,
      t.uuid,
      t.referenceId ?? '',
      t.time,
      money(t.amountCents),
      money(t.feeCents),
      money(t.netAmountCents),
      t.currency,
    ]);
  rows.push([p.uuid, p.date, 'total', '', '', '', '', money(p.amountCents + p.feesCents), money(p.feesCents), money(p.amountCents), p.currency]);
  // No formula escaping (unlike the catalogue export): reversals are negative numbers that must stay
  // numbers, and the text cells are our own order numbers and the provider's ids.
  return stringify(rows, { record_delimiter: '\r\n' });
}
