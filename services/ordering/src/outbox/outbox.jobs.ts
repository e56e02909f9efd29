/**
 * The vocabulary of the transactional job outbox (docs/decisions.md §6, docs/outbox.md): what a job and its
 * handler are, the error that makes a job dead at once, the stable Message-ID of e-mail and the error text
 * stored with a failed job. Which handler runs which kind is decided where the app is composed
 * (`composition.ts`, `OrderingServices.outboxJobs`) and given to each dispatcher. Used by the enqueuers
 * (`outbox.service.ts`) and the dispatcher (`outbox.dispatcher.ts`).
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Database } from '@sports-timing/shared';
import type { DB } from '../db/schema';

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

/** The stable Message-ID of a dedupe key, e.g. `<3f2a…@sports-timing.ordering>`. */
export function messageIdFor(dedupeKey: string): string {
  return `<${createHash('sha256').update(dedupeKey).digest('hex').slice(0, 32)}@sports-timing.ordering>`;
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
