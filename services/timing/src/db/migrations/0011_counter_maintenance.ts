/**
 * Maintenance of the punch counters (migration 0002; docs/database.md "Database faults"):
 * - `punch_counts` gets autovacuum settings of its own: every upload statement appends delta rows that the
 *   compaction soon deletes again (about 0.3 dead rows per punch), so the table's dead rows are vacuumed after a
 *   fixed number of changes instead of a share of a table that stays small, without cost-based pauses;
 * - the counter triggers name their table with its schema, and the counter, compaction and upload functions
 *   carry `search_path` = the service's schema (then `pg_temp`): a bulk load into `<schema>.punches` from a
 *   session with the default `search_path` (psql, `COPY`, a restore) no longer fails in the triggers, and no
 *   object of another schema on a caller's path can stand in for ours.
 */
import { sql, type Kysely } from 'kysely';
import { applyFunctionVersion } from '../functions';

/** Functions that get the schema's `search_path`. */
const FUNCTIONS = ['punch_counts_add', 'punch_counts_remove', 'compact_punch_counts', 'upload_punch_batch', 'upload_punch_batch_by_key'];

/** Runs `alter function <f> <clause>` for every overload of {@link FUNCTIONS} in the current schema. */
async function alterFunctions(db: Kysely<unknown>, clause: string): Promise<void> {
  await sql
    .raw(
      `do $do$ declare f regprocedure; begin
        for f in select p.oid::regprocedure from pg_proc p
          where p.pronamespace = current_schema()::regnamespace and p.proname in (${FUNCTIONS.map((f) => `'${f}'`).join(', ')})
        loop execute format('alter function %s ${clause}', f, current_schema()); end loop;
      end $do$`,
    )
    .execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  // Version 4 names `timing.punch_counts`: the schema is `timing` (as in every timing function that names one).
  await applyFunctionVersion(db, 'punch_counts_add', 4);
  await applyFunctionVersion(db, 'punch_counts_remove', 4);
  await alterFunctions(db, 'set search_path = %I, pg_temp');
  await sql`
    alter table punch_counts set (
      autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 10000,
      autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 10000,
      autovacuum_analyze_scale_factor = 0, autovacuum_analyze_threshold = 10000,
      autovacuum_vacuum_cost_delay = 0)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table punch_counts reset (
      autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold, autovacuum_vacuum_insert_scale_factor,
      autovacuum_vacuum_insert_threshold, autovacuum_analyze_scale_factor, autovacuum_analyze_threshold,
      autovacuum_vacuum_cost_delay)`.execute(db);
  await alterFunctions(db, 'reset search_path');
  await applyFunctionVersion(db, 'punch_counts_add', 3);
  await applyFunctionVersion(db, 'punch_counts_remove', 3);
}
