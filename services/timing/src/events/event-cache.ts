/**
 * Per-app cache of what a punch read needs from an event (modems, window, public flag, owner), so that
 * a poll by `eventId` is one database round trip (the page statement) instead of two (docs/decisions.md §7).
 *
 * Freshness: every event write of this instance drops the entry at once (events.service.ts), and every
 * write on any instance sends `NOTIFY timing_events, '<id>'` after its commit, which the instance's LISTEN
 * session (live/listener.ts) turns into {@link EventCache.invalidate} of that app's cache. Entries also expire after
 * {@link EVENT_CACHE_TTL_MS}, which bounds staleness when that session is down (a changed event may then be
 * served with its old modems or visibility for up to that long). Unknown events are not cached.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';
import { findEvent, type EventRow } from './events.repository';

/** Lifetime of an entry (ms), unless the app's composition says otherwise (tests). */
const EVENT_CACHE_TTL_MS = 5_000;

/** Most entries per cache; the oldest is dropped beyond. */
const EVENT_CACHE_MAX = 10_000;

/** Channel of event-change notifications; the payload is the event id. */
export const EVENT_CHANNEL = 'timing_events';

interface Entry {
  row: EventRow;
  expires: number;
}

/**
 * One app's cache of event reads (see the module comment); built once by the composition root
 * (composition.ts) and handed to the punch reads, the event writes and the LISTEN session of that app only.
 */
export class EventCache {
  private readonly entries = new Map<number, Entry>();
  /** Bumped by every invalidation, so a read that overlapped one is not stored. */
  private generation = 0;

  /** `ttlMs`: lifetime of an entry (default {@link EVENT_CACHE_TTL_MS}). */
  constructor(
    private readonly db: Kysely<DB>,
    private readonly ttlMs = EVENT_CACHE_TTL_MS,
  ) {}

  /** The event (with its modems), from this cache or the database; undefined when it does not exist. */
  async get(id: number): Promise<EventRow | undefined> {
    const now = Date.now();
    const hit = this.entries.get(id);
    if (hit && hit.expires > now) return hit.row;
    const gen = this.generation;
    const row = await findEvent(this.db, id);
    if (row && gen === this.generation) {
      this.entries.delete(id);
      if (this.entries.size >= EVENT_CACHE_MAX) this.entries.delete(this.entries.keys().next().value as number);
      this.entries.set(id, { row, expires: now + this.ttlMs });
    } else if (!row) {
      this.entries.delete(id);
    }
    return row;
  }

  /** Drops event `id` (null: every event) from this cache. */
  invalidate(id: number | null): void {
    this.generation += 1;
    if (id === null) this.entries.clear();
    else this.entries.delete(id);
  }
}
