/**
 * What the handlers get from the app's composition root (composition.ts): services built once per app, never
 * deps to assemble their own from.
 */
import type { Logger } from 'pino';
import type { Database } from '@sports-timing/shared';
import type { DB } from '../db/schema';
import type { TimingQuotas } from '../config';
import type { EventDeps } from '../events/events.service';
import type { LiveHub } from '../live/hub';
import type { TimingMetrics } from '../metrics';
import type { PunchService } from '../punches/punches.service';

/**
 * The services of the HTTP handlers: the database (Kysely and its pool) for the plain CRUD services, the root
 * logger, the app's punch service (read caches, notifier), its event writes (with the event cache), its live
 * hub, its timing metrics, the quotas and the `max-age` of public punch reads.
 */
export interface HandlerDeps {
  database: Database<DB>;
  logger: Logger;
  /** The app's punch service (punches.service.ts `createPunchService`). */
  punches: PunchService;
  /** The app's event writes and their cache (events.service.ts `EventDeps`). */
  events: EventDeps;
  /** The app's hub of long-polls and streams (live/hub.ts). */
  live: LiveHub;
  timingMetrics: TimingMetrics;
  /** Per-user quotas (config.ts). */
  quotas: TimingQuotas;
  /** `max-age` (seconds) of public punch reads (`TIMING_PUNCH_MAX_AGE_SECONDS`, http/read-caching.ts); default 1. */
  punchMaxAgeSeconds?: number;
}
