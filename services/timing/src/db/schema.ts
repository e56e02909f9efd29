/**
 * Kysely table types of the `timing` schema. Columns mirror the migrations in `./migrations`.
 */
// Tables are added by the migrations that create them.
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface DB {}
