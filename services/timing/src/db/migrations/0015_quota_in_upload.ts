/**
 * The daily upload quota charged inside the upload statement (docs/decisions.md §5 "Quotas"): `upload_punches`
 * is `upload_punch_batch` (version 4) that also adds the newly stored punches to the user's `upload_quota` row
 * after the insert, and raises SQLSTATE TQ429 (the statement then stores nothing) when that would pass the
 * quota; `upload_punches_by_key` is `upload_punch_batch_by_key` (version 2) calling it. An upload is one
 * statement again, instead of a charge, the insert and a refund of its duplicates, and duplicates are never
 * charged.
 *
 * New names rather than new overloads: during a rolling upgrade (infra/README.md "Rolling upgrade") instances of the
 * previous release keep calling `upload_punch_batch` with its own separate charge, so both stay until a later
 * migration drops the old ones.
 *
 * Frozen (docs/database.md): up() applies `upload_punches` and `upload_punches_by_key` version 1 and gives
 * them the schema's `search_path` (as migration 0011 does); down() drops them.
 */
import { sql, type Kysely } from 'kysely';
import { applyFunctionVersion } from '../functions';

/** Creates `upload_punches` and `upload_punches_by_key`. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await applyFunctionVersion(db, 'upload_punches', 1);
  await applyFunctionVersion(db, 'upload_punches_by_key', 1);
  await sql
    .raw(
      `do $do$ declare f regprocedure; begin
        for f in select p.oid::regprocedure from pg_proc p
          where p.pronamespace = current_schema()::regnamespace and p.proname in ('upload_punches', 'upload_punches_by_key')
        loop execute format('alter function %s set search_path = %I, pg_temp', f, current_schema()); end loop;
      end $do$`,
    )
    .execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop function upload_punches_by_key, upload_punches`.execute(db);
}
