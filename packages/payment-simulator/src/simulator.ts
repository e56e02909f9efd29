/**
 * Payment provider simulator: the Payrexx REST v1 subset the ordering service uses, over real HTTP, in
 * memory, in the shapes and behaviours of the ordering service's Payrexx contract
 * (`services/ordering/src/payment/payrexx-contract.ts`, sources cited there; the contract tests hold
 * this simulator to it).
 *
 * API under `/api/v1` (answers in `api.ts`), header `X-API-KEY` and query `instance` (wrong key or instance → 401); answers in
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
 * Control API (loopback only), besides the fault injection of `@sports-timing/shared`'s `sim-server.ts`
 * (answers in `control.ts`):
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
import { SimServer } from '@sports-timing/shared/src/sim-server';
import { answerApi } from './api';
import { answerControl } from './control';
import { IdAllocator } from './ids';
import { Paylinks } from './paylinks';
import { errorBody } from './payrexx-format';
import { Ledger, type PayExtras } from './transactions';
import type { PaymentRequest, PaymentWebhookDelivery, Payout, Transaction, WebhookFormat } from './types';
import { WebhookSender } from './webhooks';

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

/**
 * The payment provider simulator. Create with {@link createPaymentSimulator}. Its parts: paylinks and
 * gateways (`paylinks.ts`), transactions, refunds and payouts (`transactions.ts`, `payouts.ts`), webhook
 * delivery (`webhooks.ts`), the API (`api.ts`) and the control API (`control.ts`) on the shared server shell.
 */
export class PaymentSimulator {
  readonly server: SimServer;
  readonly instance: string;
  readonly apiKey: string;
  readonly paylinks: Paylinks;
  readonly ledger: Ledger;
  readonly webhooks: WebhookSender;
  private readonly ids: IdAllocator;

  constructor(options: PaymentSimulatorOptions = {}) {
    this.instance = options.instance ?? DEFAULT_INSTANCE;
    this.apiKey = options.apiKey ?? DEFAULT_API_KEY;
    this.ids = new IdAllocator(options.idsFromTime ?? false);
    this.webhooks = new WebhookSender(
      { maxAttempts: options.webhookMaxAttempts ?? 5, backoffMs: options.webhookBackoffMs ?? 2_000 },
      options.webhookTimeoutMs ?? 5_000,
      options.log ?? (() => undefined),
    );
    this.paylinks = new Paylinks(this.ids, () => this.server.origin);
    this.ledger = new Ledger(this.ids, this.webhooks, this.instance, options.timeOffsetMinutes ?? 60);
    this.server = new SimServer({
      port: options.port,
      host: options.host,
      api: (req) => answerApi(this, req),
      control: (req) => answerControl(this, req),
      controlToken: options.controlToken,
      errorBody: (_status, message) => errorBody(message),
    });
    this.reset();
  }

  /** Starts listening. */
  async start(): Promise<this> {
    this.webhooks.stopped = false;
    await this.server.start();
    return this;
  }

  /** Stops listening; pending webhook retries are abandoned after their current attempt. */
  async stop(): Promise<void> {
    this.webhooks.stopped = true;
    await this.server.stop();
    await this.idle();
  }

  /** The bound port (after `start`). */
  get port(): number {
    return this.server.port;
  }

  /** Base URL of the API, e.g. `http://127.0.0.1:8091/api/v1`. */
  get baseUrl(): string {
    return `${this.server.origin}/api/v1`;
  }

  /** Every webhook attempt, oldest first. */
  get deliveries(): PaymentWebhookDelivery[] {
    return this.webhooks.deliveries;
  }

  /** Resolves once no webhook delivery (or retry) is pending. */
  async idle(): Promise<void> {
    await this.webhooks.idle();
  }

  /** Back to the seed: payouts of early 2025 with their transactions; no paylinks, subscriptions or chaos. */
  reset(): void {
    this.paylinks.clear();
    this.ledger.clear();
    this.webhooks.reset();
    this.ids.reset();
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
        this.ledger.record({ referenceId: t.ref, amount: t.amount, currency: 'EUR', paymentRequestId: null, email: null, title: t.ref }, 'confirmed', {
          brand: t.brand,
          at: Date.parse(t.time),
        });
      this.ledger.payout(p.date);
    }
  }

  /** Subscribes a webhook URL. */
  subscribe(url: string, format: WebhookFormat = 'json'): void {
    this.webhooks.subscriptions.set(url, format);
  }

  /** Sets chaos: extra copies per delivery and reordering of each batch. */
  setChaos(chaos: { duplicate?: number; shuffle?: boolean }): void {
    this.webhooks.setChaos(chaos);
  }

  /** Changes webhook retry settings. */
  configure(c: { webhookMaxAttempts?: number; webhookBackoffMs?: number }): void {
    this.webhooks.configure(c);
  }

  /** A paylink by id (tests). */
  invoice(id: number): PaymentRequest | undefined {
    return this.paylinks.invoices.get(id);
  }

  /** A transaction by id (tests). */
  transaction(id: number): Transaction | undefined {
    return this.ledger.transactions.get(id);
  }

  /** The payer pays `request`: a transaction that is `waiting`, then `confirmed` — one webhook for each. Throws a SimHttpError 409 unless `waiting`. */
  pay(request: PaymentRequest, paymentMethod = 'visa', extra: PayExtras = {}): Transaction {
    return this.ledger.pay(request, paymentMethod, extra);
  }

  /** The payer aborts: a cancelled transaction, one webhook. Throws a SimHttpError 409 unless `waiting`. */
  cancel(request: PaymentRequest): Transaction {
    return this.ledger.cancel(request);
  }

  /** Refunds a confirmed charge fully or by `amountCents`: a new refund transaction, one webhook (see `Ledger.refund`). */
  refund(transactionId: number, amountCents?: number): Transaction {
    return this.ledger.refund(transactionId, amountCents);
  }

  /** Sets any status on a transaction (also one receivers do not know), one webhook. */
  setStatus(transactionId: number, status: string): Transaction {
    return this.ledger.setStatus(transactionId, status);
  }

  /** Pays out every open charge and refund dated `date` (default today), one payout webhook; null when nothing is open. */
  payout(date?: string): Payout | null {
    return this.ledger.payout(date);
  }

  /** Everything, for assertions. */
  state(): Record<string, unknown> {
    return {
      instance: this.instance,
      invoices: [...this.paylinks.invoices.values()],
      gateways: [...this.paylinks.gateways.values()],
      transactions: [...this.ledger.transactions.values()],
      payouts: [...this.ledger.payouts.values()],
      subscriptions: Object.fromEntries(this.webhooks.subscriptions),
      chaos: this.webhooks.chaos,
      webhook: { maxAttempts: this.webhooks.settings.maxAttempts, backoffMs: this.webhooks.settings.backoffMs },
      deliveries: this.webhooks.deliveries,
    };
  }
}

/** Creates a payment simulator (call `start()`; `stop()` in tests' afterAll). */
export function createPaymentSimulator(options: PaymentSimulatorOptions = {}): PaymentSimulator {
  return new PaymentSimulator(options);
}
