/**
 * Per-instance cache of what a punch read needs from an event (modems, window, public flag, owner), so that
 * a poll by `eventId` is one database round trip (the page statement) instead of two (docs/decisions.md §7).
 *
 * Freshness: every event write of this instance drops the entry at once (events.service.ts), and every
 * write on any instance sends `NOTIFY timing_events, '<id>'` after its commit, which the instance's LISTEN
 * session (live/listener.ts) turns into {@link invalidateCachedEvent}. So does the first registration of a
 * modem by an upload (modems.service.ts), which changes what the events naming it cover (`CoveredEventRow.covered`);
 * a read that could have missed such a registration checks again (punches.service.ts `readPunches`). Entries also expire after
 * {@link EVENT_CACHE_TTL_MS}, which bounds staleness when that session is down (a changed event may then be
 * served with its old modems or visibility for up to that long). Unknown events are not cached.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';
import { findEvent, notifyEventChanged, type CoveredEventRow } from './events.repository';

/** Lifetime of an entry (ms). */
const EVENT_CACHE_TTL_MS = 5_000;

/** Most entries per cache; the oldest is dropped beyond. */
const EVENT_CACHE_MAX = 10_000;

/** Channel of event-change notifications; the payload is an event id, ids separated by commas, or `*` (every event). */
const EVENT_CHANNEL = 'timing_events';

/** Longest payload sent as a list of ids (PostgreSQL allows 8,000 bytes); a longer list is sent as `*`. */
const MAX_ID_PAYLOAD = 7_000;

interface Entry {
  row: CoveredEventRow;
  expires: number;
}

class EventCache {
  private readonly entries = new Map<number, Entry>();
  /** Bumped by every invalidation, so a read that overlapped one is not stored. */
  private generation = 0;

  async get(db: Kysely<DB>, id: number): Promise<CoveredEventRow | undefined> {
    const now = Date.now();
    const hit = this.entries.get(id);
    if (hit && hit.expires > now) return hit.row;
    const gen = this.generation;
    const row = await findEvent(db, id);
    if (row && gen === this.generation) {
      this.entries.delete(id);
      if (this.entries.size >= EVENT_CACHE_MAX) this.entries.delete(this.entries.keys().next().value as number);
      this.entries.set(id, { row, expires: now + EVENT_CACHE_TTL_MS });
    } else if (!row) {
      this.entries.delete(id);
    }
    return row;
  }

  invalidate(id: number | null): void {
    this.generation += 1;
    if (id === null) this.entries.clear();
    else this.entries.delete(id);
  }
}

const caches = new WeakMap<Kysely<DB>, EventCache>();
const all = new Set<WeakRef<EventCache>>();

function cacheFor(db: Kysely<DB>): EventCache {
  let c = caches.get(db);
  if (!c) {
    c = new EventCache();
    caches.set(db, c);
    all.add(new WeakRef(c));
  }
  return c;
}

/**
 * The event (with its modems), from this instance's cache or the database; undefined when it does not exist.
 * `fresh`: read from the database (and cache that copy), for a check that must see every commit before it.
 */
export function cachedEvent(db: Kysely<DB>, id: number, fresh = false): Promise<CoveredEventRow | undefined> {
  const cache = cacheFor(db);
  if (fresh) cache.invalidate(id);
  return cache.get(db, id);
}

/** The event ids of a payload of {@link EVENT_CHANNEL}; null for `*` (every event) and for a payload that is not a list of ids. */
function payloadIds(payload: string): number[] | null {
  const ids = payload.split(',').map(Number);
  return payload === '*' || !ids.every((id) => Number.isInteger(id)) ? null : ids;
}

/**
 * After a change of events `ids` (null: any event) has committed — an event write, or the first registration
 * of modems they name: drops them from every cache of this process, then tells the other instances
 * (`NOTIFY`). A failed NOTIFY is not an error of the change: their copies expire within seconds.
 */
export async function eventsChanged(db: Kysely<DB>, ids: readonly number[] | null): Promise<void> {
  if (ids !== null && ids.length === 0) return;
  if (ids === null) invalidateCachedEvent(null);
  else for (const id of ids) invalidateCachedEvent(id);
  const list = ids === null ? '*' : ids.join(',');
  await notifyEventChanged(db, list.length > MAX_ID_PAYLOAD ? '*' : list, EVENT_CHANNEL).catch(() => undefined);
}

/** The channel of {@link eventsChanged} and what to do with one of its payloads (live/listener.ts). */
export const eventChannel = {
  name: EVENT_CHANNEL,
  onPayload(payload: string): void {
    const ids = payloadIds(payload);
    if (ids === null) invalidateCachedEvent(null);
    else for (const id of ids) invalidateCachedEvent(id);
  },
};

/** Drops event `id` (null: every event) from every cache of this process. */
export function invalidateCachedEvent(id: number | null): void {
  for (const ref of all) {
    const c = ref.deref();
    if (c) c.invalidate(id);
    else all.delete(ref);
  }
}
