import { sql, type Kysely } from 'kysely';

/**
 * Maintenance mode (`enableMaintenanceMode`, `disableMaintenanceMode`): one row shared by all instances. The
 * primary key `singleton` can only be `true`, so the table can never hold a second row.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table maintenance_mode (
      singleton boolean primary key default true check (singleton),
      enabled boolean not null default false,
      changed_at timestamptz not null default now(),
      changed_by text
    )`.execute(db);
  await sql`insert into maintenance_mode (singleton, enabled) values (true, false)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table maintenance_mode`.execute(db);
}
