/**
 * Webhook delivery of the payment simulator: every subscribed URL gets each event as JSON `{ transaction }`
 * / `{ payout }` or form-encoded with bracket names; a delivery not answered with 2xx is retried (at most
 * `maxAttempts` attempts, backoff `backoffMs` doubling); chaos duplicates and reorders a batch. Every attempt
 * is kept in {@link WebhookSender.deliveries}.
 */
import { postWebhook, withoutQuery } from '@sports-timing/shared/src/sim-webhook';
import { toFormFields } from './payrexx-format';
import type { PaymentWebhookDelivery, Payout, Transaction, WebhookFormat } from './types';

/** One event: a transaction snapshot or a payout. */
type WebhookEvent = { transaction: Transaction } | { payout: Payout };

/** Retry settings of {@link WebhookSender}. */
export interface WebhookSettings {
  /** Attempts per delivery (first included), 1 to 20. */
  maxAttempts: number;
  /** Delay before the first retry in ms, doubled for each further one. */
  backoffMs: number;
}

/** Sends the simulator's webhooks to its subscriptions, in the background. */
export class WebhookSender {
  readonly deliveries: PaymentWebhookDelivery[] = [];
  readonly subscriptions = new Map<string, WebhookFormat>();
  chaos = { duplicate: 0, shuffle: false };
  settings: WebhookSettings;
  /** Set by the simulator's `stop`: pending retries end after their current attempt. */
  stopped = false;
  private readonly pending = new Set<Promise<unknown>>();
  private nextDelivery = 0;

  constructor(
    private readonly defaults: WebhookSettings,
    private readonly timeoutMs: number,
    private readonly log: (line: string) => void,
  ) {
    this.settings = { ...defaults };
  }

  /** Back to no subscriptions, no chaos, no deliveries and the default settings. */
  reset(): void {
    this.subscriptions.clear();
    this.chaos = { duplicate: 0, shuffle: false };
    this.deliveries.length = 0;
    this.nextDelivery = 0;
    this.settings = { ...this.defaults };
  }

  /** Sets chaos: extra copies per delivery (0 to 20) and reordering of each batch. */
  setChaos(chaos: { duplicate?: number; shuffle?: boolean }): void {
    this.chaos = { duplicate: Math.max(0, Math.min(20, chaos.duplicate ?? 0)), shuffle: chaos.shuffle ?? false };
  }

  /** Changes retry settings (attempts clamped to 1–20, backoff to ≥ 0 ms). */
  configure(c: { webhookMaxAttempts?: number; webhookBackoffMs?: number }): void {
    if (c.webhookMaxAttempts !== undefined) this.settings.maxAttempts = Math.max(1, Math.min(20, c.webhookMaxAttempts));
    if (c.webhookBackoffMs !== undefined) this.settings.backoffMs = Math.max(0, c.webhookBackoffMs);
  }

  /** Resolves once no delivery (or retry) is pending. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Sends a payout event to every subscription. */
  sendPayout(p: Payout): void {
    for (const [url, format] of this.subscriptions) this.track(this.deliver(url, format, { payout: p }, ++this.nextDelivery));
  }

  /** Sends transaction snapshots, in order (unless chaos shuffles them), to every subscription. */
  sendTransactions(snapshots: Transaction[]): void {
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
          for (const snapshot of items) await this.deliver(url, format, { transaction: snapshot }, ++this.nextDelivery);
        })(),
      );
    }
  }

  /** First attempt now; retries (if it failed) on their own schedule. */
  private async deliver(url: string, format: WebhookFormat, event: WebhookEvent, deliveryId: number): Promise<void> {
    if (!(await this.attempt(url, format, event, deliveryId, 1))) this.track(this.retry(url, format, event, deliveryId));
  }

  private track(p: Promise<unknown>): void {
    const tracked = p.finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }

  private async retry(url: string, format: WebhookFormat, event: WebhookEvent, deliveryId: number): Promise<void> {
    for (let attempt = 2; attempt <= this.settings.maxAttempts && !this.stopped; attempt++) {
      await new Promise((r) => setTimeout(r, this.settings.backoffMs * 2 ** (attempt - 2)));
      if (this.stopped) return;
      if (await this.attempt(url, format, event, deliveryId, attempt)) return;
    }
  }

  private async attempt(url: string, format: WebhookFormat, event: WebhookEvent, deliveryId: number, attempt: number): Promise<boolean> {
    const [key, object] = 'transaction' in event ? (['transaction', event.transaction] as const) : (['payout', event.payout] as const);
    const fields = toFormFields(object, key);
    const body = format === 'json' ? JSON.stringify({ [key]: object }) : new URLSearchParams(fields).toString();
    const outcome = await postWebhook(url, body, format === 'json' ? 'application/json' : 'application/x-www-form-urlencoded', this.timeoutMs);
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
}
