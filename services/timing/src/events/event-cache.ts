/**
 * Per-app cache of what a punch read needs from an event (modems and the ones it covers, window, public flag,
 * owner), so that a poll by `eventId` is one database round trip (the page statement) instead of two
 * (docs/decisions.md §7).
 *
 * Freshness: every event write of this app drops the entry at once (events.service.ts), and so does the first
 * registration of a modem by an upload (modems.service.ts), which changes what the events naming it cover
 * (`CoveredEventRow.covered`); each sends `NOTIFY timing_events` after its commit, which the LISTEN session of
 * every app (live/listener.ts) turns into {@link EventCache.onPayload}. A read that could have missed such a
 * registration checks again (punches/punch-scope.ts). Entries also expire after {@link EVENT_CACHE_TTL_MS},
 * which bounds staleness when that session is down (a changed event may then be served with its old modems or
 * visibility for up to that long). Unknown events are not cached.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';
import { findEvent, notifyEventChanged, type CoveredEventRow } from './events.repository';

/** Lifetime of an entry (ms), unless the app's composition says otherwise (tests). */
const EVENT_CACHE_TTL_MS = 5_000;

/** Most entries per cache; the oldest is dropped beyond. */
const EVENT_CACHE_MAX = 10_000;

/** Channel of event-change notifications; the payload is an event id, ids separated by commas, or `*` (every event). */
export const EVENT_CHANNEL = 'timing_events';

/** Longest payload sent as a list of ids (PostgreSQL allows 8,000 bytes); a longer list is sent as `*`. */
const MAX_ID_PAYLOAD = 7_000;

interface Entry {
  row: CoveredEventRow;
  expires: number;
}

/** The event ids of a payload of {@link EVENT_CHANNEL}; null for `*` (every event) and for a payload that is not a list of ids. */
function payloadIds(payload: string): number[] | null {
  const ids = payload.split(',').map(Number);
  return payload === '*' || !ids.every((id) => Number.isInteger(id)) ? null : ids;
}

/**
 * One app's cache of event reads (see the module comment); built once by the composition root
 * (composition.ts) and handed to the punch reads, the event writes, the uploads' modem registration and the
 * LISTEN session of that app only.
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

  /**
   * The event (with its modems and the ones it covers), from this cache or the database; undefined when it
   * does not exist. `fresh`: read from the database (and cache that copy), for a check that must see every
   * commit before it.
   */
  async get(id: number, fresh = false): Promise<CoveredEventRow | undefined> {
    if (fresh) this.invalidate(id);
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

  /**
   * After a change of events `ids` (null: any event) has committed — an event write, or the first registration
   * or the release of modems they name: drops them from this cache, then tells every app's LISTEN session
   * (`NOTIFY`; this one's too, harmlessly). A failed NOTIFY is not an error of the change: other copies expire
   * within seconds.
   */
  async changed(ids: readonly number[] | null): Promise<void> {
    if (ids !== null && ids.length === 0) return;
    if (ids === null) this.invalidate(null);
    else for (const id of ids) this.invalidate(id);
    const list = ids === null ? '*' : ids.join(',');
    await notifyEventChanged(this.db, list.length > MAX_ID_PAYLOAD ? '*' : list, EVENT_CHANNEL).catch(() => undefined);
  }

  /** What a payload of {@link EVENT_CHANNEL} means for this cache (live/listener.ts). */
  onPayload(payload: string | undefined): void {
    const ids = payloadIds(payload ?? '*');
    if (ids === null) this.invalidate(null);
    else for (const id of ids) this.invalidate(id);
  }
}
