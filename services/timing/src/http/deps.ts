/**
 * What the handlers need from the app.
 */
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Database } from '@sports-timing/shared';
import type { DB } from '../db/schema';
import type { TimingQuotas } from '../config';
import type { BacklogGate } from '../punches/backlog-gate';

/** Dependencies of the HTTP handlers: the database (Kysely and its pool), the root logger, an optional replica pool, the quotas. */
export interface HandlerDeps {
  database: Database<DB>;
  logger: Logger;
  /** Replica pool for whole punch downloads (`getPunches` only; punches.service.ts `readPunches`). */
  historyPool?: pg.Pool;
  /** Bound of the shared read answers' cache per pool (bytes; punches/read-cache.ts); default 64 MiB, 0 = off. */
  readCacheBytes?: number;
  /** `max-age` (seconds) of public punch reads (`TIMING_PUNCH_MAX_AGE_SECONDS`, http/read-caching.ts); default 1. */
  punchMaxAgeSeconds?: number;
  /** Per-user quotas (config.ts). */
  quotas: TimingQuotas;
  /** The app's pacing of backlog pages (punches/backlog-gate.ts). */
  backlog?: BacklogGate;
}
