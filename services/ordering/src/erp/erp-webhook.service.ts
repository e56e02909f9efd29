/**
 * ERP webhooks (`receiveErpWebhook`; docs/decisions.md §6 ERP): the ERP sends only
 * `{ entityId, entityName, type }`, unsigned, to a URL carrying our secret.
 *
 * - {@link verifyWebhookSecret}: constant-time comparison with the configured secret.
 * - {@link acceptWebhook}: records the delivery durably (one pending row per entity; repeated deliveries
 *   coalesce) — the HTTP answer follows at once; entity names without a handler are acknowledged and
 *   ignored (nothing recorded).
 * - {@link ErpWebhookWorker}: processes the rows in the background on every instance (claims with
 *   `FOR UPDATE SKIP LOCKED`, leases, retries with capped exponential backoff), dispatching by
 *   `entityName` to the app's {@link ErpEntityHandler} of that name. Handlers re-read the entity from the ERP —
 *   never trust the webhook body — and must be idempotent (a row may run again after a crash or when a
 *   delivery arrived during processing).
 *
 * Which names have handlers is decided in one place, the composition root (`composition.ts`): `article`
 * (re-import that one article, `catalog.import.ts`), `customer`/`party` (re-import the retailer list of
 * `weclapp`, `retailers.service.ts`) and `salesOrder` (what a changed sales order means for the shop order,
 * `SalesOrderSync.applyErpSalesOrder`).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { startListenSession, type ListenSession } from '@sports-timing/shared';
import type { DB } from '../db/schema';
import type { ErpClient } from './erp.client';
import type { ErpSystem } from './erp.types';
import { claimDueJobs, completeJob, ERP_WEBHOOK_CHANNEL, failJob, recordDelivery, renewJobLeases } from './erp-webhook.repository';

/** What an entity handler gets: the ERP system, the entity id and the latest delivery's `type`. */
interface ErpEntityEvent {
  erpSystem: ErpSystem;
  entityName: string;
  entityId: string;
  /** `type` of the latest coalesced delivery (`create`, `update`, `delete`, …); informational. */
  type: string;
}

/** Dependencies handed to entity handlers. */
interface ErpEntityHandlerContext {
  db: Kysely<DB>;
  erp: ErpClient;
  logger: Logger;
}

/** Applies one ERP entity change; re-reads the entity from the ERP; throws to be retried later. */
export type ErpEntityHandler = (event: ErpEntityEvent, ctx: ErpEntityHandlerContext) => Promise<void>;

/**
 * The handlers of an app by ERP `entityName` (composed in `composition.ts`, `OrderingServices.erpEntityHandlers`):
 * the webhook endpoint records deliveries of exactly these names and the worker runs them.
 */
export type ErpEntityHandlers = Readonly<Record<string, ErpEntityHandler>>;

/** Constant-time check of a presented webhook secret; false when none is configured or presented. */
export function verifyWebhookSecret(configured: string | undefined, presented: string | undefined): boolean {
  if (!configured || presented === undefined) return false;
  // Hashing first gives equal lengths, so timingSafeEqual never leaks the secret's length either.
  const a = createHash('sha256').update(configured).digest();
  const b = createHash('sha256').update(presented).digest();
  return timingSafeEqual(a, b);
}

/**
 * Records a verified delivery for background processing; answers whether it will be processed (false, and
 * nothing recorded, for an entity name without a handler in `handlers`).
 */
export async function acceptWebhook(
  db: Kysely<DB>,
  handlers: ErpEntityHandlers,
  d: { erpSystem: ErpSystem; entityName: string; entityId: string; type: string },
): Promise<boolean> {
  if (!Object.hasOwn(handlers, d.entityName)) return false;
  await recordDelivery(db, d);
  return true;
}

/** Options of {@link ErpWebhookWorker}. */
export interface ErpWebhookWorkerOptions {
  db: Kysely<DB>;
  /** The ERP client (one serves both systems). */
  erp: ErpClient;
  logger: Logger;
  /** What to run per entity name (the app's: `OrderingServices.erpEntityHandlers`); rows of other names are completed untouched. */
  handlers: ErpEntityHandlers;
  /** PostgreSQL URL for LISTEN (wake-ups across instances); without it the worker only polls. */
  listenUrl?: string;
  /** Poll interval in ms; default 2000. */
  pollMs?: number;
  /**
   * Lease of a claimed job in seconds, renewed every third of it while the job runs (heartbeat), so a dead
   * instance's jobs are taken over within it; default 10.
   */
  leaseSeconds?: number;
  /** Jobs processed at once by this worker; default 4. */
  concurrency?: number;
  /** Longest run of one job, ms (then it counts as failed and is retried with backoff); default 120000. */
  deadlineMs?: number;
  /** Retry backoff: base and cap in ms; defaults 2000 and 600000. */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
}

/** Background processor of `erp_webhook_jobs`; several may run (one per instance). */
export class ErpWebhookWorker {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  /** Set by stop(): a drain in progress claims no further batch (tests' direct drain() calls run while never started). */
  private stopping = false;
  private listener: ListenSession | null = null;

  constructor(private readonly o: ErpWebhookWorkerOptions) {}

