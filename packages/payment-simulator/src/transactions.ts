/**
 * Transactions, refunds and payouts of the payment simulator, as Payrexx keeps them: a payment is one
 * transaction that goes `waiting` → `confirmed` (two webhooks); a refund is a NEW transaction (`refunded` or
 * `partially-refunded`, `originalTransactionId` = the charge, `amount` = the refunded amount; the charge stays
 * `confirmed`), one webhook; a payout pays out the open charges and refunds (`payouts.ts`), one payout webhook.
 * Refusals are {@link SimHttpError}s (404 unknown, 409 wrong status, 400 bad amount or status).
 */
import { SimHttpError } from '@sports-timing/shared/src/sim-server';
import { createHash } from 'node:crypto';
import type { IdAllocator } from './ids';
import { customFieldsOf, defaultContact, fee, payrexxTime } from './payrexx-format';
import { isOpenForPayout, makePayout } from './payouts';
import type { PaymentRequest, Payout, Transaction, TransactionContact, TransactionProduct, TransactionStatus } from './types';
import type { WebhookSender } from './webhooks';

/** What a new transaction is made of: the paylink (or the charge) it belongs to. */
interface TransactionSource {
  referenceId: string | null;
  amount: number;
  currency: string;
  paymentRequestId: number | null;
  email: string | null;
  title: string;
  products?: TransactionProduct[];
  contact?: TransactionContact | null;
}

/** Extras of a payment through `POST /__control/pay` (see the simulator's module comment). */
export interface PayExtras {
  products?: TransactionProduct[];
  contact?: TransactionContact;
  /** A bank transfer: the transaction stays `waiting`. */
  pending?: boolean;
  /** Another amount than asked, in cents. */
  amountCents?: number;
  mode?: 'TEST' | 'LIVE';
}

/** The `GET /Transaction/` query: paging, order and a time window (epoch ms, exclusive; null = open). */
export interface TransactionQuery {
  limit: number;
  offset: number;
  descending: boolean;
  after: number | null;
  before: number | null;
}

/** The simulator's transactions and payouts. */
export class Ledger {
  readonly transactions = new Map<number, Transaction>();
  readonly payouts = new Map<string, Payout>();
  /** Transaction id → time as epoch ms (for ordering and filters). */
  private readonly times = new Map<number, number>();

  constructor(
    private readonly ids: IdAllocator,
    private readonly webhooks: WebhookSender,
    private readonly instance: string,
    /** Minutes east of UTC of the times written. */
    private readonly offset: number,
  ) {}

  /** Forgets every transaction and payout. */
  clear(): void {
    this.transactions.clear();
    this.times.clear();
    this.payouts.clear();
  }

  /** The transactions of `q`, oldest first unless `descending` (ties by id). */
  list(q: TransactionQuery): Transaction[] {
    const at = (t: Transaction) => this.times.get(t.id)!;
    return [...this.transactions.values()]
      .filter((t) => (q.after === null || at(t) > q.after) && (q.before === null || at(t) < q.before))
      .sort((a, b) => (at(a) - at(b) || a.id - b.id) * (q.descending ? -1 : 1))
      .slice(q.offset, q.offset + q.limit);
  }

  /** Records a transaction of `status` at `opts.at` (default now); a refund copies brand, contact and products of `opts.original`. */
  record(
    src: TransactionSource,
    status: TransactionStatus,
    opts: { brand?: string; at?: number; original?: Transaction; mode?: 'TEST' | 'LIVE' } = {},
  ): Transaction {
    const id = this.ids.allocate('transaction');
    const at = opts.at ?? Date.now();
    const brand = opts.original?.payment.brand ?? opts.brand ?? 'visa';
    const contact = opts.original ? opts.original.contact : src.contact !== undefined ? src.contact : defaultContact(src.email, this.ids.contact());
    const products = opts.original
      ? opts.original.invoice.products
      : (src.products ?? [{ name: src.title, description: null, quantity: 1, amount: src.amount, sku: null, vatRate: null }]);
    const tx: Transaction = {
      id,
      uuid: createHash('sha256').update(`tx-${id}-${src.referenceId}`).digest('hex').slice(0, 8),
      time: payrexxTime(at, this.offset),
      status,
      lang: 'en',
      psp: 'Simulated PSP',
      pspId: 36,
      mode: opts.original?.mode ?? opts.mode ?? 'TEST',
      type: 'E-Commerce',
      referenceId: src.referenceId,
      amount: src.amount,
      refundable: !opts.original && status === 'confirmed',
      partiallyRefundable: !opts.original && status === 'confirmed',
      payrexxFee: opts.original ? 0 : fee(src.amount),
      pageUuid: null,
      payoutUuid: null,
      ...(opts.original ? { originalTransactionId: opts.original.id, originalTransactionUuid: opts.original.uuid } : {}),
      metadata: {},
      payment: { brand, cardNumber: brand === 'visa' || brand === 'mastercard' ? '424242XXXXXX4242' : '', expiry: null, wallet: null },
      invoice: {
        number: `${src.referenceId ?? id}`,
        paymentRequestId: src.paymentRequestId,
        referenceId: src.referenceId,
        currency: src.currency,
        originalAmount: opts.original?.amount ?? src.amount,
        refundedAmount: 0,
        test: (opts.original?.mode ?? opts.mode ?? 'TEST') === 'TEST',
        discount: null,
        shippingAmount: null,
        customFields: customFieldsOf(contact),
        products,
      },
      contact,
      subscription: null,
      instanceName: this.instance,
    };
    this.transactions.set(id, tx);
    this.times.set(id, at);
    return tx;
  }

