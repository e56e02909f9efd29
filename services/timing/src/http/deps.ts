/**
 * What the handlers need from the app.
 */
import type { Logger } from 'pino';
import type { Database } from '@sports-timing/shared';
import type { DB } from '../db/schema';

/** Dependencies of the HTTP handlers: the database (Kysely and its pool) and the root logger. */
export interface HandlerDeps {
  database: Database<DB>;
  logger: Logger;
}
