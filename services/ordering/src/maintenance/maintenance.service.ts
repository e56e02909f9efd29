/**
 * Maintenance mode (`enableMaintenanceMode`, `disableMaintenanceMode`, docs/decisions.md §6).
 *
 * Design: the flag is one row in PostgreSQL (`maintenance_mode`), not Redis: PostgreSQL is always there,
 * every instance already talks to it, and a flag that must survive restarts belongs in durable storage.
 * Each instance caches the value for at most {@link DEFAULT_CACHE_MS} (1 s), so a change made through any
 * instance is seen by all others within a second, at the cost of at most one tiny query per second per
 * instance (concurrent readers share one query). The instance that changes the flag sees it at once.
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DB } from '../db/schema';
import { readMaintenanceState, setMaintenanceEnabled } from './maintenance.repository';

/** Longest time an instance keeps serving a stale flag, ms (spec: "within a second" across instances). */
const DEFAULT_CACHE_MS = 1_000;

/** The shared maintenance-mode flag with a short per-instance cache. */
export class MaintenanceMode {
  private cached: { enabled: boolean; at: number } | undefined;
  private inflight: Promise<boolean> | undefined;
  /** Bumped by {@link set}, so that a read started before a local change cannot overwrite it with the old value. */
  private generation = 0;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly opts: { cacheMs?: number; logger?: Logger } = {},
  ) {}

  /**
   * Whether maintenance mode is on (value at most `cacheMs` old). When the database cannot be read, the last
   * known value holds (off before the first read): the gated operations need the database anyway and answer
   * 503 on their own, while ungated ones must not fail because of the flag.
   */
  async isOn(): Promise<boolean> {
    const now = Date.now();
    if (this.cached && now - this.cached.at < (this.opts.cacheMs ?? DEFAULT_CACHE_MS)) return this.cached.enabled;
    if (this.inflight) return this.inflight;
    const generation = this.generation;
    const read: Promise<boolean> = readMaintenanceState(this.db)
      .then((state) => {
        if (generation !== this.generation) return this.cached?.enabled ?? state.enabled;
        this.cached = { enabled: state.enabled, at: Date.now() };
        return state.enabled;
      })
      .catch((err: unknown) => {
        this.opts.logger?.warn({ err: { message: (err as Error).message } }, 'maintenance flag not readable; keeping the last known value');
        const enabled = this.cached?.enabled ?? false;
        // Retry after the cache interval, not on every request, while the database is away.
        if (generation === this.generation) this.cached = { enabled, at: Date.now() };
        return enabled;
      })
      .finally(() => {
        if (this.inflight === read) this.inflight = undefined;
      });
    this.inflight = read;
    return read;
  }

  /** Switches maintenance mode on or off for all instances; returns whether this call changed it (idempotent). */
  async set(enabled: boolean, changedBy: string): Promise<boolean> {
    const changed = await setMaintenanceEnabled(this.db, enabled, changedBy);
    this.generation++;
    this.inflight = undefined;
    this.cached = { enabled, at: Date.now() };
    if (changed) this.opts.logger?.info({ maintenanceMode: enabled, changedBy }, enabled ? 'maintenance mode enabled' : 'maintenance mode disabled');
    return changed;
  }
}
