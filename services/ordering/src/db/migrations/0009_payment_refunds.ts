import { sql, type Kysely } from 'kysely';

/**
 * Payrexx refunds and flood bounds of the payment webhook (docs/payrexx.md):
 * - `payment_refunds`: each refund transaction (its own provider transaction pointing at the charge by
 *   `originalTransactionId`) recorded once per order, so partial refunds add up to the paid amount.
 * - `payment_deliveries.repeats` and a unique index over (transaction id, claimed status) of deliveries
 *   still `queued`: a repeated delivery is merged into the pending one instead of causing another
 *   provider call. Older pending duplicates are marked `merged` first so the index can be built.
 * - An index on `received_at` for the retention purge.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table payment_refunds (
      transaction_id integer primary key,
      order_id integer not null references orders (id) on delete cascade,
      original_transaction_id integer not null,
      amount_cents bigint not null check (amount_cents > 0),
      currency text not null,
      status text not null,
      recorded_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index payment_refunds_order_idx on payment_refunds (order_id)`.execute(db);

  await sql`alter table payment_deliveries add column repeats integer not null default 0`.execute(db);
  await sql`
    update payment_deliveries d set outcome = 'merged'
    where outcome = 'queued' and exists (
      select 1 from payment_deliveries e
      where e.outcome = 'queued' and e.transaction_id = d.transaction_id
        and coalesce(e.claimed_status, '') = coalesce(d.claimed_status, '') and e.id < d.id)`.execute(db);
  await sql`create unique index payment_deliveries_pending_idx on payment_deliveries (transaction_id, (coalesce(claimed_status, ''))) where outcome = 'queued'`.execute(db);
  await sql`create index payment_deliveries_received_idx on payment_deliveries (received_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index payment_deliveries_received_idx`.execute(db);
  await sql`drop index payment_deliveries_pending_idx`.execute(db);
  await sql`alter table payment_deliveries drop column repeats`.execute(db);
  await sql`drop table payment_refunds`.execute(db);
}
