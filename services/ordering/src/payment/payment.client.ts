/**
 * The one payment provider client (docs/payrexx.md): a Payrexx-style API v1 at
 * `PAYMENT_BASE_URL`, instance in the query (`?instance=`), key in the header `X-API-KEY` (never in a URL,
 * an error message or a log line). Answers are unwrapped from Payrexx's `{ status, data: [...] }` envelope
 * and mapped to the spec's schemas (amounts integer cents, times ISO 8601 UTC).
 *
 * Failure discipline (shared with the ERP client, `@sports-timing/shared` `fetchWithRetry`):
 * - a deadline per attempt; reads and deletes are retried on 5xx, timeouts and connection errors with
 *   exponential backoff and jitter, never on 4xx;
 * - creating a paylink or gateway (POST) is retried only when the connection was refused (nothing was
 *   sent). Payrexx offers no lookup by reference, so an ambiguous failure (timeout, dropped connection,
 *   5xx) is reported as a retryable `PaymentProviderError` and the caller creates a new paylink on its next
 *   attempt. A paylink created by the lost attempt is never shown to anybody (only the stored one is), and
 *   the order is matched by `referenceId` when a payment arrives, so a stray paylink cannot cause a wrong
 *   state; deleting it is a clean-up, not a correctness need;
 * - a deleted paylink that is already gone (404 on a retried DELETE) counts as deleted.
 */
import {
  DEFAULT_RETRY_POLICY,
  HttpTransportError,
  ProviderError,
  fetchWithRetry,
  providerCodeOf,
  type HttpCall,
  type ProviderErrorCode,
  type RetryPolicy,
} from '@sports-timing/shared';
import type { OrderingConfig } from '../config';
import {
  InvalidAnswer,
  payoutAccountingCsv,
  toListedPayout,
  toListedTransaction,
  toPaylink,
  toPaymentTransaction,
  toPayoutDetails,
  utcFilterTime,
} from './payment.readers';
import type { NewPaylink, PaymentPaylink, PaymentPayout, PaymentPayoutDetails, PaymentPingResult, PaymentTransaction, PayrexxEnvelope } from './payment.types';

/** A failed payment provider call (the kit's error base). The message names operation and status — never the API key. */
export class PaymentProviderError extends ProviderError {
  constructor(init: { operation: string; status: number | null; code: ProviderErrorCode; providerMessage?: string | null; detail?: string }) {
    super({ provider: 'Payment provider', ...init });
    this.name = 'PaymentProviderError';
  }
}

/** Construction options of {@link PaymentClient}. */
export interface PaymentClientOptions {
  /** E.g. `https://api.payrexx.com/v1.0` or the simulator's `http://127.0.0.1:8091/api/v1`. */
  baseUrl: string;
  instance: string;
  apiKey: string;
  /** Deadline of one attempt in ms; default 10 000. */
  timeoutMs?: number;
  /** Retry schedule; default `DEFAULT_RETRY_POLICY`. */
  retry?: RetryPolicy;
}

interface CallOptions {
  /** Resource path (`Invoice/42`), used in errors too. */
  path: string;
  query?: Record<string, string>;
  form?: [string, string][];
  idempotent: boolean;
  nullOn404?: boolean;
  retry?: RetryPolicy;
}

/** The payment provider client. */
export class PaymentClient {
  private readonly timeoutMs: number;
  private readonly retry: RetryPolicy;

