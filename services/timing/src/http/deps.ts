/**
 * What the handlers need from the app.
 */
import type { Database } from '@sports-timing/shared';
import type { DB } from '../db/schema';

/** Dependencies of the HTTP handlers: the database (Kysely and its pool). */
export interface HandlerDeps {
  database: Database<DB>;
}
