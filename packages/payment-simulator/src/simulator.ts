/**
 * Payment provider simulator: the Payrexx REST v1 subset the ordering service uses, over real HTTP, in
 * memory, in the shapes and behaviours of the ordering service's Payrexx contract
 * (`services/ordering/src/payment/payrexx-contract.ts`, sources cited there; the contract tests hold
 * this simulator to it).
 *
 * API under `/api/v1`, header `X-API-KEY` and query `instance` (wrong key or instance → 401); answers in
 * Payrexx's envelope `{ "status": "success", "data": [ … ] }` (errors `{ "status": "error", "message" }`);
 * request bodies form-encoded with PHP bracket names (or JSON); trailing slashes optional:
 * - `GET /SignatureCheck/` — credentials check.
 * - `POST /Invoice/` (a paylink: `amount` cents, `currency`, `title`, `description` (required),
 *   `purpose`, `referenceId`, `successRedirectUrl`, `failedRedirectUrl`, `fields[<type>][defaultValue|mandatory|name]`),
 *   `GET /Invoice/{id}/`, `DELETE /Invoice/{id}/` (a paid one → 400).
 * - `POST /Gateway/`, `GET /Gateway/{id}/`, `DELETE /Gateway/{id}/` — checkout gateways.
 * - `GET /Transaction/{id}/`; `GET /Transaction/?limit&offset&orderByTime&filterDatetimeUtcGreaterThan&filterDatetimeUtcLessThan`
 *   (oldest first unless `orderByTime=DESC`; limit ≤ 100; no reference filter).
 * - `GET /Payout/`, `GET /Payout/{uuid}/`, `GET /Payout/{uuid}/details/` — payouts with `transfers[]`.
 * - `GET /pay/{hash}` and `POST /pay/{hash}` — the payment page a paylink's `link` points to.
 *
 * Behaviour as Payrexx's: a payment is one transaction that goes `waiting` → `confirmed` (two webhooks);
 * a refund is a NEW transaction (`refunded` or `partially-refunded`, `originalTransactionId` = the charge,
 * `amount` = the refunded amount; the charge stays `confirmed`), one webhook; a payout pays out the
 * confirmed charges minus fees and the refunds as reversals, and sends a payout webhook `{ payout }`.
 * Webhooks carry the full transaction (contact with billing and delivery address, invoice with custom
 * fields and products) as JSON `{ "transaction": {…} }` or form-encoded with bracket names
 * (`transaction[invoice][products][0][name]=…`); a delivery the receiver does not answer with 2xx is
 * retried (at most `webhookMaxAttempts` attempts, backoff `webhookBackoffMs` doubling). Chaos options
 * duplicate and reorder deliveries.
 *
 * Control API (loopback only), besides the fault injection of `@sports-timing/shared`'s `sim-server.ts`:
 * - `POST /__control/pay {invoiceId | gatewayId, paymentMethod?, products?, contact?, pending?, amountCents?, mode?}` — the payer pays
 *   (`pending: true`: by bank transfer, the transaction stays `waiting` until `transaction-status`; `amountCents`:
 *   another amount than asked, a partial or excess payment):
 *   a confirmed transaction, two webhooks. Answers `{ transaction }`; 409 when not `waiting`.
 * - `POST /__control/cancel {invoiceId | gatewayId}` — the payer aborts: a cancelled transaction, one webhook.
 * - `POST /__control/refund {transactionId, amountCents?}` — full or partial refund of a charge: a new
 *   refund transaction, one webhook. Answers `{ transaction }` (the refund).
 * - `POST /__control/transaction-status {transactionId, status}` — sets any status (also one the
 *   receiver does not know), one webhook.
 * - `POST /__control/subscribe {url, format?: 'json' | 'form'}`, `POST /__control/unsubscribe {url}`.
 * - `POST /__control/chaos {duplicate?: n, shuffle?: boolean}` — each later delivery is sent n extra
 *   times, and a batch is sent in a different order than it happened (`{}` turns chaos off).
 * - `POST /__control/config {webhookMaxAttempts?, webhookBackoffMs?}`.
 * - `POST /__control/payout` — pays out every confirmed charge and refund not yet in a payout.
 * - `GET /__control/deliveries` — every webhook attempt; `GET /__control/state` — everything.
 * - `POST /__control/reset` — back to the seed.
 */
import { parseBracketForm } from '@sports-timing/shared/src/bracket-form';
import { createHash, randomUUID } from 'node:crypto';
import { SimServer, jsonObject, postWebhook, withoutQuery, type SimRequest, type SimResponse } from '@sports-timing/shared/src/sim-server';
import type {
  PaymentRequest,
  PaymentRequestField,
  Payout,
  PayoutTransfer,
  Transaction,
  TransactionContact,
  TransactionProduct,
  TransactionStatus,
} from './types';