  /** Starts polling (and listening when `listenUrl` is given). */
  async start(): Promise<void> {
    this.stopped = false;
    this.stopping = false;
    if (this.o.listenUrl) {
      // Its own session, reopened with backoff when lost (a restart, the database out of connections); the
      // poll below covers the gaps, and every reconnect runs a pass for what was announced meanwhile.
      this.listener = startListenSession({
        url: this.o.listenUrl,
        channels: [ERP_WEBHOOK_CHANNEL],
        applicationName: 'ordering-erp-webhooks',
        logger: this.o.logger,
        onNotification: () => this.kick(),
        onConnected: () => this.kick(),
      });
      // Listening before the first pass when the database answers; never held up by one that does not.
      let bound: NodeJS.Timeout | undefined;
      await Promise.race([this.listener.ready, new Promise((r) => (bound = setTimeout(r, 5_000)))]);
      clearTimeout(bound);
    }
    const tick = () => {
      if (this.stopped) return;
      this.kick();
      this.timer = setTimeout(tick, this.o.pollMs ?? 2_000);
      this.timer.unref();
    };
    tick();
  }

  /** Stops and waits for the batch in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    await this.listener?.stop();
    this.listener = null;
    await this.running;
  }

  /** Runs a pass soon (coalesced with one in progress, which claims again at once). */
  kick(): void {
    if (this.running) {
      this.again = true;
      this.nudge?.();
      return;
    }
    this.running = this.drain()
      .then(() => undefined)
      .catch((err) => this.o.logger.error({ err: (err as Error).message }, 'ERP webhook pass failed'))
      .finally(() => {
        this.running = null;
        if (this.again && !this.stopped) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Resolves the wait of a drain in progress (a kick: new deliveries may be due). */
  private nudge: (() => void) | null = null;

  /**
   * Processes due jobs until none is left; answers how many were processed (tests call it directly). Up to
   * `concurrency` jobs run at once and a finished one frees its slot for the next due job at once, so one
   * slow entity (an ERP call hanging until its deadline) holds one slot, not the pass.
   */
  async drain(): Promise<number> {
    const concurrency = this.o.concurrency ?? 4;
    const leaseSeconds = this.o.leaseSeconds ?? 10;
    const running = new Map<string, { attempts: number; done: Promise<void> }>();
    const heartbeat = setInterval(
      () => {
        const held = [...running].map(([id, r]) => ({ id, attempts: r.attempts }));
        renewJobLeases(this.o.db, held, leaseSeconds).catch((err: unknown) =>
          this.o.logger.warn({ err: (err as Error).message }, 'ERP webhook lease renewal failed'),
        );
      },
      (leaseSeconds * 1000) / 3,
    );
    heartbeat.unref();
    let total = 0;
    try {
      // A stopping instance finishes the jobs in hand and leaves the rest to the others (a steady stream of
      // webhooks would otherwise keep it from ever stopping).
      while (!this.stopping) {
        const free = concurrency - running.size;
        const jobs = free > 0 ? await claimDueJobs(this.o.db, free, leaseSeconds) : [];
        for (const job of jobs) {
          const done = this.process(job).finally(() => running.delete(job.id));
          running.set(job.id, { attempts: job.attempts, done });
        }
        total += jobs.length;
        if (running.size === 0) return total;
        if (free > 0 && jobs.length === free) continue;
        // Until a slot frees or a delivery (or the poll) kicks.
        await Promise.race([...[...running.values()].map((r) => r.done), new Promise<void>((r) => (this.nudge = r))]);
        this.nudge = null;
      }
      await Promise.allSettled([...running.values()].map((r) => r.done));
      return total;
    } finally {
      clearInterval(heartbeat);
    }
  }

  private async process(job: Awaited<ReturnType<typeof claimDueJobs>>[number]): Promise<void> {
    const handler = Object.hasOwn(this.o.handlers, job.entity_name) ? this.o.handlers[job.entity_name] : undefined;
    const event: ErpEntityEvent = { erpSystem: job.erp_system as ErpSystem, entityName: job.entity_name, entityId: job.entity_id, type: job.last_type };
    const deadlineMs = this.o.deadlineMs ?? 120_000;
    let timer: NodeJS.Timeout | undefined;
    try {
      const deadline = new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new Error(`job exceeded its deadline of ${deadlineMs} ms`)), deadlineMs)),
      );
      if (handler) await Promise.race([handler(event, { db: this.o.db, erp: this.o.erp, logger: this.o.logger }), deadline]);
      await completeJob(this.o.db, job.id, job.generation);
    } catch (err) {
      const base = this.o.baseBackoffMs ?? 2_000;
      const delay = Math.min(this.o.maxBackoffMs ?? 600_000, base * 2 ** Math.min(job.attempts - 1, 20));
      const message = err instanceof Error ? err.message : String(err);
      this.o.logger.warn(
        { erpSystem: event.erpSystem, entityName: event.entityName, entityId: event.entityId, attempts: job.attempts, err: message },
        'ERP webhook job failed; will retry',
      );
      await failJob(this.o.db, job.id, message, new Date(Date.now() + delay)).catch((e: unknown) =>
        this.o.logger.warn({ err: (e as Error).message }, 'ERP webhook job release failed; its lease ends on its own'),
      );
    } finally {
      clearTimeout(timer);
    }
  }
}
