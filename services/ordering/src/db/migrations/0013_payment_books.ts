import { sql, type Kysely } from 'kysely';

/**
 * Payments summed per order, refunds cross-checked, short discount holds (docs/payrexx.md "Payments of an
 * order", "Refunds"; ordering README "Discount uses of unpaid orders"):
 * - `payment_receipts`: each confirmed charge of an order recorded once (primary key = the provider's
 *   transaction id), so several part payments add up and a repeated or concurrent webhook counts once.
 *   Orders paid before this migration get their paying transaction as a receipt of the gross total.
 * - `payment_refunds.reported_refunded_cents`: the provider's `invoice.refundedAmount` of the refund
 *   transaction (the charge's refunded total as the provider counts it), to compare with the recorded refunds.
 * - `discount_redemptions.released_at`: when the short hold of an unpaid order's code use ended and the use
 *   went back to the pool (the row stays: it records the order's discount); null while held or used.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table payment_receipts (
      transaction_id integer primary key,
      order_id integer not null references orders (id) on delete cascade,
      amount_cents bigint not null check (amount_cents >= 0),
      currency text not null,
      mode text,
      recorded_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index payment_receipts_order_idx on payment_receipts (order_id)`.execute(db);
  await sql`
    insert into payment_receipts (transaction_id, order_id, amount_cents, currency)
    select payment_transaction_id, id, gross_total_cents, currency from orders where payment_transaction_id is not null
    on conflict do nothing`.execute(db);
  await sql`alter table payment_refunds add column reported_refunded_cents bigint`.execute(db);
  await sql`alter table discount_redemptions add column released_at timestamptz`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table discount_redemptions drop column released_at`.execute(db);
  await sql`alter table payment_refunds drop column reported_refunded_cents`.execute(db);
  await sql`drop table payment_receipts`.execute(db);
}
