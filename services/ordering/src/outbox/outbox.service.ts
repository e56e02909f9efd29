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
import { MailNotRetriedError, SMTP_POOL, type Mailer, type MailPayload } from '../mail/mailer';
import { claimDue, insertMessage, markDead, markFailed, markSentMany, releaseReservedJob, renewLeases, type JobClaim, type NewOutboxMessage, type OutboxMessage } from './outbox.repository';

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
  /**
   * Aborted when the job passed its lane's deadline or its lease was lost: the run's outcome no longer
   * counts, so a handler that can stop early should (absent for jobs run by their enqueuer).
   */
  signal?: AbortSignal;
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

/** Per-kind limits of a dispatcher's lane (see {@link OutboxDispatcher}). */
export interface LaneOptions {
  /** Attempts before a job of this kind becomes dead; default: the dispatcher's `maxAttempts`. */
  maxAttempts?: number;
  /** Jobs of this kind running at once in this dispatcher; default: the dispatcher's `concurrency`. */
  concurrency?: number;
  /**
   * Longest run of one job, ms; past it the job counts as a failed attempt (retried with backoff), its
   * slot is freed and the handler's `signal` is aborted. Default: the dispatcher's `deadlineMs`.
   */
  deadlineMs?: number;
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
  /** Lane limits by kind (`mail` defaults to {@link MAIL_LANE}). */
  lanes?: Record<string, LaneOptions>;
  /** Fallback poll interval, ms (NOTIFY wakes it sooner); default 1000. */
  pollIntervalMs?: number;
  /** First retry delay, ms; doubles per attempt up to `maxBackoffMs`. Default 1000. */
  baseBackoffMs?: number;
  /** Longest retry delay, ms. Default 60000. */
  maxBackoffMs?: number;
  /** Attempts before a job becomes dead. Default 50 (at the default backoff: about 45 minutes of retries). */
  maxAttempts?: number;
  /**
   * Lease of a claim, s: renewed every third of it while the job runs (heartbeat), so only a dead instance's
   * jobs are taken over, within this time plus one poll. Default 10.
   */
  leaseSeconds?: number;
  /** Jobs of one kind running at once, unless its lane says otherwise. Default 20. */
  concurrency?: number;
  /** Longest run of one job, ms, unless its lane says otherwise. Default 120000. */
  deadlineMs?: number;
  /**
   * Called after a job became dead through a {@link PermanentJobError} (e.g. a relay's 5xx), to record it
   * where people look (the order's history); a failure here is logged, the job stays dead.
   */
  onDead?: (job: OutboxJob<unknown>, err: PermanentJobError) => Promise<void>;
}

/**
 * The mail lane: as many messages at once as the SMTP pool has connections (`SMTP_POOL` in mailer.ts), and a
 * deadline beyond the transport's own timeouts (10 minutes of silence, RFC 5321 §4.5.3.2), so the transport
 * always reports first and a message is never abandoned while the relay may still accept it
 * (docs/outbox.md, "Mail").
 */
const MAIL_LANE: Required<Pick<LaneOptions, 'concurrency' | 'deadlineMs'>> = { concurrency: SMTP_POOL.maxConnections, deadlineMs: SMTP_POOL.socketTimeout + 60_000 };

/** A job past its lane's deadline (see {@link LaneOptions.deadlineMs}). */
class JobDeadlineError extends Error {
  constructor(ms: number) {
    super(`job exceeded its deadline of ${ms} ms`);
    this.name = 'JobDeadlineError';
  }
}

/** One kind's lane in a dispatcher: its running jobs and whether a claim is under way. */
interface Lane {
  kind: string;
  running: Map<number, { claim: JobClaim; abort: AbortController }>;
  claiming: boolean;
  again: boolean;
}

/**
 * Runs due outbox jobs; safe to run in every instance at once (claims use SKIP LOCKED leases).
 *
 * Every kind has a lane of its own (docs/outbox.md): the lane claims as many due jobs as it has free slots
 * (`concurrency`) and starts each at once; a finished job frees its slot, which claims the next one. No
 * job waits for another's batch or another kind, so a relay that answers after a minute holds one mail
 * slot, and payment webhooks, paylinks and the ERP hand-off never wait for mail. The leases of running
 * jobs are renewed by one heartbeat statement; a claim is fenced by its attempt number, so a runner that
 * lost its job (taken over after a stall) cannot mark it done, failed or dead.
 */
