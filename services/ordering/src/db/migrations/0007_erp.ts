import { sql, type Kysely } from 'kysely';

/**
 * ERP integration (docs/decisions.md §6 ERP; `devSetErpApiToken`, `importRetailers`, `listPublicRetailers`,
 * `receiveErpWebhook`):
 * - `erp_api_tokens`: the ERP API token per ERP system, AES-256-GCM ciphertext (AAD `erp-api-token:<system>`,
 *   key version prefix) — never stored in clear;
 * - `retailers`: ERP customers marked as retailers (maintenance import), served by `shop/retailers/*`;
 * - `erp_webhook_jobs`: received ERP webhooks waiting for background processing. One row per entity
 *   (unique key): repeated deliveries coalesce into that row and bump `generation`, so a delivery that
 *   arrives while the entity is being processed makes the worker process it once more afterwards.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table erp_api_tokens (
      erp_system text primary key check (erp_system in ('weclapp', 'weclappSandbox')),
      ciphertext text not null,
      key_version smallint not null check (key_version between 1 and 255),
      updated_at timestamptz not null default now(),
      updated_by text
    )`.execute(db);

  await sql`
    create table retailers (
      erp_system text not null check (erp_system in ('weclapp', 'weclappSandbox')),
      erp_id text not null,
      erp_version text not null,
      customer_number text not null,
      company text not null,
      is_public boolean not null default false,
      email text,
      phone text,
      website text,
      street text,
      street2 text,
      zip_code text,
      city text,
      state text,
      country_code char(2),
      served_countries text[] not null default '{}',
      imported_at timestamptz not null default now(),
      primary key (erp_system, erp_id)
    )`.execute(db);

  await sql`
    create table erp_webhook_jobs (
      id bigint generated always as identity primary key,
      erp_system text not null check (erp_system in ('weclapp', 'weclappSandbox')),
      entity_name text not null check (length(entity_name) between 1 and 64),
      entity_id text not null check (length(entity_id) between 1 and 64),
      last_type text not null,
      generation integer not null default 1,
      deliveries integer not null default 1,
      attempts integer not null default 0,
      next_attempt_at timestamptz not null default now(),
      locked_until timestamptz,
      last_error text,
      received_at timestamptz not null default now(),
      unique (erp_system, entity_name, entity_id)
    )`.execute(db);
  await sql`create index erp_webhook_jobs_due_idx on erp_webhook_jobs (next_attempt_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table erp_webhook_jobs, retailers, erp_api_tokens`.execute(db);
}
