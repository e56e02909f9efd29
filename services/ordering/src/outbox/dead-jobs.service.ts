/**
 * Dead letters of the outbox for operators (ordering spec §4.8 `listDeadJobs`, `retryDeadJob`; runbook in
 * docs/outbox.md): list the jobs that were given up, with their last error, and give one another run.
 */
import { ApiError } from '@sports-timing/shared';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';
import type { components } from '../generated/openapi';
import { reviveDeadMessage, selectDeadMessages, type DeadMessage } from './outbox.repository';

type DeadJob = components['schemas']['DeadJob'];

/**
 * The order a job belongs to, from its dedupe key (`order-confirmation:<id>`, `order-paylink:<id>`, the
 * flow's `order:<id>` keys of paylink and ERP hand-off jobs), or undefined.
 */
export function orderIdOfDedupeKey(dedupeKey: string): number | undefined {
  const m = /^order-(?:confirmation|paylink):(\d+)$/.exec(dedupeKey) ?? /^order:(\d+)$/.exec(dedupeKey);
  return m ? Number(m[1]) : undefined;
}

function toDto(m: DeadMessage): DeadJob {
  const orderId = orderIdOfDedupeKey(m.dedupe_key);
  return {
    id: m.id,
    kind: m.kind,
    dedupeKey: m.dedupe_key,
    ...(orderId !== undefined ? { orderId } : {}),
    attempts: m.attempts,
    lastError: m.last_error,
    createdAt: m.created_at.toISOString(),
    deadAt: m.dead_at ? m.dead_at.toISOString() : null,
  };
}

/** Dead jobs, newest first (`limit` as `listDeadJobs` bounds it; `beforeId` pages; `kind` filters). */
export async function listDeadJobs(db: Kysely<DB>, opts: { kind?: string; beforeId?: number; limit: number }): Promise<DeadJob[]> {
  return (await selectDeadMessages(db, { kind: opts.kind, beforeId: opts.beforeId, limit: opts.limit })).map(toDto);
}

/** Gives dead job `id` another run (due now, attempts from zero); 404 ApiError when no dead job has this id. */
export async function retryDeadJob(db: Kysely<DB>, id: number): Promise<DeadJob> {
  const revived = await reviveDeadMessage(db, id);
  if (!revived) throw new ApiError(404, `No dead job ${id}.`);
  return toDto(revived);
}
