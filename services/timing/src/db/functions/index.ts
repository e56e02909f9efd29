/**
 * The function texts of the `timing` schema (docs/database.md "Function texts"): every text of a PL/pgSQL or
 * SQL function any migration applies is a file `<function>.v<N>.sql` of this folder, one `create or replace
 * function` statement, and the file with the highest N of a function is its current text (services/timing/
 * test/schema.test.ts holds the migrated database to it). A version file is frozen once merged, like the
 * migration that applies it: a change is a new file `<function>.v<N+1>.sql` and a migration whose up()
 * applies N+1 and whose down() applies N. `pnpm build` copies the files next to this module in dist/.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';

/**
 * Runs version `version` of function `name` (`<name>.v<version>.sql` of this folder) on `db`. Frozen like the
 * migrations that call it: it reads the file and runs it, nothing else, so an old migration keeps applying
 * exactly its text. A `create or replace` drops the function's settings (`search_path`): the migration sets
 * them again. Throws when the file is missing or the statement fails.
 */
export async function applyFunctionVersion(db: Kysely<unknown>, name: string, version: number): Promise<void> {
  await sql.raw(readFileSync(path.join(__dirname, `${name}.v${version}.sql`), 'utf8')).execute(db);
}
