/**
 * Transactional job outbox (docs/decisions.md §6). Business code enqueues a job inside its own transaction
 * (`enqueue`, or `enqueueMail` for e-mail), so a job exists exactly when the business change committed;
 * the {@link OutboxDispatcher} runs it afterwards through the handler it was given for its kind, outside any
 * transaction, retrying with exponential backoff. One (kind, dedupe key) → one job. A job that fails
 * `maxAttempts` times, or throws {@link PermanentJobError}, becomes dead (`dead_at`) and stays visible.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';
import type { MailPayload } from '../mail/mailer';
import { messageIdFor, safeErrorText, type OutboxHandlerContext, type OutboxKind } from './outbox.jobs';
import { insertMessage, releaseReservedJob, type NewOutboxMessage } from './outbox.repository';

// One import path for the outbox's users: the job vocabulary and the dispatcher live in files of their own.
export {
  /** @internal */ messageIdFor,
  PermanentJobError,
  /** @internal */ safeErrorText,
  type OutboxHandler,
  type OutboxHandlerContext,
  type OutboxJob,
  type OutboxKind,
} from './outbox.jobs';
export { OutboxDispatcher, type LaneOptions, /** @internal */ type OutboxDispatcherOptions } from './outbox.dispatcher';

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