  constructor(private readonly options: PaymentClientOptions) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.retry = options.retry ?? DEFAULT_RETRY_POLICY;
  }

  /** Base URL (no credentials in it). */
  get baseUrl(): string {
    return this.options.baseUrl.replace(/\/+$/, '');
  }

  private async raw(method: HttpCall['method'], o: CallOptions): Promise<{ status: number; text: string; contentType: string } | null> {
    const operation = `${method} ${o.path}`;
    const query = new URLSearchParams({ ...o.query, instance: this.options.instance });
    const headers: Record<string, string> = { 'X-API-KEY': this.options.apiKey, Accept: 'application/json' };
    if (o.form) headers['Content-Type'] = 'application/x-www-form-urlencoded';
    let answer;
    try {
      answer = await fetchWithRetry({
        method,
        url: `${this.baseUrl}/${o.path.replace(/\/$/, '')}/?${query.toString()}`,
        headers,
        body: o.form ? new URLSearchParams(o.form).toString() : undefined,
        timeoutMs: this.timeoutMs,
        idempotent: o.idempotent,
        retry: o.retry ?? this.retry,
      });
    } catch (err) {
      if (err instanceof HttpTransportError)
        throw new PaymentProviderError({ operation, status: null, code: err.kind, detail: `${err.message} after ${err.attempts} attempt(s)` });
      throw err;
    }
    if (answer.status === 404 && o.nullOn404) return null;
    if (answer.status >= 200 && answer.status < 300) return { status: answer.status, text: answer.text, contentType: answer.headers.get('content-type') ?? '' };
    throw new PaymentProviderError({ operation, status: answer.status, code: providerCodeOf(answer.status), providerMessage: this.messageOf(answer.text) });
  }

  private messageOf(text: string): string | null {
    try {
      const body = JSON.parse(text) as { message?: unknown };
      return typeof body.message === 'string' && body.message !== '' ? body.message.split(this.options.apiKey).join('***').slice(0, 300) : null;
    } catch {
      return null;
    }
  }

  /** A call answering the envelope; its `data` mapped by `map`. */
  private async data<W, T>(method: HttpCall['method'], o: CallOptions, map: (w: W) => T): Promise<T[] | null> {
    const res = await this.raw(method, o);
    if (!res) return null;
    try {
      const env = JSON.parse(res.text) as PayrexxEnvelope<W>;
      if (env.status !== 'success' || !Array.isArray(env.data)) throw new InvalidAnswer(`status ${String(env.status)}`);
      return env.data.map(map);
    } catch (err) {
      if (err instanceof SyntaxError || err instanceof InvalidAnswer) {
        throw new PaymentProviderError({
          operation: `${method} ${o.path}`,
          status: res.status,
          code: 'invalidResponse',
          providerMessage: err.message.slice(0, 200),
        });
      }
      throw err;
    }
  }

  private async single<W, T>(method: HttpCall['method'], o: CallOptions, map: (w: W) => T): Promise<T | null> {
    const list = await this.data(method, o, map);
    if (list === null) return null;
    if (list.length === 0)
      throw new PaymentProviderError({ operation: `${method} ${o.path}`, status: 200, code: 'invalidResponse', providerMessage: 'empty data' });
    return list[0];
  }

  /** Credentials and reachability check (`GET /SignatureCheck/`, one attempt). Never throws. */
  async ping(): Promise<PaymentPingResult> {
    const started = performance.now();
    const done = (isReachable: boolean, httpStatus: number | null, message: string): PaymentPingResult => ({
      baseUrl: this.baseUrl,
      isReachable,
      httpStatus,
      latencyMs: Math.round(performance.now() - started),
      message,
    });
    try {
      await this.raw('GET', { path: 'SignatureCheck', idempotent: true, retry: { ...this.retry, maxAttempts: 1 } });
      return done(true, 200, 'OK');
    } catch (err) {
      if (err instanceof PaymentProviderError) return done(false, err.status, err.message);
      throw err;
    }
  }

  /**
   * Form of a paylink (`Invoice`): `description` always (the provider requires it), the payer's e-mail as
   * the page's prefilled, mandatory e-mail field (`fields[email][defaultValue]`, `fields[email][mandatory]`).
   * A `Gateway` takes `fields[email][value]` and a cancel URL instead. Sources in `payrexx-contract.ts`.
   */
  private requestForm(p: NewPaylink, kind: 'Invoice' | 'Gateway'): [string, string][] {
    const f: [string, string][] = [
      ['amount', String(p.amountCents)],
      ['currency', p.currency],
    ];
    const add = (k: string, v: string | undefined) => v !== undefined && f.push([k, v]);
    // A Gateway has neither title nor description [SDK Request/Gateway.php].
    if (kind === 'Invoice') {
      add('title', p.title);
      add('description', p.description ?? p.title ?? p.referenceId ?? p.purpose ?? 'Payment');
    }
    add('purpose', p.purpose);
    add('referenceId', p.referenceId);
    add('successRedirectUrl', p.successUrl);
    add('failedRedirectUrl', p.failedUrl);
    if (kind === 'Gateway') add('cancelRedirectUrl', p.cancelUrl);
    if (p.email !== undefined) {
      if (kind === 'Invoice') f.push(['fields[email][defaultValue]', p.email], ['fields[email][mandatory]', '1']);
      else f.push(['fields[email][value]', p.email]);
    }
    return f;
  }

  /** Creates a paylink (Payrexx `Invoice`). Not retried after an ambiguous failure (module comment). */
  async createPaylink(p: NewPaylink): Promise<PaymentPaylink> {
    return (await this.single('POST', { path: 'Invoice', form: this.requestForm(p, 'Invoice'), idempotent: false }, toPaylink))!;
  }

  /** A paylink by id; null when the provider does not know it. */
  getPaylink(id: number): Promise<PaymentPaylink | null> {
    return this.single('GET', { path: `Invoice/${id}`, idempotent: true, nullOn404: true }, toPaylink);
  }

  /**
   * Deletes a paylink. Answers false when the provider does not know it (already deleted); a paid paylink
   * is refused by the provider (`PaymentProviderError` code `badRequest`).
   */
  async deletePaylink(id: number): Promise<boolean> {
    return (await this.raw('DELETE', { path: `Invoice/${id}`, idempotent: true, nullOn404: true })) !== null;
  }

  /** Creates a checkout gateway (same fields and rules as a paylink). */
  async createGateway(p: NewPaylink): Promise<PaymentPaylink> {
    return (await this.single('POST', { path: 'Gateway', form: this.requestForm(p, 'Gateway'), idempotent: false }, toPaylink))!;
  }

  /** A gateway by id; null when unknown. */
  getGateway(id: number): Promise<PaymentPaylink | null> {
    return this.single('GET', { path: `Gateway/${id}`, idempotent: true, nullOn404: true }, toPaylink);
  }

  /** Deletes a gateway; false when unknown. */
  async deleteGateway(id: number): Promise<boolean> {
    return (await this.raw('DELETE', { path: `Gateway/${id}`, idempotent: true, nullOn404: true })) !== null;
  }

  /** A transaction by id, as the provider reports it now; null when unknown (the webhook's source of truth). */
  getTransaction(id: number): Promise<PaymentTransaction | null> {
    return this.single('GET', { path: `Transaction/${id}`, idempotent: true, nullOn404: true }, toPaymentTransaction);
  }

  /**
   * Transactions, newest first unless `order` is `ASC` (the provider's own default is oldest first);
   * `limit` ≤ 100, `offset` for paging, `from`/`to` filter by creation time (sent as UTC). The provider has
   * no filter by reference. A transaction with a value in an unexpected form is served flagged (`readError`), not fatal.
   */
  async listTransactions(opts: { limit?: number; offset?: number; order?: 'ASC' | 'DESC'; from?: Date; to?: Date } = {}): Promise<PaymentTransaction[]> {
    const query: Record<string, string> = { limit: String(opts.limit ?? 100), offset: String(opts.offset ?? 0), orderByTime: opts.order ?? 'DESC' };
    if (opts.from) query.filterDatetimeUtcGreaterThan = utcFilterTime(opts.from);
    if (opts.to) query.filterDatetimeUtcLessThan = utcFilterTime(opts.to);
    return (await this.data('GET', { path: 'Transaction', query, idempotent: true }, toListedTransaction))!;
  }

  /** Payouts as the provider lists them; a payout with a value in an unexpected form is flagged (`readError`), not fatal. */
  async listPayouts(): Promise<PaymentPayout[]> {
    return (await this.data('GET', { path: 'Payout', idempotent: true }, toListedPayout))!;
  }

  /** A payout with its transaction transfers (`Payout/{uuid}/details`); null when unknown. */
  getPayout(uuid: string): Promise<PaymentPayoutDetails | null> {
    return this.single('GET', { path: `Payout/${encodeURIComponent(uuid)}/details`, idempotent: true, nullOn404: true }, toPayoutDetails);
  }

  /** The accounting CSV of a payout (built by {@link payoutAccountingCsv} from its details); null when unknown. */
  async getAccountingCsv(uuid: string): Promise<string | null> {
    const details = await this.getPayout(uuid);
    return details && payoutAccountingCsv(details);
  }
}

/** The client for the configured provider. */
export function createPaymentClient(
  config: Pick<OrderingConfig, 'paymentBaseUrl' | 'paymentInstance' | 'paymentApiKey'>,
  overrides: Omit<PaymentClientOptions, 'baseUrl' | 'instance' | 'apiKey'> = {},
): PaymentClient {
  return new PaymentClient({ baseUrl: config.paymentBaseUrl, instance: config.paymentInstance, apiKey: config.paymentApiKey, ...overrides });
}
