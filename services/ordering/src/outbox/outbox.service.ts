/**
 * Transactional job outbox (docs/decisions.md §6). Business code enqueues a job inside its own transaction
 * (`enqueue`, or `enqueueMail` for e-mail), so a job exists exactly when the business change committed;
 * the {@link OutboxDispatcher} runs it afterwards through the handler registered for its kind, outside any
 * transaction, retrying with exponential backoff. One (kind, dedupe key) → one job. A job that fails
 * `maxAttempts` times, or throws {@link PermanentJobError}, becomes dead (`dead_at`) and stays visible.
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Database } from '@sports-timing/shared';
import type { DB } from '../db/schema';
import type { Mailer, MailPayload } from '../mail/mailer';
import { claimDue, insertMessage, markDead, markFailed, markSentMany, releaseReservedJob, type NewOutboxMessage, type OutboxMessage } from './outbox.repository';

/** Kinds of jobs known to the service (free-form strings are allowed; these are the ones in use). */
export type OutboxKind = 'mail' | 'erp-sales-order' | 'payment-paylink' | (string & {});

/** A claimed job as given to its handler. */
export interface OutboxJob<P = unknown> {
  id: number;
  kind: string;
  dedupeKey: string;
  payload: P;
  /** 1 on the first attempt. */
  attempts: number;
  /** Mail only: the stable Message-ID. */
  messageId: string | null;
}

/** What a handler can use besides the job. */
export interface OutboxHandlerContext {
  database: Database<DB>;
  logger: Logger;
}

/**
 * Runs one job; resolves when done (the job is then marked sent). Throwing schedules a retry with backoff;
 * throwing {@link PermanentJobError} makes the job dead at once. Must be idempotent: a job whose lease
 * expired mid-run (crash, very slow call) runs again.
 */
export type OutboxHandler<P = unknown> = (job: OutboxJob<P>, ctx: OutboxHandlerContext) => Promise<void>;

/** A failure retrying cannot fix (e.g. the referenced order no longer exists): the job becomes dead. */
export class PermanentJobError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentJobError';
  }
}

const registry = new Map<string, OutboxHandler<never>>();

/**
 * Registers the handler of a job kind for every dispatcher of this process (a handler passed in
 * {@link OutboxDispatcherOptions.handlers} or {@link OutboxDispatcher.register} wins over this one).
 */
export function registerOutboxHandler<P>(kind: OutboxKind, handler: OutboxHandler<P>): void {
  registry.set(kind, handler);
}

/** The stable Message-ID of a dedupe key, e.g. `<3f2a…@sports-timing.ordering>`. */
export function messageIdFor(dedupeKey: string): string {
  return `<${createHash('sha256').update(dedupeKey).digest('hex').slice(0, 32)}@sports-timing.ordering>`;
}

/**
 * Enqueues a job of `kind` in the caller's transaction `trx`. A second call with the same kind and
 * `dedupeKey` (a retry of the same business event) adds nothing. Returns whether the job is new.
 * The payload is stored as JSON: put ids in it, never secrets. `delayMs` keeps dispatchers off the job
 * for a while.
 */
export async function enqueue<P>(trx: Kysely<DB>, kind: OutboxKind, dedupeKey: string, payload: P, opts: { delayMs?: number } = {}): Promise<boolean> {
  return insertMessage(trx, { kind, dedupeKey, payload, notBefore: opts.delayMs ? new Date(Date.now() + opts.delayMs) : undefined });
}

/**
 * Enqueues an e-mail in the caller's transaction `trx`. A second call with the same `dedupeKey` (a retry of
 * the same business event) adds nothing. Returns the Message-ID.
 */
export async function enqueueMail(trx: Kysely<DB>, dedupeKey: string, payload: MailPayload): Promise<string> {
  const messageId = messageIdFor(dedupeKey);
  await insertMessage(trx, { kind: 'mail', dedupeKey, messageId, payload });
  return messageId;
}

/** A job or e-mail for {@link outboxRows}; `delayMs` as for {@link enqueue}. */
export interface OutboxEntry {
  kind: OutboxKind;
  dedupeKey: string;
  payload: unknown;
  /** Set for e-mail (see {@link mailEntry}). */
  messageId?: string;
  delayMs?: number;
  /**
   * The enqueuer runs the job itself right after its commit: the job is inserted leased to it for this
   * long (ms), so dispatchers take it only once that lease ends (the enqueuer died or never ran it) or the
   * enqueuer gives it back ({@link failReservedJob}). The enqueuer marks it done in the statement that
   * stores its effect (`completeJobSql`), with no claim of its own.
   */
  reserveMs?: number;
}

/** The entry of an e-mail for {@link outboxRows}, as {@link enqueueMail} stores it. */
export function mailEntry(dedupeKey: string, payload: MailPayload): OutboxEntry {
  return { kind: 'mail', dedupeKey, payload, messageId: messageIdFor(dedupeKey) };
}

