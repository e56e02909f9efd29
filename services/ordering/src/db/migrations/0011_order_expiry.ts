import { sql, type Kysely } from 'kysely';

/**
 * Unpaid orders expire, late payments are flagged, idempotent replies are kept as written (ordering
 * README "Unpaid orders expire"):
 * - `orders.cancellation_reason`: why a cancelled order was cancelled (`expired`, `paymentCancelled`).
 * - `orders.late_payment_transaction_id`: a payment the provider confirmed after the order was cancelled;
 *   the money has to go back (shown to admins in `dev/get-orders`).
 * - a partial index on the unpaid orders by creation time, which the expiry sweep reads.
 * - `idempotency_keys.response_body` becomes `json` (kept as written, key order included), so a retry
 *   is answered the bytes of the first answer.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table orders add column cancellation_reason text, add column late_payment_transaction_id integer`.execute(db);
  await sql`create index orders_pending_payment_created_idx on orders (created_at) where state = 'pending_payment'`.execute(db);
  await sql`alter table idempotency_keys alter column response_body type json using response_body::json`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table idempotency_keys alter column response_body type jsonb using response_body::jsonb`.execute(db);
  await sql`drop index orders_pending_payment_created_idx`.execute(db);
  await sql`alter table orders drop column cancellation_reason, drop column late_payment_transaction_id`.execute(db);
}