/** Development defaults (never a real instance's credentials). */
export const DEFAULT_INSTANCE = 'demo';
export const DEFAULT_API_KEY = 'dev-payment-api-key';

/** Options of {@link createPaymentSimulator}. */
export interface PaymentSimulatorOptions {
  port?: number;
  host?: string;
  instance?: string;
  apiKey?: string;
  /** Attempts per webhook delivery (first included); default 5. */
  webhookMaxAttempts?: number;
  /** Delay before the first retry in ms, doubled for each further one; default 2000. */
  webhookBackoffMs?: number;
  /** Deadline of one delivery attempt in ms; default 5000. */
  webhookTimeoutMs?: number;
  /** Offset of the times the simulator writes, in minutes east of UTC; default 60 (Payrexx is in Switzerland). */
  timeOffsetMinutes?: number;
  /**
   * Paylink, gateway and transaction ids never below the tenths of seconds since 2025-01-01 (a restarted
   * simulator keeps its data only in memory, so ids counted from a fixed start would repeat ids that a
   * running shop already stores); default false (fixed starts, for tests). `pnpm start` sets it.
   */
  idsFromTime?: boolean;
  log?: (line: string) => void;
  /** Token the control API (`/__control/…`) requires in `X-Control-Token`; absent → loopback clients only. */
  controlToken?: string;
}

/** 2025-01-01T00:00:00Z, epoch ms: the origin of time-derived ids. */
const ID_EPOCH_MS = Date.UTC(2025, 0, 1);

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

/** Answer of `POST /__control/pay`, `/__control/cancel`, `/__control/refund` and `/__control/transaction-status`. */
export interface PaymentTransactionAnswer {
  transaction: Transaction;
}

/** Answer of `POST /__control/payout`: the new payout; null when nothing was left to pay out. */
export interface PaymentPayoutAnswer {
  payout: Payout | null;
}

/** Answer of `GET /__control/deliveries`: every webhook attempt, oldest first. */
export interface PaymentDeliveriesAnswer {
  deliveries: PaymentWebhookDelivery[];
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const ok = (data: unknown[]): SimResponse => ({ status: 200, json: { status: 'success', data } });
const errorBody = (message: string) => ({ status: 'error', message });

/** ISO 8601 with a fixed offset of `offsetMinutes` (`2025-01-13T10:12:44+01:00`). */
function payrexxTime(ms: number, offsetMinutes: number): string {
  const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, 19);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** `YYYY-MM-DD HH:MM:SS` UTC (a `filterDatetimeUtc*` value) → epoch ms; NaN when malformed. */
function utcFilter(v: string): number {
  return /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(v) ? Date.parse(`${v.replace(' ', 'T')}Z`) : NaN;
}

/** Flattens an object to PHP form fields: `transaction[invoice][products][0][name]=…`; nulls are left out. */
function toFormFields(value: unknown, prefix: string, out: [string, string][] = []): [string, string][] {
  if (value === null || value === undefined) return out;
  if (typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) toFormFields(v, `${prefix}[${k}]`, out);
  } else {
    out.push([prefix, typeof value === 'boolean' ? (value ? '1' : '0') : `${value as string | number}`]);
  }
  return out;
}

/** Parses a form body with PHP bracket names (`fields[email][defaultValue]`) or a JSON body into an object. */
function bodyFields(req: SimRequest): Record<string, unknown> {
  const type = String(req.headers['content-type'] ?? '');
  return type.includes('application/x-www-form-urlencoded') ? parseBracketForm(req.body) : jsonObject(req.body);
}

function fee(amount: number): number {
  return Math.round(amount * 0.029) + 30;
}

/** A payer as the payment page collects them: billing and delivery address. */
function defaultContact(email: string | null, id: number): TransactionContact {
  const billing = {
    title: 'mister',
    firstname: 'Max',
    lastname: 'Muster',
    company: 'Muster Sport GmbH',
    street: 'Hauptstrasse 1',
    zip: '8000',
    place: 'Zürich',
    country: 'Switzerland',
    countryISO: 'CH',
  };
  return {
    id,
    uuid: createHash('sha256').update(`contact-${id}`).digest('hex').slice(0, 8),
    ...billing,
    phone: '+41 44 000 00 00',
    email,
    date_of_birth: '1980-01-01',
    ...Object.fromEntries(Object.entries(billing).map(([k, v]) => [`delivery_${k}`, v])),
  };
}

/** The page fields a payer filled in, as an invoice's `customFields` carries them. */
function customFieldsOf(contact: TransactionContact | null): Transaction['invoice']['customFields'] {
  const out: Transaction['invoice']['customFields'] = {};
  let i = 1;
  for (const [k, v] of Object.entries(contact ?? {})) if (k !== 'id' && k !== 'uuid' && v !== null) out[String(i++)] = { name: k, value: String(v) };
  return out;
}