/**
 * The outbox rows of `entries` (delays resolved against now), for a repository that writes them in one
 * statement, possibly with other rows (`insertMessages`, or as a CTE with `messagesInsert`). Entries whose
 * kind and dedupe key exist add nothing, as with {@link enqueue}.
 */
export function outboxRows(entries: readonly OutboxEntry[]): NewOutboxMessage[] {
  const now = Date.now();
  return entries.map((e) => ({
    kind: e.kind,
    dedupeKey: e.dedupeKey,
    messageId: e.messageId ?? null,
    payload: e.payload,
    notBefore: e.delayMs ? new Date(now + e.delayMs) : undefined,
    lockedUntil: e.reserveMs ? new Date(now + e.reserveMs) : undefined,
  }));
}

/**
 * The error text stored with a failed job: credentials that libraries like to put in messages (URL user
 * info, `token=`/`key=`/`secret=`/`password=` pairs, Authorization/API-key header values, bearer tokens)
 * are masked, and the text is cut to 500 characters.
 */
export function safeErrorText(err: unknown): string {
  const raw = err instanceof Error ? `${err.name === 'Error' ? '' : `${err.name}: `}${err.message}` : String(err);
  return raw
    .replace(/\/\/[^/\s:@]+:[^/\s@]+@/g, '//***:***@')
    .replace(/\b(bearer)\s+[A-Za-z0-9._~+/=-]+/gi, '$1 ***')
    .replace(/((?:api[_-]?key|x-api-key|authenticationtoken|authorization|token|secret|password|passwd|apikey)["']?\s*[=:]\s*["']?)[^\s&"',;]+/gi, '$1***')
    .slice(0, 500);
}

/** Options of the dispatcher. */
export interface OutboxDispatcherOptions {
  database: Database<DB>;
  /** Sends `mail` jobs; without it the dispatcher does not claim mail. */
  mailer?: Mailer;
  logger: Logger;
  /** Sender address of mail. */
  from?: string;
  /** Handlers by kind (besides `mail` and the process registry). */
  handlers?: Record<string, OutboxHandler<never>>;
  /** Fallback poll interval, ms (NOTIFY wakes it sooner); default 1000. */
  pollIntervalMs?: number;
  /** First retry delay, ms; doubles per attempt up to `maxBackoffMs`. Default 1000. */
  baseBackoffMs?: number;
  /** Longest retry delay, ms. Default 60000. */
  maxBackoffMs?: number;
  /** Attempts before a job becomes dead. Default 50 (at the default backoff: about 45 minutes of retries). */
  maxAttempts?: number;
  /** How long a claim is held before another dispatcher may take the job over, s. Default 60. */
  leaseSeconds?: number;
  /** Claimed per round. Default 20. */
  batchSize?: number;
}

/** Runs due outbox jobs; safe to run in every instance at once (claims use SKIP LOCKED leases). */
export class OutboxDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private listener: pg.Client | undefined;
  private running = false;
  private wakeRequested = false;
  private current: Promise<unknown> | undefined;
  private stopped = false;
  private readonly own = new Map<string, OutboxHandler<never>>();
  private readonly attemptsOf = new Map<string, number>();

  constructor(private readonly opts: OutboxDispatcherOptions) {
    const mailer = opts.mailer;
    if (mailer) {
      this.own.set('mail', (async (job: OutboxJob<MailPayload>) => {
        await mailer.send({ ...job.payload, from: opts.from ?? 'shop@localhost', messageId: job.messageId ?? messageIdFor(job.dedupeKey) });
      }));
    }
    for (const [kind, h] of Object.entries(opts.handlers ?? {})) this.own.set(kind, h);
  }

  /**
   * Adds (or replaces) the handler of a kind for this dispatcher; `maxAttempts` overrides the dispatcher's
   * limit for this kind (e.g. a hand-off that must outlast a long outage of a third party).
   */
  register<P>(kind: OutboxKind, handler: OutboxHandler<P>, opts: { maxAttempts?: number } = {}): this {
    this.own.set(kind, handler);
    if (opts.maxAttempts !== undefined) this.attemptsOf.set(kind, opts.maxAttempts);
    this.wake();
    return this;
  }

  private handlerOf(kind: string): OutboxHandler<never> | undefined {
    return this.own.get(kind) ?? registry.get(kind);
  }

  private kinds(): string[] {
    return [...new Set([...this.own.keys(), ...registry.keys()])];
  }

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
    if (this.stopped || !this.timer) return;
    if (this.running) {
      this.wakeRequested = true;
      return;
    }
    this.running = true;
    this.current = this.drain()
      .catch((err) => this.opts.logger.warn({ err: { message: safeErrorText(err) } }, 'outbox round failed'))
      .finally(() => {
        this.running = false;
        if (this.wakeRequested && !this.stopped) {
          this.wakeRequested = false;
          this.wake();
        }
      });
  }

  /**
   * Runs everything due now; returns how many jobs completed. Each kind found due is drained by its own
   * loop, so a kind whose jobs are slow (a third party timing out, retries with backoff) does not hold up
   * the others: confirmation e-mails keep flowing while the payment provider is down.
   */
  async drain(): Promise<number> {
    const db = this.opts.database.db;
    let done = 0;
    // After stop() no new batch is claimed: the jobs in hand finish, the rest is left to the other instances
    // (or to this one's next start). Without this a stream of new jobs kept a stopping instance draining.
    while (!this.stopped) {
      const batch = await claimDue(db, this.kinds(), this.opts.batchSize ?? 20, this.opts.leaseSeconds ?? 60);
      if (batch.length === 0) return done;
      const byKind = new Map<string, OutboxMessage[]>();
      for (const m of batch) byKind.set(m.kind, [...(byKind.get(m.kind) ?? []), m]);
      // A full batch may have left due jobs of other kinds behind (behind older slow ones): every kind gets its loop.
      if (batch.length >= (this.opts.batchSize ?? 20)) for (const kind of this.kinds()) if (!byKind.has(kind)) byKind.set(kind, []);
      const counts = await Promise.all([...byKind].map(([kind, jobs]) => this.drainKind(kind, jobs)));
      done += counts.reduce((a, b) => a + b, 0);
    }
    return done;
  }

  /**
   * Runs `jobs` (claimed, all of `kind`; none: claims first), then further due jobs of that kind until none
   * is left; returns how many completed.
   */
  private async drainKind(kind: string, jobs: OutboxMessage[]): Promise<number> {
    const db = this.opts.database.db;
    const maxAttempts = this.attemptsOf.get(kind) ?? this.opts.maxAttempts ?? 50;
    const claim = async () => (this.stopped ? [] : claimDue(db, [kind], this.opts.batchSize ?? 20, this.opts.leaseSeconds ?? 60));
    let done = 0;
    for (let batch = jobs.length > 0 ? jobs : await claim(); batch.length > 0; batch = await claim()) {
      // Jobs of one batch run concurrently: one slow call does not hold up the others' work.
      const results = await Promise.all(batch.map((m) => this.runOne(m, maxAttempts)));
      // The batch's done jobs are marked in one statement (at-least-once either way: a crash before it
      // leaves them leased, and they run again once the lease ends).
      const sent = batch.filter((_, i) => results[i]).map((m) => m.id);
      if (sent.length > 0) await markSentMany(db, sent);
      done += sent.length;
    }
    return done;
  }

  /** Runs one claimed job; true when it is done (the caller marks it sent), false when failed or dead (marked here). */
  private async runOne(m: OutboxMessage, maxAttempts: number): Promise<boolean> {
    const db = this.opts.database.db;
    const handler = this.handlerOf(m.kind);
    const job: OutboxJob<never> = { id: m.id, kind: m.kind, dedupeKey: m.dedupe_key, payload: m.payload as never, attempts: m.attempts, messageId: m.message_id };
    try {
      if (!handler) throw new Error(`no handler for outbox kind ${m.kind}`);
      await handler(job, { database: this.opts.database, logger: this.opts.logger });
      return true;
    } catch (err) {
      const text = safeErrorText(err);
      if (err instanceof PermanentJobError || m.attempts >= maxAttempts) {
        await markDead(db, m.id, text);
        this.opts.logger.error({ outboxId: m.id, kind: m.kind, attempts: m.attempts, error: text }, 'outbox job failed permanently (dead)');
        return false;
      }
      const delay = Math.min(this.opts.maxBackoffMs ?? 60_000, (this.opts.baseBackoffMs ?? 1_000) * 2 ** Math.max(0, m.attempts - 1));
      const jitter = Math.floor(Math.random() * Math.min(1_000, delay / 4));
      await markFailed(db, m.id, text, new Date(Date.now() + delay + jitter));
      this.opts.logger.warn({ outboxId: m.id, kind: m.kind, attempts: m.attempts, retryInMs: delay, error: text }, 'outbox job failed; will retry');
      return false;
    }
  }

  /** Stops polling and waits for the round in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.current;
    await this.listener?.end().catch(() => undefined);
  }
}

/**
 * Gives a reserved job (`kind`, `dedupeKey`, see {@link OutboxEntry.reserveMs}) back to the dispatchers after
 * its enqueuer's attempt failed with `err`: the attempt counts, the error is stored (secrets masked) and
 * logged, and dispatchers may take the job after `retryDelayMs`. Never throws for a failed update (logged).
 */
export async function failReservedJob(ctx: OutboxHandlerContext, kind: OutboxKind, dedupeKey: string, err: unknown, retryDelayMs: number): Promise<void> {
  const text = safeErrorText(err);
  try {
    await releaseReservedJob(ctx.database.db, kind, dedupeKey, text, new Date(Date.now() + retryDelayMs));
  } catch (dbErr) {
    // The lease still ends on its own; the dispatchers take the job then.
    ctx.logger.warn({ kind, dedupeKey, error: safeErrorText(dbErr) }, 'could not give a reserved outbox job back');
  }
  ctx.logger.warn({ kind, dedupeKey, error: text }, 'inline outbox job failed; left to the dispatchers');
}
