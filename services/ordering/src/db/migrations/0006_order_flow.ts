import { sql, type Kysely } from 'kysely';

/**
 * Order flow (docs/decisions.md §6):
 * - `outbox_messages` becomes a job outbox: any `kind` (e.g. `mail`, `erp-sales-order`, `erp-webhook`,
 *   `payment-paylink`), the dedupe key unique per kind, `message_id` only for mail, and a dead state
 *   (`dead_at`) after the dispatcher's maximum attempts or a permanent failure;
 * - `orders` gets the payment provider's paylink id, the paid transaction and the ERP sales order id;
 * - `payment_deliveries` records every payment webhook delivery and what it led to.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table outbox_messages drop constraint outbox_messages_kind_check`.execute(db);
  await sql`alter table outbox_messages alter column kind drop default`.execute(db);
  await sql`alter table outbox_messages add constraint outbox_messages_kind_check check (kind ~ '^[a-z][a-z0-9-]{0,62}$')`.execute(db);
  await sql`alter table outbox_messages drop constraint outbox_messages_dedupe_key_key`.execute(db);
  await sql`alter table outbox_messages add constraint outbox_messages_kind_dedupe_key_key unique (kind, dedupe_key)`.execute(db);
  await sql`alter table outbox_messages alter column message_id drop not null`.execute(db);
  await sql`alter table outbox_messages add column dead_at timestamptz`.execute(db);
  await sql`alter table outbox_messages add check (sent_at is null or dead_at is null)`.execute(db);
  await sql`drop index outbox_messages_pending_idx`.execute(db);
  await sql`create index outbox_messages_pending_idx on outbox_messages (next_attempt_at, id) where sent_at is null and dead_at is null`.execute(db);

  await sql`alter table orders add column paylink_id integer`.execute(db);
  await sql`alter table orders add column payment_transaction_id integer`.execute(db);
  await sql`alter table orders add column erp_sales_order_id text`.execute(db);
  await sql`create unique index orders_paylink_id_idx on orders (paylink_id) where paylink_id is not null`.execute(db);

  await sql`
    create table payment_deliveries (
      id bigint generated always as identity primary key,
      received_at timestamptz not null default now(),
      content_type text,
      transaction_id integer,
      claimed_status text,
      provider_status text,
      order_id integer references orders (id) on delete set null,
      outcome text not null
    )`.execute(db);
  await sql`create index payment_deliveries_order_idx on payment_deliveries (order_id, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table payment_deliveries`.execute(db);
  await sql`drop index orders_paylink_id_idx`.execute(db);
  await sql`alter table orders drop column erp_sales_order_id, drop column payment_transaction_id, drop column paylink_id`.execute(db);

  // Fails (and changes nothing) while jobs of the new kinds, or without a message id, are stored: the older
  // schema cannot hold them, and a rollback does not delete them silently.
  await sql`drop index outbox_messages_pending_idx`.execute(db);
  await sql`create index outbox_messages_pending_idx on outbox_messages (next_attempt_at, id) where sent_at is null`.execute(db);
  await sql`alter table outbox_messages drop constraint outbox_messages_check`.execute(db);
  await sql`alter table outbox_messages drop column dead_at`.execute(db);
  await sql`alter table outbox_messages alter column message_id set not null`.execute(db);
  await sql`alter table outbox_messages drop constraint outbox_messages_kind_dedupe_key_key`.execute(db);
  await sql`alter table outbox_messages add constraint outbox_messages_dedupe_key_key unique (dedupe_key)`.execute(db);
  await sql`alter table outbox_messages drop constraint outbox_messages_kind_check`.execute(db);
  await sql`alter table outbox_messages alter column kind set default 'mail'`.execute(db);
  await sql`alter table outbox_messages add constraint outbox_messages_kind_check check (kind in ('mail'))`.execute(db);
}