/** The payment provider simulator. Create with {@link createPaymentSimulator}. */
export class PaymentSimulator {
  readonly server: SimServer;
  readonly deliveries: PaymentWebhookDelivery[] = [];
  readonly instance: string;
  readonly apiKey: string;
  private invoices = new Map<number, PaymentRequest>();
  private gateways = new Map<number, PaymentRequest>();
  private transactions = new Map<number, Transaction>();
  /** Transaction id → time as epoch ms (for ordering and filters). */
  private times = new Map<number, number>();
  private payouts = new Map<string, Payout>();
  private subscriptions = new Map<string, WebhookFormat>();
  private chaos = { duplicate: 0, shuffle: false };
  private webhookMaxAttempts: number;
  private webhookBackoffMs: number;
  private readonly webhookTimeoutMs: number;
  private readonly offset: number;
  private readonly pending = new Set<Promise<unknown>>();
  private nextId = { invoice: 0, gateway: 0, transaction: 0, delivery: 0, contact: 0 };
  private readonly log: (line: string) => void;

  constructor(private readonly options: PaymentSimulatorOptions = {}) {
    this.instance = options.instance ?? DEFAULT_INSTANCE;
    this.apiKey = options.apiKey ?? DEFAULT_API_KEY;
    this.webhookMaxAttempts = options.webhookMaxAttempts ?? 5;
    this.webhookBackoffMs = options.webhookBackoffMs ?? 2_000;
    this.webhookTimeoutMs = options.webhookTimeoutMs ?? 5_000;
    this.offset = options.timeOffsetMinutes ?? 60;
    this.log = options.log ?? (() => undefined);
    this.server = new SimServer({
      port: options.port ?? 0,
      host: options.host ?? '127.0.0.1',
      api: (req) => this.api(req),
      control: (req) => this.control(req),
      controlToken: options.controlToken,
      errorBody: (_status, message) => errorBody(message),
    });
    this.reset();
  }

  /** Starts listening. */
  async start(): Promise<this> {
    this.stopped = false;
    await this.server.start();
    return this;
  }

  /** Stops listening; pending webhook retries are abandoned after their current attempt. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.server.stop();
    await this.idle();
  }

  private stopped = false;

  get port(): number {
    return this.server.port;
  }

  /** Base URL of the API, e.g. `http://127.0.0.1:8091/api/v1`. */
  get baseUrl(): string {
    return `${this.server.origin}/api/v1`;
  }

  /** Resolves once no webhook delivery (or retry) is pending. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Back to the seed: payouts of early 2025 with their transactions; no paylinks, subscriptions or chaos. */
  reset(): void {
    this.invoices.clear();
    this.gateways.clear();
    this.transactions.clear();
    this.times.clear();
    this.payouts.clear();
    this.subscriptions.clear();
    this.chaos = { duplicate: 0, shuffle: false };
    this.deliveries.length = 0;
    this.nextId = { invoice: 100, gateway: 500, transaction: 1000, delivery: 0, contact: 3000 };
    this.webhookMaxAttempts = this.options.webhookMaxAttempts ?? 5;
    this.webhookBackoffMs = this.options.webhookBackoffMs ?? 2_000;
    this.server.clearFaults();
    const seed: { date: string; tx: { ref: string; amount: number; time: string; brand: string }[] }[] = [
      {
        date: '2025-01-20',
        tx: [
          { ref: 'ORD-2025-000101', amount: 5_991, time: '2025-01-13T09:12:44Z', brand: 'visa' },
          { ref: 'ORD-2025-000102', amount: 19_900, time: '2025-01-15T17:03:10Z', brand: 'mastercard' },
          { ref: 'ORD-2025-000103', amount: 6_300, time: '2025-01-16T08:45:00Z', brand: 'twint' },
        ],
      },
      {
        date: '2025-02-03',
        tx: [
          { ref: 'ORD-2025-000117', amount: 106_999, time: '2025-01-28T11:30:19Z', brand: 'visa' },
          { ref: 'ORD-2025-000121', amount: 3_990, time: '2025-01-31T23:59:58Z', brand: 'paypal' },
        ],
      },
    ];
    for (const p of seed) {
      for (const t of p.tx)
        this.newTransaction({ referenceId: t.ref, amount: t.amount, currency: 'EUR', paymentRequestId: null, email: null, title: t.ref }, 'confirmed', {
          brand: t.brand,
          at: Date.parse(t.time),
        });
      this.payout(p.date);
    }
  }

  /** Subscribes a webhook URL. */
  subscribe(url: string, format: WebhookFormat = 'json'): void {
    this.subscriptions.set(url, format);
  }

