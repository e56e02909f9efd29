/**
 * `upload_quota`: punches charged to each user per UTC day, the daily upload quota's counter
 * (docs/decisions.md §5 "Quotas"). A row per user and day; old rows are small and harmless.
 *
 * Frozen (docs/database.md): down() drops the table.
 */
import { sql, type Kysely } from 'kysely';

/** Creates `upload_quota`. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
      create table upload_quota (
        user_id integer not null references users (id) on delete cascade,
        day date not null,
        punches bigint not null check (punches >= 0),
        primary key (user_id, day)
      )
    `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table upload_quota`.execute(db);
}