  /** The cents refunded of `charge` so far. */
  private refundedOf(charge: Transaction): number {
    return [...this.transactions.values()].filter((t) => t.originalTransactionId === charge.id).reduce((s, t) => s + t.amount, 0);
  }

  /** The payer pays `request`: a transaction that is `waiting`, then `confirmed` — one webhook for each. */
  pay(request: PaymentRequest, paymentMethod = 'visa', extra: PayExtras = {}): Transaction {
    if (request.status !== 'waiting') throw new SimHttpError(409, `payment request ${request.id} is ${request.status}`);
    const email = request.fields.email?.defaultValue ?? null;
    const tx = this.record(
      {
        referenceId: request.referenceId,
        amount: extra.amountCents ?? request.amount,
        currency: request.currency,
        paymentRequestId: request.id,
        email,
        title: request.title,
        products: extra.products,
        contact: extra.contact,
      },
      'waiting',
      { brand: paymentMethod, mode: extra.mode },
    );
    const waiting = structuredClone(tx);
    if (extra.pending) {
      // A bank transfer or purchase on invoice: the money is on its way; `transaction-status` confirms it later.
      this.webhooks.sendTransactions([waiting]);
      return tx;
    }
    tx.status = 'confirmed';
    tx.refundable = true;
    tx.partiallyRefundable = true;
    request.status = 'confirmed';
    this.webhooks.sendTransactions([waiting, structuredClone(tx)]);
    return tx;
  }

  /** The payer aborts: a cancelled transaction, one webhook. */
  cancel(request: PaymentRequest): Transaction {
    if (request.status !== 'waiting') throw new SimHttpError(409, `payment request ${request.id} is ${request.status}`);
    const tx = this.record(
      {
        referenceId: request.referenceId,
        amount: request.amount,
        currency: request.currency,
        paymentRequestId: request.id,
        email: request.fields.email?.defaultValue ?? null,
        title: request.title,
      },
      'cancelled',
    );
    request.status = 'cancelled';
    this.webhooks.sendTransactions([structuredClone(tx)]);
    return tx;
  }

  /**
   * Refunds a confirmed charge fully or by `amountCents`: a new transaction (`refunded` when the charge is
   * now fully refunded, else `partially-refunded`) pointing at the charge; the charge keeps its status.
   */
  refund(transactionId: number, amountCents?: number): Transaction {
    const charge = this.transactions.get(transactionId);
    if (!charge) throw new SimHttpError(404, `No Transaction found with id ${transactionId}`);
    if (charge.status !== 'confirmed' || charge.originalTransactionId !== undefined)
      throw new SimHttpError(409, `transaction ${transactionId} is ${charge.status} and cannot be refunded`);
    const already = this.refundedOf(charge);
    const amount = amountCents ?? charge.amount - already;
    if (!Number.isInteger(amount) || amount <= 0 || already + amount > charge.amount) throw new SimHttpError(400, 'amountCents exceeds the refundable amount');
    const full = already + amount === charge.amount;
    const r = this.record(
      {
        referenceId: charge.referenceId,
        amount,
        currency: charge.invoice.currency,
        paymentRequestId: charge.invoice.paymentRequestId,
        email: null,
        title: charge.invoice.products[0]?.name ?? '',
      },
      full ? 'refunded' : 'partially-refunded',
      { original: charge },
    );
    r.invoice.refundedAmount = already + amount;
    charge.invoice.refundedAmount = already + amount;
    charge.refundable = !full;
    charge.partiallyRefundable = !full;
    this.webhooks.sendTransactions([structuredClone(r)]);
    return r;
  }

  /** Sets any status on a transaction (also one receivers do not know), one webhook. */
  setStatus(transactionId: number, status: string): Transaction {
    const tx = this.transactions.get(transactionId);
    if (!tx) throw new SimHttpError(404, `No Transaction found with id ${transactionId}`);
    if (!/^[a-z_-]{1,40}$/.test(status)) throw new SimHttpError(400, 'status: 1 to 40 of a-z, _ and -');
    tx.status = status;
    this.webhooks.sendTransactions([structuredClone(tx)]);
    return tx;
  }

  /**
   * Pays out every confirmed charge (gross minus fee) and refund (a reversal) not yet in a payout, dated
   * `date` (default today); sends a payout webhook. Null when there is nothing to pay out.
   */
  payout(date = new Date().toISOString().slice(0, 10)): Payout | null {
    const open = [...this.transactions.values()].filter(isOpenForPayout);
    if (open.length === 0) return null;
    const p = makePayout(open, date, (t) => payrexxTime(this.times.get(t.id)!, this.offset));
    this.payouts.set(p.uuid, p);
    this.webhooks.sendPayout(p);
    return p;
  }
}
