/**
 * Transactional outbox for e-mail (DESIGN §6): `enqueueMail` inside the business transaction, so a message
 * exists exactly when the business change committed; the {@link OutboxDispatcher} sends it afterwards,
 * retrying with exponential backoff while SMTP is down. One dedupe key → one message → one stable Message-ID.
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Database } from '@sports-timing/shared';
import type { DB } from '../db/schema';
import type { Mailer, MailPayload } from '../mail/mailer';
import { claimDue, insertMessage, markFailed, markSent } from './outbox.repository';

/** The stable Message-ID of a dedupe key, e.g. `<3f2a…@sports-timing.ordering>`. */
export function messageIdFor(dedupeKey: string): string {
  return `<${createHash('sha256').update(dedupeKey).digest('hex').slice(0, 32)}@sports-timing.ordering>`;
}

/**
 * Enqueues an e-mail in the caller's transaction `trx`. A second call with the same `dedupeKey` (a retry of
 * the same business event) adds nothing. Returns the Message-ID.
 */
export async function enqueueMail(trx: Kysely<DB>, dedupeKey: string, payload: MailPayload): Promise<string> {
  const messageId = messageIdFor(dedupeKey);
  await insertMessage(trx, { dedupeKey, messageId, payload });
  return messageId;
}

/** Options of the dispatcher. */
export interface OutboxDispatcherOptions {
  database: Database<DB>;
  mailer: Mailer;
  logger: Logger;
  /** Sender address. */
  from: string;
  /** Fallback poll interval, ms (NOTIFY wakes it sooner); default 1000. */
  pollIntervalMs?: number;
  /** First retry delay, ms; doubles per attempt up to `maxBackoffMs`. Default 1000. */
  baseBackoffMs?: number;
  /** Longest retry delay, ms. Default 60000. */
  maxBackoffMs?: number;
  /** Claimed per round. Default 20. */
  batchSize?: number;
}

/** Sends due outbox messages; safe to run in every instance at once (claims use SKIP LOCKED leases). */
export class OutboxDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private listener: pg.Client | undefined;
  private running = false;
  private wakeRequested = false;
  private current: Promise<unknown> | undefined;
  private stopped = false;

  constructor(private readonly opts: OutboxDispatcherOptions) {}

  /** Starts polling and listening for `outbox` notifications. */
  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => this.wake(), this.opts.pollIntervalMs ?? 1_000);
    void this.listen();
    this.wake();
  }

  private async listen(): Promise<void> {
    if (this.stopped) return;
    // A dedicated connection outside the pool: LISTEN needs a session of its own.
    const client = new pg.Client({ connectionString: this.opts.database.url });
    client.on('error', () => undefined);
    client.on('notification', () => this.wake());
    client.on('end', () => {
      this.listener = undefined;
      if (!this.stopped) setTimeout(() => void this.listen(), 1_000);
    });
    try {
      await client.connect();
      await client.query('listen outbox');
      if (this.stopped) await client.end();
      else this.listener = client;
    } catch {
      await client.end().catch(() => undefined);
    }
  }

  /** Asks for a round now (coalesced with one in progress). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.wakeRequested = true;
      return;
    }
    this.running = true;
    this.current = this.drain()
      .catch((err) => this.opts.logger.warn({ err: { message: (err as Error).message } }, 'outbox round failed'))
      .finally(() => {
        this.running = false;
        if (this.wakeRequested && !this.stopped) {
          this.wakeRequested = false;
          this.wake();
        }
      });
  }

  /** Sends everything due now; returns how many were sent. */
  async drain(): Promise<number> {
    const db = this.opts.database.db;
    let sent = 0;
    for (;;) {
      const batch = await claimDue(db, this.opts.batchSize ?? 20, 60);
      if (batch.length === 0) return sent;
      for (const m of batch) {
        try {
          await this.opts.mailer.send({ ...m.payload, from: this.opts.from, messageId: m.message_id });
          await markSent(db, m.id);
          sent++;
        } catch (err) {
          const delay = Math.min(this.opts.maxBackoffMs ?? 60_000, (this.opts.baseBackoffMs ?? 1_000) * 2 ** Math.max(0, m.attempts - 1));
          const jitter = Math.floor(Math.random() * Math.min(1_000, delay / 4));
          await markFailed(db, m.id, (err as Error).message ?? String(err), new Date(Date.now() + delay + jitter));
          this.opts.logger.warn({ outboxId: m.id, attempts: m.attempts, retryInMs: delay }, 'mail not sent; will retry');
        }
      }
    }
  }

  /** Stops polling and waits for the round in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.current;
    await this.listener?.end().catch(() => undefined);
  }
}
