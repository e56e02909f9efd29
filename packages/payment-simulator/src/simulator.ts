/**
 * Payment provider simulator: a Payrexx-style REST v1 subset over real HTTP, in memory.
 *
 * API under `/api/v1`, header `X-API-KEY` and query `instance` (wrong key or instance → 401); answers in
 * Payrexx's envelope `{ "status": "success", "data": [ … ] }` (errors `{ "status": "error", "message" }`);
 * request bodies JSON or form-encoded; trailing slashes optional:
 * - `GET /SignatureCheck/` — credentials check.
 * - `POST /Invoice/` (a paylink: `amount` cents, `currency`, `title`, `description`, `purpose`,
 *   `referenceId`, `email`, `successRedirectUrl`, `failedRedirectUrl`, `cancelRedirectUrl`),
 *   `GET /Invoice/{id}/`, `DELETE /Invoice/{id}/` (a paid one → 400).
 * - `POST /Gateway/`, `GET /Gateway/{id}/`, `DELETE /Gateway/{id}/` — the same for checkout gateways.
 * - `GET /Transaction/{id}/`, `GET /Transaction/?limit&offset&referenceId` (newest first, limit ≤ 100).
 * - `GET /Payout/` (newest first), `GET /Payout/{uuid}/` (with its transactions),
 *   `GET /Payout/{uuid}/accounting-export` (CSV, UTF-8).
 * - `GET /pay/{hash}` and `POST /pay/{hash}` — the payment page a paylink's `link` points to.
 *
 * Status webhooks go to every subscription like Payrexx sends them: the transaction as JSON
 * `{ "transaction": {…} }` or form-encoded with bracket names (`transaction[id]=…&transaction[status]=…`);
 * a payment produces two deliveries (`waiting`, then `confirmed`), a cancel or refund one; a delivery the
 * receiver does not answer with 2xx is retried (at most `webhookMaxAttempts` attempts, backoff
 * `webhookBackoffMs` doubling). Chaos options duplicate and reorder deliveries.
 *
 * Control API (loopback only), besides the fault injection of the ERP simulator's `sim-server.ts`:
 * - `POST /__control/pay {invoiceId | gatewayId, paymentMethod?}` — the payer pays: a confirmed
 *   transaction, two webhooks. Answers `{ transaction }`; 409 when not `waiting`.
 * - `POST /__control/cancel {invoiceId | gatewayId}` — the payer aborts: a cancelled transaction, one webhook.
 * - `POST /__control/refund {transactionId, amountCents?}` — full or partial refund, one webhook.
 * - `POST /__control/subscribe {url, format?: 'json' | 'form'}`, `POST /__control/unsubscribe {url}`.
 * - `POST /__control/chaos {duplicate?: n, shuffle?: boolean}` — each later delivery is sent n extra
 *   times, and a batch is sent in a different order than it happened (`{}` turns chaos off).
 * - `POST /__control/config {webhookMaxAttempts?, webhookBackoffMs?}`.
 * - `POST /__control/payout` — pays out every confirmed transaction not yet in a payout.
 * - `GET /__control/deliveries` — every webhook attempt; `GET /__control/state` — everything.
 * - `POST /__control/reset` — back to the seed.
 */
import { createHash, randomUUID } from 'node:crypto';
import { SimServer, jsonObject, postWebhook, withoutQuery, type SimRequest, type SimResponse } from '@sports-timing/erp-simulator/src/sim-server';
import type { PaymentRequest, Payout, PayoutSummary, PayoutTransaction, Transaction, TransactionStatus, WebhookTransaction } from './types';

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
  log?: (line: string) => void;
}

/** Body format of webhook deliveries. */
export type WebhookFormat = 'json' | 'form';

/** One webhook delivery attempt. */
export interface PaymentWebhookDelivery {
  /** Same for every attempt of one delivery. */
  deliveryId: number;
  attempt: number;
  url: string;
  format: WebhookFormat;
  transactionId: number;
  /** The status the delivered payload carried. */
  transactionStatus: TransactionStatus;
  /** Receiver's HTTP status, null when it did not answer. */
  status: number | null;
  error: string | null;
  at: string;
}