export class OutboxDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private listener: pg.Client | undefined;
  private stopped = false;
  private readonly own = new Map<string, OutboxHandler<never>>();
  private readonly laneOpts = new Map<string, LaneOptions>();
  private readonly lanes = new Map<string, Lane>();
  /** Claims and jobs in progress (drain() and stop() wait for them). */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Done jobs not yet marked (flushed together, see {@link flushDone}). */
  private doneQueue: JobClaim[] = [];
  private flushing: Promise<void> | undefined;
  private completed = 0;

  constructor(private readonly opts: OutboxDispatcherOptions) {
    const mailer = opts.mailer;
    if (mailer) {
      this.own.set('mail', (async (job: OutboxJob<MailPayload>) => {
        try {
          await mailer.send({ ...job.payload, from: opts.from ?? 'shop@localhost', messageId: job.messageId ?? messageIdFor(job.dedupeKey) });
        } catch (err) {
          if (err instanceof MailNotRetriedError) throw new PermanentJobError(err.message);
          throw err;
        }
      }));
      this.laneOpts.set('mail', { ...MAIL_LANE });
    }
    for (const [kind, h] of Object.entries(opts.handlers ?? {})) this.own.set(kind, h);
    for (const [kind, l] of Object.entries(opts.lanes ?? {})) this.laneOpts.set(kind, { ...this.laneOpts.get(kind), ...l });
  }

  /**
   * Adds (or replaces) the handler of a kind for this dispatcher; `maxAttempts` overrides the dispatcher's
   * limit for this kind (e.g. a hand-off that must outlast a long outage of a third party), `concurrency`
   * and `deadlineMs` its lane's limits.
   */
  register<P>(kind: OutboxKind, handler: OutboxHandler<P>, opts: LaneOptions = {}): this {
    this.own.set(kind, handler);
    const defined = Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined));
    this.laneOpts.set(kind, { ...this.laneOpts.get(kind), ...defined });
    this.wake();
    return this;
  }

  private handlerOf(kind: string): OutboxHandler<never> | undefined {
    return this.own.get(kind) ?? registry.get(kind);
  }

  private kinds(): string[] {
    return [...new Set([...this.own.keys(), ...registry.keys()])];
  }

  private laneOf(kind: string): Lane {
    let lane = this.lanes.get(kind);
    if (!lane) this.lanes.set(kind, (lane = { kind, running: new Map(), claiming: false, again: false }));
    return lane;
  }

  private limit(kind: string, key: keyof LaneOptions): number {
    const own = this.laneOpts.get(kind)?.[key];
    if (own !== undefined) return own;
    if (key === 'maxAttempts') return this.opts.maxAttempts ?? 50;
    if (key === 'concurrency') return this.opts.concurrency ?? 20;
    return this.opts.deadlineMs ?? 120_000;
  }

  private get leaseSeconds(): number {
    return this.opts.leaseSeconds ?? 10;
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

  /** Lets every lane with a free slot claim due jobs now (a lane already claiming claims again after). */
  wake(): void {
    if (this.stopped || !this.timer) return;
    for (const kind of this.kinds()) this.fill(kind);
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p)).catch(() => undefined);
    return p;
  }

  /** Claims as many due jobs of `kind` as its lane has free slots and starts each. */
  private fill(kind: string): void {
    if (this.stopped) return;
    const lane = this.laneOf(kind);
    if (lane.claiming) {
      lane.again = true;
      return;
    }
    const free = this.limit(kind, 'concurrency') - lane.running.size;
    if (free <= 0) return;
    lane.claiming = true;
    lane.again = false;
    let full = false;
    this.track(
      claimDue(this.opts.database.db, [kind], free, this.leaseSeconds)
        .then((rows) => {
          full = rows.length === free;
          // A stop() between the claim and here: the jobs start anyway (their leases are held) and finish.
          for (const m of rows) this.startJob(lane, m);
        })
        .catch((err) => this.opts.logger.warn({ kind, err: { message: safeErrorText(err) } }, 'outbox claim failed'))
        .finally(() => {
          lane.claiming = false;
          // A full claim may have left due jobs behind; a wake-up during the claim may have new ones.
          if (full || lane.again) this.fill(kind);
        }),
    );
  }

  private startJob(lane: Lane, m: OutboxMessage): void {
    const claim = { id: Number(m.id), attempts: m.attempts };
    const abort = new AbortController();
    lane.running.set(claim.id, { claim, abort });
    this.ensureHeartbeat();
    this.track(
      this.runOne(m, claim, abort)
        .catch((err) => this.opts.logger.warn({ outboxId: claim.id, err: { message: safeErrorText(err) } }, 'outbox job bookkeeping failed'))
        .finally(() => {
          lane.running.delete(claim.id);
          this.fill(lane.kind);
        }),
    );
  }

  /** Renews the leases of every running job every third of the lease, while any runs. */
  private ensureHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => void this.beat(), Math.max(100, (this.leaseSeconds * 1000) / 3));
    this.heartbeat.unref();
  }

  private async beat(): Promise<void> {
    const running = [...this.lanes.values()].flatMap((l) => [...l.running.values()]);
    if (running.length === 0) {
      clearInterval(this.heartbeat);
      this.heartbeat = undefined;
      return;
    }
    try {
      const held = new Set(await renewLeases(this.opts.database.db, running.map((r) => r.claim), this.leaseSeconds));
      for (const r of running) {
        // Finished meanwhile (no longer in its lane) is not a loss.
        const stillRunning = [...this.lanes.values()].some((l) => l.running.get(r.claim.id) === r);
        if (!held.has(r.claim.id) && stillRunning) {
          this.opts.logger.warn({ outboxId: r.claim.id }, 'outbox job lease lost (taken over or finished elsewhere); its run is abandoned');
          r.abort.abort(new Error('lease lost'));
        }
      }
    } catch (err) {
      // The next beat tries again; the lease lasts three beats.
      this.opts.logger.warn({ err: { message: safeErrorText(err) } }, 'outbox lease renewal failed');
    }
  }

  /**
   * Runs everything due now and waits until no job is left running or due; returns how many jobs
   * completed meanwhile (for tests and one-off runs; a started dispatcher does this by itself).
   */
  async drain(): Promise<number> {
    const before = this.completed;
    for (const kind of this.kinds()) this.fill(kind);
    while (this.inFlight.size > 0 || this.flushing) {
      await Promise.allSettled([...this.inFlight]);
      await this.flushing;
    }
    return this.completed - before;
  }

  /** Runs one claimed job and records its outcome (done jobs are marked by {@link flushDone}). */
  private async runOne(m: OutboxMessage, claim: JobClaim, abort: AbortController): Promise<void> {
    const db = this.opts.database.db;
    const handler = this.handlerOf(m.kind);
    const job: OutboxJob<never> = { id: claim.id, kind: m.kind, dedupeKey: m.dedupe_key, payload: m.payload as never, attempts: m.attempts, messageId: m.message_id };
    const deadlineMs = this.limit(m.kind, 'deadlineMs');
    let timer: NodeJS.Timeout | undefined;
    try {
      if (!handler) throw new Error(`no handler for outbox kind ${m.kind}`);
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const err = new JobDeadlineError(deadlineMs);
          abort.abort(err);
          reject(err);
        }, deadlineMs);
      });
      const lost = new Promise<never>((_, reject) => abort.signal.addEventListener('abort', () => reject(abort.signal.reason as Error), { once: true }));
      await Promise.race([handler(job, { database: this.opts.database, logger: this.opts.logger, signal: abort.signal }), deadline, lost]);
    } catch (err) {
      if (abort.signal.aborted && !(abort.signal.reason instanceof JobDeadlineError)) return; // lease lost: the job is another runner's now
      const text = safeErrorText(err);
      if (err instanceof PermanentJobError || m.attempts >= this.limit(m.kind, 'maxAttempts')) {
        await markDead(db, claim, text);
        this.opts.logger.error({ outboxId: claim.id, kind: m.kind, attempts: m.attempts, error: text }, 'outbox job failed permanently (dead)');
        if (err instanceof PermanentJobError) await this.opts.onDead?.(job, err).catch((e: unknown) => this.opts.logger.warn({ outboxId: claim.id, error: safeErrorText(e) }, 'recording a dead job failed'));
        return;
      }
      const delay = Math.min(this.opts.maxBackoffMs ?? 60_000, (this.opts.baseBackoffMs ?? 1_000) * 2 ** Math.max(0, m.attempts - 1));
      const jitter = Math.floor(Math.random() * Math.min(1_000, delay / 4));
      await markFailed(db, claim, text, new Date(Date.now() + delay + jitter));
      this.opts.logger.warn({ outboxId: claim.id, kind: m.kind, attempts: m.attempts, retryInMs: delay, error: text }, 'outbox job failed; will retry');
      return;
    } finally {
      clearTimeout(timer);
    }
    this.completed++;
    this.doneQueue.push(claim);
    // A failed mark is not a failed job: the job stays leased and runs again once the lease ends.
    await (this.flushing ??= this.flushDone());
  }

  /**
   * Marks the queued done jobs in one statement: jobs finishing together (a busy lane) share it. A crash
   * before it leaves them leased; they run again once the lease ends (handlers are idempotent).
   */
  private async flushDone(): Promise<void> {
    try {
      // Let the jobs finishing in this turn join the statement.
      await new Promise((r) => setImmediate(r));
      while (this.doneQueue.length > 0) {
        const batch = this.doneQueue;
        this.doneQueue = [];
        await markSentMany(this.opts.database.db, batch);
      }
    } finally {
      this.flushing = undefined;
    }
  }

  /** Stops claiming; waits for the jobs in hand (each at most its deadline), then closes the listener. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    while (this.inFlight.size > 0 || this.flushing) {
      await Promise.allSettled([...this.inFlight]);
      await this.flushing;
    }
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
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