  /** Sets chaos: extra copies per delivery and reordering of each batch. */
  setChaos(chaos: { duplicate?: number; shuffle?: boolean }): void {
    this.chaos = { duplicate: Math.max(0, Math.min(20, chaos.duplicate ?? 0)), shuffle: chaos.shuffle ?? false };
  }

  /** Changes webhook retry settings. */
  configure(c: { webhookMaxAttempts?: number; webhookBackoffMs?: number }): void {
    if (c.webhookMaxAttempts !== undefined) this.webhookMaxAttempts = Math.max(1, Math.min(20, c.webhookMaxAttempts));
    if (c.webhookBackoffMs !== undefined) this.webhookBackoffMs = Math.max(0, c.webhookBackoffMs);
  }

  /** A paylink by id (tests). */
  invoice(id: number): PaymentRequest | undefined {
    return this.invoices.get(id);
  }

  /** A transaction by id (tests). */
  transaction(id: number): Transaction | undefined {
    return this.transactions.get(id);
  }

  /**
   * The next id of `kind`: one above the last, and with `idsFromTime` at least the tenths of seconds since
   * 2025 (fits PostgreSQL `integer` until 2031), so a restart does not hand out ids of an earlier run unless
   * that run made more than ten per second on average.
   */
  private allocate(kind: 'invoice' | 'gateway' | 'transaction'): number {
    const floor = this.options.idsFromTime ? Math.floor((Date.now() - ID_EPOCH_MS) / 100) : 0;
    this.nextId[kind] = Math.max(this.nextId[kind] + 1, floor);
    return this.nextId[kind];
  }

  // ───────────── payer actions ─────────────

  private requestFor(body: Record<string, unknown>): PaymentRequest {
    const invoiceId = Number(body.invoiceId);
    const gatewayId = Number(body.gatewayId);
    const r = body.invoiceId !== undefined ? this.invoices.get(invoiceId) : body.gatewayId !== undefined ? this.gateways.get(gatewayId) : undefined;
    if (!r) throw new HttpError(404, 'invoiceId or gatewayId of an existing paylink or gateway is required');
    return r;
  }

