import type { Kysely } from 'kysely';

/** Creates the tables of this area. */
export async function up(_db: Kysely<unknown>): Promise<void> {}
