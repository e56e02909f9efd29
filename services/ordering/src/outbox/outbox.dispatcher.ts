/**
 * The outbox dispatcher (docs/outbox.md): runs due jobs of every kind in lanes of their own, with bounded
 * concurrency, a deadline per job and short leases renewed by a heartbeat. Safe to run in every instance.
 */
import type { Logger } from 'pino';
import { ProviderError, startListenSession, type Database, type ListenSession } from '@sports-timing/shared';
import type { DB } from '../db/schema';
import { SMTP_POOL, type Mailer, type MailPayload } from '../mail/mailer';
import type { DatabaseWait } from '@sports-timing/shared/src/db-wait';
import { messageIdFor, PermanentJobError, safeErrorText, type OutboxHandler, type OutboxJob, type OutboxKind } from './outbox.jobs';
import { claimDue, markDead, markFailed, markSentMany, OUTBOX_CHANNEL, renewLeases, type JobClaim, type OutboxMessage } from './outbox.repository';

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
  /** Claims failing because the database is not there yet or busy: one WARN per outage (README "Start-up"). */
  databaseWait?: DatabaseWait;
  /** Sender address of mail. */
  from?: string;
  /** Handlers by kind besides `mail` (the app's: `OrderingServices.outboxJobs`, composed in `composition.ts`). */
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
const MAIL_LANE: Required<Pick<LaneOptions, 'concurrency' | 'deadlineMs'>> = {
  concurrency: SMTP_POOL.maxConnections,
  deadlineMs: SMTP_POOL.socketTimeout + 60_000,
};

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
  private listener: ListenSession | undefined;
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
      this.own.set('mail', async (job: OutboxJob<MailPayload>) => {
        try {
          await mailer.send({ ...job.payload, from: opts.from ?? 'shop@localhost', messageId: job.messageId ?? messageIdFor(job.dedupeKey) });
        } catch (err) {
          // The kit's verdict (`MailNotRetriedError` is a ProviderError that is not retryable): an operator decides.
          if (err instanceof ProviderError && !err.retryable) throw new PermanentJobError(err.message);
          throw err;
        }
      });
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
    return this.own.get(kind);
  }

  private kinds(): string[] {
    return [...this.own.keys()];
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
    this.listen();
    this.wake();
  }

  private listen(): void {
    if (this.stopped) return;
    // A dedicated session outside the pool (LISTEN needs a session of its own), reopened with backoff when lost;
    // the poll covers the gaps, and a reconnect wakes every lane for what was announced meanwhile.
    this.listener = startListenSession({
      url: this.opts.database.url,
      channels: [OUTBOX_CHANNEL],
      applicationName: 'ordering-outbox',
      logger: this.opts.logger,
      onNotification: (n) => this.wake(n.payload),
      onConnected: () => this.wake(),
    });
  }

  /**
   * Lets the lane of `kind` (a notification's payload), or every lane when no kind of ours is given, claim due
   * jobs now if it has a free slot (a lane already claiming claims again after).
   */
  wake(kind?: string): void {
    if (this.stopped || !this.timer) return;
    if (kind && this.own.has(kind)) this.fill(kind);
    else if (!kind) for (const k of this.kinds()) this.fill(k);
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
    void this.track(
      claimDue(this.opts.database.db, kind, free, this.leaseSeconds)
        .then((rows) => {
          this.opts.databaseWait?.succeeded();
          full = rows.length === free;
          // A stop() between the claim and here: the jobs start anyway (their leases are held) and finish.
          for (const m of rows) this.startJob(lane, m);
        })
        .catch((err) => {
          if (!this.opts.databaseWait?.failed(err)) this.opts.logger.warn({ kind, err: { message: safeErrorText(err) } }, 'outbox claim failed');
        })
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
    void this.track(
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
      const held = new Set(
        await renewLeases(
          this.opts.database.db,
          running.map((r) => r.claim),
          this.leaseSeconds,
        ),
      );
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
    const job: OutboxJob<never> = {
      id: claim.id,
      kind: m.kind,
      dedupeKey: m.dedupe_key,
      payload: m.payload as never,
      attempts: m.attempts,
      messageId: m.message_id,
    };
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
        if (err instanceof PermanentJobError)
          await this.opts
            .onDead?.(job, err)
            .catch((e: unknown) => this.opts.logger.warn({ outboxId: claim.id, error: safeErrorText(e) }, 'recording a dead job failed'));
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
    await this.listener?.stop();
  }
}