  private newTransaction(
    src: {
      referenceId: string | null;
      amount: number;
      currency: string;
      paymentRequestId: number | null;
      email: string | null;
      title: string;
      products?: TransactionProduct[];
      contact?: TransactionContact | null;
    },
    status: TransactionStatus,
    opts: { brand?: string; at?: number; original?: Transaction; mode?: 'TEST' | 'LIVE' } = {},
  ): Transaction {
    const id = this.allocate('transaction');
    const at = opts.at ?? Date.now();
    const brand = opts.original?.payment.brand ?? opts.brand ?? 'visa';
    const contact = opts.original ? opts.original.contact : src.contact !== undefined ? src.contact : defaultContact(src.email, ++this.nextId.contact);
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

  private refundedOf(charge: Transaction): number {
    return [...this.transactions.values()].filter((t) => t.originalTransactionId === charge.id).reduce((s, t) => s + t.amount, 0);
  }

  /** The payer pays `request`: a transaction that is `waiting`, then `confirmed` — one webhook for each. */
  pay(
    request: PaymentRequest,
    paymentMethod = 'visa',
    extra: { products?: TransactionProduct[]; contact?: TransactionContact; pending?: boolean; amountCents?: number; mode?: 'TEST' | 'LIVE' } = {},
  ): Transaction {
    if (request.status !== 'waiting') throw new HttpError(409, `payment request ${request.id} is ${request.status}`);
    const email = request.fields.email?.defaultValue ?? null;
    const tx = this.newTransaction(
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
      this.dispatchBatch([waiting]);
      return tx;
    }
    tx.status = 'confirmed';
    tx.refundable = true;
    tx.partiallyRefundable = true;
    request.status = 'confirmed';
    this.dispatchBatch([waiting, structuredClone(tx)]);
    return tx;
  }

  /** The payer aborts: a cancelled transaction, one webhook. */
  cancel(request: PaymentRequest): Transaction {
    if (request.status !== 'waiting') throw new HttpError(409, `payment request ${request.id} is ${request.status}`);
    const tx = this.newTransaction(
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
    this.dispatchBatch([structuredClone(tx)]);
    return tx;
  }

  /**
   * Refunds a confirmed charge fully or by `amountCents`: a new transaction (`refunded` when the charge is
   * now fully refunded, else `partially-refunded`) pointing at the charge; the charge keeps its status.
   */
  refund(transactionId: number, amountCents?: number): Transaction {
    const charge = this.transactions.get(transactionId);
    if (!charge) throw new HttpError(404, `No Transaction found with id ${transactionId}`);
    if (charge.status !== 'confirmed' || charge.originalTransactionId !== undefined)
      throw new HttpError(409, `transaction ${transactionId} is ${charge.status} and cannot be refunded`);
    const already = this.refundedOf(charge);
    const amount = amountCents ?? charge.amount - already;
    if (!Number.isInteger(amount) || amount <= 0 || already + amount > charge.amount) throw new HttpError(400, 'amountCents exceeds the refundable amount');
    const full = already + amount === charge.amount;
    const r = this.newTransaction(
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
    this.dispatchBatch([structuredClone(r)]);
    return r;
  }

  /** Sets any status on a transaction (also one receivers do not know), one webhook. */
  setStatus(transactionId: number, status: string): Transaction {
    const tx = this.transactions.get(transactionId);
    if (!tx) throw new HttpError(404, `No Transaction found with id ${transactionId}`);
    if (!/^[a-z_-]{1,40}$/.test(status)) throw new HttpError(400, 'status: 1 to 40 of a-z, _ and -');
    tx.status = status;
    this.dispatchBatch([structuredClone(tx)]);
    return tx;
  }

  /**
   * Pays out every confirmed charge (gross minus fee) and refund (a reversal) not yet in a payout, dated
   * `date` (default today); sends a payout webhook. Null when there is nothing to pay out.
   */
  payout(date = new Date().toISOString().slice(0, 10)): Payout | null {
    const open = [...this.transactions.values()].filter(
      (t) => t.payoutUuid === null && ((t.status === 'confirmed' && t.originalTransactionId === undefined) || t.originalTransactionId !== undefined),
    );
    if (open.length === 0) return null;
    const uuid = randomUUID().slice(0, 8);
    const transfers: PayoutTransfer[] = open.map((t) => {
      t.payoutUuid = uuid;
      const at = payrexxTime(this.times.get(t.id)!, this.offset);
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
    const p: Payout = {
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
    this.payouts.set(uuid, p);
    this.dispatchPayout(p);
    return p;
  }

  // ───────────── webhooks ─────────────

  private dispatchPayout(p: Payout): void {
    for (const [url, format] of this.subscriptions) this.track(this.deliver(url, format, { payout: p }, ++this.nextId.delivery));
  }

  private dispatchBatch(snapshots: Transaction[]): void {
    for (const [url, format] of this.subscriptions) {
      let items = snapshots.flatMap((s) => Array.from({ length: 1 + this.chaos.duplicate }, () => s));
      if (this.chaos.shuffle && items.length > 1) {
        const original = items.map((i) => i.status).join();
        do {
          for (let i = items.length - 1; i > 0; i--) {
            const j = Math.floor(Math.random() * (i + 1));
            [items[i], items[j]] = [items[j], items[i]];
          }
        } while (items.map((i) => i.status).join() === original && new Set(items.map((i) => i.status)).size > 1);
      }
      items = [...items];
      // Sent one after the other, like a provider's queue; retries run on their own schedule.
      this.track(
        (async () => {
          for (const snapshot of items) await this.deliver(url, format, { transaction: snapshot }, ++this.nextId.delivery);
        })(),
      );
    }
  }

  /** First attempt now; retries (if it failed) on their own schedule. */
  private async deliver(url: string, format: WebhookFormat, event: { transaction: Transaction } | { payout: Payout }, deliveryId: number): Promise<void> {
    if (!(await this.attempt(url, format, event, deliveryId, 1))) this.track(this.retry(url, format, event, deliveryId));
  }

  private track(p: Promise<unknown>): void {
    const tracked = p.finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }

  private async retry(url: string, format: WebhookFormat, event: { transaction: Transaction } | { payout: Payout }, deliveryId: number): Promise<void> {
    for (let attempt = 2; attempt <= this.webhookMaxAttempts && !this.stopped; attempt++) {
      await new Promise((r) => setTimeout(r, this.webhookBackoffMs * 2 ** (attempt - 2)));
      if (this.stopped) return;
      if (await this.attempt(url, format, event, deliveryId, attempt)) return;
    }
  }

  private async attempt(
    url: string,
    format: WebhookFormat,
    event: { transaction: Transaction } | { payout: Payout },
    deliveryId: number,
    attempt: number,
  ): Promise<boolean> {
    const [key, object] = 'transaction' in event ? (['transaction', event.transaction] as const) : (['payout', event.payout] as const);
    const fields = toFormFields(object, key);
    const body = format === 'json' ? JSON.stringify({ [key]: object }) : new URLSearchParams(fields).toString();
    const outcome = await postWebhook(url, body, format === 'json' ? 'application/json' : 'application/x-www-form-urlencoded', this.webhookTimeoutMs);
    const transactionId = 'transaction' in event ? event.transaction.id : null;
    this.deliveries.push({
      deliveryId,
      attempt,
      url,
      format,
      event: key,
      transactionId,
      transactionStatus: object.status,
      parameterCount: format === 'form' ? fields.length : Object.keys(object).length,
      body,
      ...outcome,
      at: new Date().toISOString(),
    });
    this.log(`webhook ${key} ${transactionId ?? object.uuid} ${object.status} (attempt ${attempt}) → ${withoutQuery(url)}: ${outcome.status ?? outcome.error}`);
    return outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
  }

  // ───────────── API ─────────────

  private createRequest(kind: 'invoice' | 'gateway', f: Record<string, unknown>): PaymentRequest {
    const amount = Number(f.amount);
    if (!Number.isInteger(amount) || amount < 1) throw new HttpError(400, 'amount: a positive integer (cents) is required');
    const currency = typeof f.currency === 'string' ? f.currency : '';
    if (!/^[A-Z]{3}$/.test(currency)) throw new HttpError(400, 'currency: an ISO 4217 code is required');
    const str = (k: string, max: number): string | null => {
      const v = f[k];
      if (v === undefined || v === null || v === '') return null;
      if (typeof v !== 'string' || v.length > max) throw new HttpError(400, `${k}: a string of at most ${max} characters is expected`);
      return v;
    };
    const description = str('description', 2000);
    if (kind === 'invoice' && description === null) throw new HttpError(400, 'description: required');
    const fields: Record<string, PaymentRequestField> = {};
    if (f.fields !== undefined) {
      if (typeof f.fields !== 'object' || f.fields === null) throw new HttpError(400, 'fields: an object of page fields is expected');
      for (const [type, def] of Object.entries(f.fields as Record<string, unknown>)) {
        if (typeof def !== 'object' || def === null) throw new HttpError(400, `fields[${type}]: an object is expected`);
        const d = def as Record<string, unknown>;
        // A paylink's field prefill is `defaultValue`; `value` is the Gateway's.
        const prefill = kind === 'invoice' ? d.defaultValue : d.value;
        fields[type] = {
          ...(typeof prefill === 'string' ? { defaultValue: prefill } : {}),
          ...(typeof d.mandatory === 'string' ? { mandatory: d.mandatory } : {}),
          ...(typeof d.name === 'string' ? { name: d.name } : {}),
        };
      }
    }
    const id = this.allocate(kind);
    const hash = createHash('sha256').update(`${kind}-${id}-${Date.now()}-${Math.random()}`).digest('hex').slice(0, 32);
    const r: PaymentRequest = {
      id,
      hash,
      link: `${this.server.origin}/pay/${hash}`,
      status: 'waiting',
      referenceId: str('referenceId', 255),
      title: str('title', 255) ?? 'Payment',
      description,
      purpose: str('purpose', 255),
      amount,
      currency,
      fields,
      successRedirectUrl: str('successRedirectUrl', 2000),
      failedRedirectUrl: str('failedRedirectUrl', 2000),
      cancelRedirectUrl: kind === 'gateway' ? str('cancelRedirectUrl', 2000) : null,
      createdAt: Math.floor(Date.now() / 1000),
    };
    (kind === 'invoice' ? this.invoices : this.gateways).set(id, r);
    return r;
  }

  /** A gateway as the API answers it: no title or description, page fields with `value`. */
  private gatewayAnswer(r: PaymentRequest): Record<string, unknown> {
    const { title: _title, description: _description, fields, ...rest } = r;
    const gatewayFields = Object.fromEntries(
      Object.entries(fields).map(([type, f]) => [
        type,
        { ...(f.defaultValue !== undefined ? { value: f.defaultValue } : {}), ...(f.name !== undefined ? { name: f.name } : {}) },
      ]),
    );
    return Object.fromEntries(Object.entries({ ...rest, fields: gatewayFields }).filter(([, v]) => v !== null));
  }

  /** A paylink as the API answers it (only the Invoice's own fields). */
  private invoiceAnswer(r: PaymentRequest): Record<string, unknown> {
    const { cancelRedirectUrl: _cancel, ...rest } = r;
    // Parameters not given are left out rather than null.
    return Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== null));
  }

  private async api(req: SimRequest): Promise<SimResponse> {
    const pay = /^\/pay\/([0-9a-f]+)$/.exec(req.path);
    if (pay) return this.payPage(req, pay[1]);
    const m = /^\/api\/v1\/(\w+)(?:\/([\w-]+))?(?:\/([\w-]+))?\/?$/.exec(req.path);
    if (!m) return { status: 404, json: errorBody(`no API at ${req.path}`) };
    if (req.headers['x-api-key'] !== this.apiKey) return { status: 401, json: errorBody('Authentication failed: invalid API key') };
    if (req.query.get('instance') !== this.instance) return { status: 401, json: errorBody('Authentication failed: no access to this instance') };
    try {
      return this.route(req, m[1], m[2], m[3]);
    } catch (err) {
      if (err instanceof HttpError) return { status: err.status, json: errorBody(err.message) };
      throw err;
    }
  }

  private route(req: SimRequest, resource: string, id: string | undefined, sub: string | undefined): SimResponse {
    const route = `${req.method} ${resource}${id === undefined ? '' : '/:id'}${sub === undefined ? '' : `/${sub}`}`;
    switch (route) {
      case 'GET SignatureCheck':
        return ok([{ id: 1 }]);
      case 'POST Invoice':
        return ok([this.invoiceAnswer(this.createRequest('invoice', bodyFields(req)))]);
      case 'POST Gateway':
        return ok([this.gatewayAnswer(this.createRequest('gateway', bodyFields(req)))]);
      case 'GET Invoice/:id':
      case 'GET Gateway/:id': {
        const r = (resource === 'Invoice' ? this.invoices : this.gateways).get(Number(id));
        if (!r) throw new HttpError(404, `No ${resource} found with id ${id}`);
        return ok([resource === 'Invoice' ? this.invoiceAnswer(r) : this.gatewayAnswer(r)]);
      }
      case 'DELETE Invoice/:id':
      case 'DELETE Gateway/:id': {
        const map = resource === 'Invoice' ? this.invoices : this.gateways;
        const r = map.get(Number(id));
        if (!r) throw new HttpError(404, `No ${resource} found with id ${id}`);
        if (r.status === 'confirmed') throw new HttpError(400, `${resource} ${id} is paid and cannot be deleted`);
        map.delete(r.id);
        return ok([{ id: r.id }]);
      }
      case 'GET Transaction/:id': {
        const tx = this.transactions.get(Number(id));
        if (!tx) throw new HttpError(404, `No Transaction found with id ${id}`);
        return ok([tx]);
      }
      case 'GET Transaction': {
        const q = req.query;
        const limit = Math.min(100, Math.max(1, Number(q.get('limit') ?? 100) || 100));
        const offset = Math.max(0, Number(q.get('offset') ?? 0) || 0);
        const order = q.get('orderByTime') ?? 'ASC';
        if (order !== 'ASC' && order !== 'DESC') throw new HttpError(400, 'orderByTime: ASC or DESC');
        const bound = (name: string): number | null => {
          const v = q.get(name);
          if (v === null) return null;
          const t = utcFilter(v);
          if (Number.isNaN(t)) throw new HttpError(400, `${name}: Y-m-d H:i:s (UTC) expected`);
          return t;
        };
        const after = bound('filterDatetimeUtcGreaterThan');
        const before = bound('filterDatetimeUtcLessThan');
        const at = (t: Transaction) => this.times.get(t.id)!;
        const all = [...this.transactions.values()]
          .filter((t) => (after === null || at(t) > after) && (before === null || at(t) < before))
          .sort((a, b) => (at(a) - at(b) || a.id - b.id) * (order === 'DESC' ? -1 : 1));
        return ok(all.slice(offset, offset + limit));
      }
      case 'GET Payout':
        return ok([...this.payouts.values()].sort((a, b) => b.date.localeCompare(a.date)));
      case 'GET Payout/:id':
      case 'GET Payout/:id/details': {
        const p = this.payouts.get(String(id));
        if (!p) throw new HttpError(404, `No Payout found with uuid ${id}`);
        return ok([p]);
      }
      default:
        throw new HttpError(404, `unknown endpoint ${req.method} ${req.path}`);
    }
  }

  private payPage(req: SimRequest, hash: string): SimResponse {
    const r = [...this.invoices.values(), ...this.gateways.values()].find((x) => x.hash === hash);
    if (!r) return { status: 404, text: 'Unknown payment link', contentType: 'text/plain;charset=UTF-8' };
    if (req.method === 'POST') {
      const action = new URLSearchParams(req.body).get('action');
      try {
        if (action === 'cancel') this.cancel(r);
        else this.pay(r);
      } catch (err) {
        if (err instanceof HttpError) return { status: err.status, text: err.message, contentType: 'text/plain;charset=UTF-8' };
        throw err;
      }
      const target = action === 'cancel' ? (r.cancelRedirectUrl ?? r.failedRedirectUrl) : r.successRedirectUrl;
      if (target) return { status: 303, headers: { location: target } };
    }
    const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
    const amount = `${(r.amount / 100).toFixed(2)} ${r.currency}`;
    const email = r.fields.email?.defaultValue;
    const form =
      r.status === 'waiting'
        ? `<form method="post">${email !== undefined ? `<p>E-mail: <input name="email" value="${esc(email)}"${r.fields.email?.mandatory === '1' ? ' required' : ''}></p>` : ''}<button name="action" value="pay">Pay ${esc(amount)}</button> <button name="action" value="cancel">Cancel</button></form>`
        : '';
    return {
      status: 200,
      contentType: 'text/html;charset=UTF-8',
      text: `<!doctype html><meta charset="utf-8"><title>${esc(r.title)}</title><h1>${esc(r.title)}</h1><p>${esc(r.description ?? '')}</p><p>${esc(amount)} · ${esc(r.referenceId ?? '')}</p><p>Status: <b>${esc(r.status)}</b> (simulated payment page)</p>${form}`,
    };
  }

  // ───────────── control ─────────────

  private async control(req: SimRequest): Promise<SimResponse> {
    try {
      const route = `${req.method} ${req.path}`;
      if (route === 'GET /__control/deliveries') return { status: 200, json: { deliveries: this.deliveries } };
      if (route === 'GET /__control/state') return { status: 200, json: this.state() };
      const body = jsonObject(req.body);
      switch (route) {
        case 'POST /__control/pay': {
          const products = Array.isArray(body.products) ? (body.products as TransactionProduct[]) : undefined;
          const contact = typeof body.contact === 'object' && body.contact !== null ? (body.contact as TransactionContact) : undefined;
          const amountCents = typeof body.amountCents === 'number' && Number.isInteger(body.amountCents) && body.amountCents > 0 ? body.amountCents : undefined;
          return {
            status: 200,
            json: {
              transaction: this.pay(this.requestFor(body), typeof body.paymentMethod === 'string' ? body.paymentMethod : 'visa', {
                products,
                contact,
                pending: body.pending === true,
                amountCents,
                mode: body.mode === 'LIVE' ? 'LIVE' : undefined,
              }),
            },
          };
        }
        case 'POST /__control/cancel':
          return { status: 200, json: { transaction: this.cancel(this.requestFor(body)) } };
        case 'POST /__control/refund':
          return {
            status: 200,
            json: { transaction: this.refund(Number(body.transactionId), body.amountCents === undefined ? undefined : Number(body.amountCents)) },
          };
        case 'POST /__control/transaction-status':
          return { status: 200, json: { transaction: this.setStatus(Number(body.transactionId), typeof body.status === 'string' ? body.status : '') } };
        case 'POST /__control/subscribe':
          if (typeof body.url !== 'string' || !/^https?:\/\//.test(body.url)) throw new HttpError(400, 'url: an http(s) URL is required');
          if (body.format !== undefined && body.format !== 'json' && body.format !== 'form') throw new HttpError(400, 'format: json or form');
          this.subscribe(body.url, body.format ?? 'json');
          return { status: 200, json: { subscriptions: Object.fromEntries(this.subscriptions) } };
        case 'POST /__control/unsubscribe':
          this.subscriptions.delete(String(body.url));
          return { status: 200, json: { subscriptions: Object.fromEntries(this.subscriptions) } };
        case 'POST /__control/chaos':
          this.setChaos({ duplicate: typeof body.duplicate === 'number' ? body.duplicate : 0, shuffle: body.shuffle === true });
          return { status: 200, json: { chaos: this.chaos } };
        case 'POST /__control/config':
          this.configure({
            webhookMaxAttempts: typeof body.webhookMaxAttempts === 'number' ? body.webhookMaxAttempts : undefined,
            webhookBackoffMs: typeof body.webhookBackoffMs === 'number' ? body.webhookBackoffMs : undefined,
          });
          return { status: 200, json: { webhookMaxAttempts: this.webhookMaxAttempts, webhookBackoffMs: this.webhookBackoffMs } };
        case 'POST /__control/payout':
          return { status: 200, json: { payout: this.payout() } };
        case 'POST /__control/reset':
          this.reset();
          return { status: 200, json: { ok: true } };
        default:
          throw new HttpError(404, `unknown control endpoint ${route}`);
      }
    } catch (err) {
      if (err instanceof HttpError) return { status: err.status, json: errorBody(err.message) };
      throw err;
    }
  }

  /** Everything, for assertions. */
  state(): Record<string, unknown> {
    return {
      instance: this.instance,
      invoices: [...this.invoices.values()],
      gateways: [...this.gateways.values()],
      transactions: [...this.transactions.values()],
      payouts: [...this.payouts.values()],
      subscriptions: Object.fromEntries(this.subscriptions),
      chaos: this.chaos,
      webhook: { maxAttempts: this.webhookMaxAttempts, backoffMs: this.webhookBackoffMs },
      deliveries: this.deliveries,
    };
  }
}

/** Creates a payment simulator (call `start()`; `stop()` in tests' afterAll). */
export function createPaymentSimulator(options: PaymentSimulatorOptions = {}): PaymentSimulator {
  return new PaymentSimulator(options);
}
