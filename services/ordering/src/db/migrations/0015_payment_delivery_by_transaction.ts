import { sql, type Kysely } from 'kysely';

/**
 * Payment webhook deliveries merge by transaction id (docs/payrexx.md "Flood bounds"): the unique index over
 * deliveries still `queued` keys on the transaction id alone, no longer on the claimed status (free text in a
 * forged body, so each new status string cost a provider call). Older pending duplicates of one transaction
 * are marked `merged` first so the index can be built. An index on (transaction id, received_at) serves the
 * look-up of a transaction's recent re-fetch.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    update payment_deliveries d set outcome = 'merged'
    where outcome = 'queued' and exists (
      select 1 from payment_deliveries e where e.outcome = 'queued' and e.transaction_id = d.transaction_id and e.id < d.id)`.execute(db);
  await sql`drop index payment_deliveries_pending_idx`.execute(db);
  await sql`create unique index payment_deliveries_pending_idx on payment_deliveries (transaction_id) where outcome = 'queued'`.execute(db);
  await sql`create index payment_deliveries_transaction_idx on payment_deliveries (transaction_id, received_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index payment_deliveries_transaction_idx`.execute(db);
  await sql`drop index payment_deliveries_pending_idx`.execute(db);
  await sql`create unique index payment_deliveries_pending_idx on payment_deliveries (transaction_id, (coalesce(claimed_status, ''))) where outcome = 'queued'`.execute(db);
}
