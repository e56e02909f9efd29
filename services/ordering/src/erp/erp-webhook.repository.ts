/**
 * SQL of the ERP webhook jobs (`erp_webhook_jobs`, migration 0007): one row per ERP entity with pending
 * work; deliveries coalesce into it (generation bump); workers claim with `FOR UPDATE SKIP LOCKED` in a
 * short statement and do the work outside any transaction.
 */
import { sql, type Kysely, type Selectable } from 'kysely';
import type { DB } from '../db/schema';
import type { ErpWebhookJobsTable } from '../db/tables/erp.tables';

/** Channel the webhook workers LISTEN on; its notifications carry no payload. */
export const ERP_WEBHOOK_CHANNEL = 'erp_webhook_jobs';

/** A claimed job row. */
export type ErpWebhookJobRow = Selectable<ErpWebhookJobsTable>;

/** Records a delivery: a new row, or the existing one bumped (due at once). */
export async function recordDelivery(db: Kysely<DB>, d: { erpSystem: string; entityName: string; entityId: string; type: string }): Promise<void> {
  await db
    .insertInto('erp_webhook_jobs')
    .values({ erp_system: d.erpSystem, entity_name: d.entityName, entity_id: d.entityId, last_type: d.type })
    .onConflict((oc) =>
      oc.columns(['erp_system', 'entity_name', 'entity_id']).doUpdateSet({
        generation: sql`erp_webhook_jobs.generation + 1`,
        deliveries: sql`erp_webhook_jobs.deliveries + 1`,
        last_type: d.type,
        received_at: new Date(),
        next_attempt_at: sql`least(erp_webhook_jobs.next_attempt_at, now())`,
      }),
    )
    .execute();
  // Transactional like the row: wakes the workers of every instance once it is committed.
  await sql`select pg_notify(${ERP_WEBHOOK_CHANNEL}, '')`.execute(db);
}

/** Claims up to `limit` due jobs for `leaseSeconds` (an expired lease — crashed worker — is claimable again). */
export async function claimDueJobs(db: Kysely<DB>, limit: number, leaseSeconds: number): Promise<ErpWebhookJobRow[]> {
  const r = await sql<ErpWebhookJobRow>`
    update erp_webhook_jobs set locked_until = now() + make_interval(secs => ${leaseSeconds}), attempts = attempts + 1
    where id in (
      select id from erp_webhook_jobs
      where next_attempt_at <= now() and (locked_until is null or locked_until < now())
      order by next_attempt_at, id
      limit ${limit}
      for update skip locked)
    returning *`.execute(db);
  return r.rows;
}

/**
 * Finishes a job: deletes the row if no delivery arrived since the claim (same generation); otherwise
 * releases it due at once, so the newer delivery is processed too. Answers whether it was deleted.
 */
export async function completeJob(db: Kysely<DB>, id: string, generation: number): Promise<boolean> {
  const deleted = await db.deleteFrom('erp_webhook_jobs').where('id', '=', id).where('generation', '=', generation).returning('id').executeTakeFirst();
  if (deleted) return true;
  await db
    .updateTable('erp_webhook_jobs')
    .set({ locked_until: null, attempts: 0, last_error: null, next_attempt_at: new Date() })
    .where('id', '=', id)
    .execute();
  return false;
}

/** Releases a failed job for a retry at `nextAttemptAt` (`error` must be free of secrets). */
export async function failJob(db: Kysely<DB>, id: string, error: string, nextAttemptAt: Date): Promise<void> {
  await db
    .updateTable('erp_webhook_jobs')
    .set({ locked_until: null, last_error: error.slice(0, 500), next_attempt_at: nextAttemptAt })
    .where('id', '=', id)
    .execute();
}

/**
 * Extends the leases of running jobs to `leaseSeconds` from now (the worker's heartbeat); a job claimed
 * again since (its `attempts` moved on) or finished is left as it is.
 */
export async function renewJobLeases(db: Kysely<DB>, jobs: readonly { id: string; attempts: number }[], leaseSeconds: number): Promise<void> {
  if (jobs.length === 0) return;
  await sql`update erp_webhook_jobs j set locked_until = now() + make_interval(secs => ${leaseSeconds})
    from unnest(${jobs.map((x) => x.id)}::bigint[], ${jobs.map((x) => x.attempts)}::int[]) as c(id, attempts)
    where j.id = c.id and j.attempts = c.attempts`.execute(db);
}

/** Backlog of ERP webhook jobs, as one kind of the queue metrics (`erp-webhook`): the figures of `OutboxBacklogRow`. */
export async function selectErpWebhookBacklog(
  db: Kysely<DB>,
): Promise<{ pending: number; retrying: number; running: number; oldest_age_seconds: number | null }> {
  const r = await sql<{ pending: number; retrying: number; running: number; oldest_age_seconds: number | null }>`
    select count(*)::int as pending,
           (count(*) filter (where last_error is not null))::int as retrying,
           (count(*) filter (where locked_until > now()))::int as running,
           extract(epoch from now() - min(received_at))::float8 as oldest_age_seconds
      from erp_webhook_jobs`.execute(db);
  return r.rows[0];
}