/** Answer of `POST /__control/pay`, `/__control/cancel` and `/__control/refund`: the transaction as it is now. */
export interface PaymentTransactionAnswer {
  transaction: Transaction;
}

/** Answer of `POST /__control/payout`: the new payout; null when no confirmed transaction was left to pay out. */
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

/** `YYYY-MM-DD HH:MM:SS` (UTC) of an instant. */
function payrexxTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

/** Flattens an object to Payrexx/PHP form fields: `transaction[invoice][amount]=…`; nulls are left out. */
export function toFormFields(value: unknown, prefix: string, out: [string, string][] = []): [string, string][] {
  if (value === null || value === undefined) return out;
  if (typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) toFormFields(v, `${prefix}[${k}]`, out);
  } else {
    out.push([prefix, typeof value === 'boolean' ? (value ? '1' : '0') : String(value)]);
  }
  return out;
}

/** Parses a JSON or form body into a flat object (form `fields[email][value]` → `email`). */
function bodyFields(req: SimRequest): Record<string, unknown> {
  const type = String(req.headers['content-type'] ?? '');
  if (type.includes('application/x-www-form-urlencoded')) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of new URLSearchParams(req.body)) {
      const field = /^fields\[(\w+)\]\[value\]$/.exec(k);
      out[field ? field[1]! : k] = v;
    }
    return out;
  }
  return jsonObject(req.body);
}

function fee(amount: number): number {
  return Math.round(amount * 0.029) + 30;
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
  private payouts = new Map<string, Payout>();
  private subscriptions = new Map<string, WebhookFormat>();
  private chaos = { duplicate: 0, shuffle: false };
  private webhookMaxAttempts: number;
  private webhookBackoffMs: number;
  private readonly webhookTimeoutMs: number;
  private readonly pending = new Set<Promise<unknown>>();
  private nextId = { invoice: 0, gateway: 0, transaction: 0, delivery: 0 };
  private readonly log: (line: string) => void;

  constructor(private readonly options: PaymentSimulatorOptions = {}) {
    this.instance = options.instance ?? DEFAULT_INSTANCE;
    this.apiKey = options.apiKey ?? DEFAULT_API_KEY;
    this.webhookMaxAttempts = options.webhookMaxAttempts ?? 5;
    this.webhookBackoffMs = options.webhookBackoffMs ?? 2_000;
    this.webhookTimeoutMs = options.webhookTimeoutMs ?? 5_000;
    this.log = options.log ?? (() => undefined);
    this.server = new SimServer({
      port: options.port ?? 0,
      host: options.host ?? '127.0.0.1',
      api: (req) => this.api(req),
      control: (req) => this.control(req),
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
    this.payouts.clear();
    this.subscriptions.clear();
    this.chaos = { duplicate: 0, shuffle: false };
    this.deliveries.length = 0;
    this.nextId = { invoice: 100, gateway: 500, transaction: 1000, delivery: 0 };
    this.webhookMaxAttempts = this.options.webhookMaxAttempts ?? 5;
    this.webhookBackoffMs = this.options.webhookBackoffMs ?? 2_000;
    this.server.clearFaults();
    const seed: { uuid: string; date: string; tx: { ref: string; amount: number; time: string; brand: string }[] }[] = [
      {
        uuid: '0c5f7e0a-5b6e-4d1e-9f59-2a1a3c1e2001',
        date: '2025-01-20',
        tx: [
          { ref: 'ORD-2025-000101', amount: 5_991, time: '2025-01-13 09:12:44', brand: 'visa' },
          { ref: 'ORD-2025-000102', amount: 19_900, time: '2025-01-15 17:03:10', brand: 'mastercard' },
          { ref: 'ORD-2025-000103', amount: 6_300, time: '2025-01-16 08:45:00', brand: 'twint' },
        ],
      },
      {
        uuid: '0c5f7e0a-5b6e-4d1e-9f59-2a1a3c1e2002',
        date: '2025-02-03',
        tx: [
          { ref: 'ORD-2025-000117', amount: 106_999, time: '2025-01-28 11:30:19', brand: 'visa' },
          { ref: 'ORD-2025-000121', amount: 3_990, time: '2025-01-31 23:59:58', brand: 'paypal' },
        ],
      },
    ];
    for (const p of seed) {
      const ids = p.tx.map((t) => {
        const tx = this.newTransaction({ referenceId: t.ref, amount: t.amount, currency: 'EUR', paymentRequestId: null, email: null }, 'confirmed', t.brand);
        tx.time = t.time;
        tx.payoutUuid = p.uuid;
        return tx.id;
      });
      const txs = ids.map((id) => this.transactions.get(id)!);
      const fees = txs.reduce((s, t) => s + t.fee, 0);
      this.payouts.set(p.uuid, { uuid: p.uuid, amount: txs.reduce((s, t) => s + t.amount, 0) - fees, fees, currency: 'EUR', status: 'paid', date: p.date, statementDescriptor: `PAYREXX ${p.date.replace(/-/g, '')}`, transactionIds: ids });
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

  // ───────────── payer actions ─────────────

  private requestFor(body: Record<string, unknown>): PaymentRequest {
    const invoiceId = Number(body.invoiceId);
    const gatewayId = Number(body.gatewayId);
    const r = body.invoiceId !== undefined ? this.invoices.get(invoiceId) : body.gatewayId !== undefined ? this.gateways.get(gatewayId) : undefined;
    if (!r) throw new HttpError(404, 'invoiceId or gatewayId of an existing paylink or gateway is required');
    return r;
  }

  private newTransaction(src: { referenceId: string | null; amount: number; currency: string; paymentRequestId: number | null; email: string | null }, status: TransactionStatus, brand = 'visa'): Transaction {
    const id = ++this.nextId.transaction;
    const tx: Transaction = {
      id,
      uuid: createHash('sha256').update(`tx-${id}-${src.referenceId}`).digest('hex').slice(0, 8),
      time: payrexxTime(Date.now()),
      status,
      lang: 'en',
      psp: 'Simulated PSP',
      pspId: 36,
      mode: 'TEST',
      referenceId: src.referenceId,
      amount: src.amount,
      refundedAmount: 0,
      currency: src.currency,
      fee: fee(src.amount),
      payment: { brand, cardNumber: brand === 'visa' || brand === 'mastercard' ? '424242XXXXXX4242' : '' },
      invoice: { paymentRequestId: src.paymentRequestId, referenceId: src.referenceId, amount: src.amount, currency: src.currency, test: true },
      contact: { email: src.email },
      payoutUuid: null,
    };
    this.transactions.set(id, tx);
    return tx;
  }

  /** The payer pays `request`: a transaction that is `waiting`, then `confirmed` — one webhook for each. */
  pay(request: PaymentRequest, paymentMethod = 'visa'): Transaction {
    if (request.status !== 'waiting') throw new HttpError(409, `payment request ${request.id} is ${request.status}`);
    const tx = this.newTransaction({ referenceId: request.referenceId, amount: request.amount, currency: request.currency, paymentRequestId: request.id, email: request.email }, 'waiting', paymentMethod);
    const waiting = { ...tx };
    tx.status = 'confirmed';
    request.status = 'confirmed';
    this.dispatchBatch([waiting, { ...tx }]);
    return tx;
  }

  /** The payer aborts: a cancelled transaction, one webhook. */
  cancel(request: PaymentRequest): Transaction {
    if (request.status !== 'waiting') throw new HttpError(409, `payment request ${request.id} is ${request.status}`);
    const tx = this.newTransaction({ referenceId: request.referenceId, amount: request.amount, currency: request.currency, paymentRequestId: request.id, email: request.email }, 'cancelled');
    request.status = 'cancelled';
    this.dispatchBatch([{ ...tx }]);
    return tx;
  }

  /** Refunds a confirmed transaction fully or by `amountCents`, one webhook. */
  refund(transactionId: number, amountCents?: number): Transaction {
    const tx = this.transactions.get(transactionId);
    if (!tx) throw new HttpError(404, `No Transaction found with id ${transactionId}`);
    if (tx.status !== 'confirmed' && tx.status !== 'partially-refunded') throw new HttpError(409, `transaction ${transactionId} is ${tx.status}`);
    const amount = amountCents ?? tx.amount - tx.refundedAmount;
    if (!Number.isInteger(amount) || amount <= 0 || tx.refundedAmount + amount > tx.amount) throw new HttpError(400, 'amountCents exceeds the refundable amount');
    tx.refundedAmount += amount;
    tx.status = tx.refundedAmount === tx.amount ? 'refunded' : 'partially-refunded';
    this.dispatchBatch([{ ...tx }]);
    return tx;
  }

  /** Pays out every confirmed transaction not yet in a payout; null when there is none. */
  payout(): Payout | null {
    const txs = [...this.transactions.values()].filter((t) => t.status === 'confirmed' && t.payoutUuid === null);
    if (txs.length === 0) return null;
    const uuid = randomUUID();
    const fees = txs.reduce((s, t) => s + t.fee, 0);
    const date = new Date().toISOString().slice(0, 10);
    for (const t of txs) t.payoutUuid = uuid;
    const p: Payout = { uuid, amount: txs.reduce((s, t) => s + t.amount, 0) - fees, fees, currency: 'EUR', status: 'paid', date, statementDescriptor: `PAYREXX ${date.replace(/-/g, '')}`, transactionIds: txs.map((t) => t.id) };
    this.payouts.set(uuid, p);
    return p;
  }

  // ───────────── webhooks ─────────────

  /** The transaction as a webhook carries it. */
  private webhookTransaction(tx: Transaction): WebhookTransaction {
    const { payoutUuid: _payout, refundedAmount: _refunded, fee: _fee, ...rest } = tx;
    return rest;
  }

  private dispatchBatch(snapshots: Transaction[]): void {
    for (const [url, format] of this.subscriptions) {
      let items = snapshots.flatMap((s) => Array.from({ length: 1 + this.chaos.duplicate }, () => s));
      if (this.chaos.shuffle && items.length > 1) {
        const original = items.map((i) => i.status).join();
        do {
          for (let i = items.length - 1; i > 0; i--) {
            const j = Math.floor(Math.random() * (i + 1));
            [items[i], items[j]] = [items[j]!, items[i]!];
          }
        } while (items.map((i) => i.status).join() === original && new Set(items.map((i) => i.status)).size > 1);
      }
      items = [...items];
      const run = (async () => {
        // Sent one after the other, like a provider's queue; retries run on their own schedule.
        for (const snapshot of items) {
          const deliveryId = ++this.nextId.delivery;
          const ok = await this.attempt(url, format, snapshot, deliveryId, 1);
          if (!ok) this.track(this.retry(url, format, snapshot, deliveryId));
        }
      })();
      this.track(run);
    }
  }

  private track(p: Promise<unknown>): void {
    const tracked = p.finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }

  private async retry(url: string, format: WebhookFormat, snapshot: Transaction, deliveryId: number): Promise<void> {
    for (let attempt = 2; attempt <= this.webhookMaxAttempts && !this.stopped; attempt++) {
      await new Promise((r) => setTimeout(r, this.webhookBackoffMs * 2 ** (attempt - 2)));
      if (this.stopped) return;
      if (await this.attempt(url, format, snapshot, deliveryId, attempt)) return;
    }
  }

  private async attempt(url: string, format: WebhookFormat, snapshot: Transaction, deliveryId: number, attempt: number): Promise<boolean> {
    const transaction = this.webhookTransaction(snapshot);
    const body = format === 'json' ? JSON.stringify({ transaction }) : new URLSearchParams(toFormFields(transaction, 'transaction')).toString();
    const outcome = await postWebhook(url, body, format === 'json' ? 'application/json' : 'application/x-www-form-urlencoded', this.webhookTimeoutMs);
    this.deliveries.push({ deliveryId, attempt, url, format, transactionId: snapshot.id, transactionStatus: snapshot.status, ...outcome, at: new Date().toISOString() });
    this.log(`webhook transaction ${snapshot.id} ${snapshot.status} (attempt ${attempt}) → ${withoutQuery(url)}: ${outcome.status ?? outcome.error}`);
    return outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
  }

  // ───────────── API ─────────────

  private createRequest(kind: 'invoice' | 'gateway', f: Record<string, unknown>): PaymentRequest {
    const amount = Number(f.amount);
    if (!Number.isInteger(amount) || amount < 1) throw new HttpError(400, 'amount: a positive integer (cents) is required');
    const currency = String(f.currency ?? '');
    if (!/^[A-Z]{3}$/.test(currency)) throw new HttpError(400, 'currency: an ISO 4217 code is required');
    const str = (k: string, max: number): string | null => {
      const v = f[k];
      if (v === undefined || v === null || v === '') return null;
      if (typeof v !== 'string' || v.length > max) throw new HttpError(400, `${k}: a string of at most ${max} characters is expected`);
      return v;
    };
    const id = kind === 'invoice' ? ++this.nextId.invoice : ++this.nextId.gateway;
    const hash = createHash('sha256').update(`${kind}-${id}-${Date.now()}-${Math.random()}`).digest('hex').slice(0, 32);
    const r: PaymentRequest = {
      id,
      hash,
      link: `${this.server.origin}/pay/${hash}`,
      status: 'waiting',
      referenceId: str('referenceId', 255),
      title: str('title', 255) ?? 'Payment',
      description: str('description', 2000),
      purpose: str('purpose', 255),
      amount,
      currency,
      email: str('email', 254),
      successRedirectUrl: str('successRedirectUrl', 2000),
      failedRedirectUrl: str('failedRedirectUrl', 2000),
      cancelRedirectUrl: str('cancelRedirectUrl', 2000),
      createdAt: Math.floor(Date.now() / 1000),
    };
    (kind === 'invoice' ? this.invoices : this.gateways).set(id, r);
    return r;
  }

  private async api(req: SimRequest): Promise<SimResponse> {
    const pay = /^\/pay\/([0-9a-f]+)$/.exec(req.path);
    if (pay) return this.payPage(req, pay[1]!);
    const m = /^\/api\/v1\/(\w+)(?:\/([\w-]+))?(?:\/([\w-]+))?\/?$/.exec(req.path);
    if (!m) return { status: 404, json: errorBody(`no API at ${req.path}`) };
    if (req.headers['x-api-key'] !== this.apiKey) return { status: 401, json: errorBody('Authentication failed: invalid API key') };
    if (req.query.get('instance') !== this.instance) return { status: 401, json: errorBody('Authentication failed: no access to this instance') };
    try {
      return this.route(req, m[1]!, m[2], m[3]);
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
        return ok([this.createRequest('invoice', bodyFields(req))]);
      case 'POST Gateway':
        return ok([this.createRequest('gateway', bodyFields(req))]);
      case 'GET Invoice/:id':
      case 'GET Gateway/:id': {
        const r = (resource === 'Invoice' ? this.invoices : this.gateways).get(Number(id));
        if (!r) throw new HttpError(404, `No ${resource} found with id ${id}`);
        return ok([r]);
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
        const limit = Math.min(100, Math.max(1, Number(req.query.get('limit') ?? 100) || 100));
        const offset = Math.max(0, Number(req.query.get('offset') ?? 0) || 0);
        const ref = req.query.get('referenceId');
        const all = [...this.transactions.values()].filter((t) => ref === null || t.referenceId === ref).sort((a, b) => b.id - a.id);
        return ok(all.slice(offset, offset + limit));
      }
      case 'GET Payout':
        return ok([...this.payouts.values()].sort((a, b) => b.date.localeCompare(a.date)).map((p) => this.payoutSummary(p)));
      case 'GET Payout/:id': {
        const p = this.payouts.get(String(id));
        if (!p) throw new HttpError(404, `No Payout found with uuid ${id}`);
        return ok([{ ...this.payoutSummary(p), transactions: p.transactionIds.map((t) => this.payoutTransaction(this.transactions.get(t)!)) }]);
      }
      case 'GET Payout/:id/accounting-export': {
        const p = this.payouts.get(String(id));
        if (!p) throw new HttpError(404, `No Payout found with uuid ${id}`);
        const lines = ['date,transactionId,uuid,referenceId,amount,fee,netAmount,currency'];
        for (const t of p.transactionIds.map((x) => this.transactions.get(x)!)) {
          const cents = (c: number) => (c / 100).toFixed(2);
          const ref = (t.referenceId ?? '').replace(/"/g, '""');
          lines.push([t.time, t.id, t.uuid, `"${ref}"`, cents(t.amount), cents(t.fee), cents(t.amount - t.fee), t.currency].join(','));
        }
        return { status: 200, text: `${lines.join('\r\n')}\r\n`, contentType: 'text/csv;charset=UTF-8', headers: { 'content-disposition': `attachment; filename="payout-${p.uuid}.csv"` } };
      }
      default:
        throw new HttpError(404, `unknown endpoint ${req.method} ${req.path}`);
    }
  }

  private payoutSummary(p: Payout): PayoutSummary {
    const { transactionIds, ...rest } = p;
    return { ...rest, transactionCount: transactionIds.length };
  }

  private payoutTransaction(t: Transaction): PayoutTransaction {
    return { id: t.id, uuid: t.uuid, referenceId: t.referenceId, time: t.time, amount: t.amount, fee: t.fee, currency: t.currency };
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
      const target = action === 'cancel' ? r.cancelRedirectUrl : r.successRedirectUrl;
      if (target) return { status: 303, headers: { location: target } };
    }
    const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
    const amount = `${(r.amount / 100).toFixed(2)} ${r.currency}`;
    const form = r.status === 'waiting' ? `<form method="post"><button name="action" value="pay">Pay ${esc(amount)}</button> <button name="action" value="cancel">Cancel</button></form>` : '';
    return { status: 200, contentType: 'text/html;charset=UTF-8', text: `<!doctype html><meta charset="utf-8"><title>${esc(r.title)}</title><h1>${esc(r.title)}</h1><p>${esc(amount)} · ${esc(r.referenceId ?? '')}</p><p>Status: <b>${esc(r.status)}</b> (simulated payment page)</p>${form}` };
  }

  // ───────────── control ─────────────

  private async control(req: SimRequest): Promise<SimResponse> {
    try {
      const route = `${req.method} ${req.path}`;
      if (route === 'GET /__control/deliveries') return { status: 200, json: { deliveries: this.deliveries } };
      if (route === 'GET /__control/state') return { status: 200, json: this.state() };
      const body = jsonObject(req.body);
      switch (route) {
        case 'POST /__control/pay':
          return { status: 200, json: { transaction: this.pay(this.requestFor(body), typeof body.paymentMethod === 'string' ? body.paymentMethod : 'visa') } };
        case 'POST /__control/cancel':
          return { status: 200, json: { transaction: this.cancel(this.requestFor(body)) } };
        case 'POST /__control/refund':
          return { status: 200, json: { transaction: this.refund(Number(body.transactionId), body.amountCents === undefined ? undefined : Number(body.amountCents)) } };
        case 'POST /__control/subscribe':
          if (typeof body.url !== 'string' || !/^https?:\/\//.test(body.url)) throw new HttpError(400, 'url: an http(s) URL is required');
          if (body.format !== undefined && body.format !== 'json' && body.format !== 'form') throw new HttpError(400, 'format: json or form');
          this.subscribe(body.url, (body.format as WebhookFormat | undefined) ?? 'json');
          return { status: 200, json: { subscriptions: Object.fromEntries(this.subscriptions) } };
        case 'POST /__control/unsubscribe':
          this.subscriptions.delete(String(body.url));
          return { status: 200, json: { subscriptions: Object.fromEntries(this.subscriptions) } };
        case 'POST /__control/chaos':
          this.setChaos({ duplicate: typeof body.duplicate === 'number' ? body.duplicate : 0, shuffle: body.shuffle === true });
          return { status: 200, json: { chaos: this.chaos } };
        case 'POST /__control/config':
          this.configure({ webhookMaxAttempts: typeof body.webhookMaxAttempts === 'number' ? body.webhookMaxAttempts : undefined, webhookBackoffMs: typeof body.webhookBackoffMs === 'number' ? body.webhookBackoffMs : undefined });
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
