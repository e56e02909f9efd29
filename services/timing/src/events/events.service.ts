/**
 * Events (tag `events` of specs/timing.yaml): a named set of modems with an optional
 * local-time window, public or private. Public events are readable by anyone; private ones by their
 * owner and admins. Only the owner or an admin changes or deletes an event.
 */
import type { Kysely } from 'kysely';
import { ApiError, validationError } from '@sports-timing/shared';
import type { DB } from '../db/schema';
import type { components } from '../generated/openapi';
import { isAdmin, type Principal } from '../auth/principal';
import * as repo from './events.repository';
import { modemWarnings } from './modem-clients';
import type { EventCache } from './event-cache';

/** Largest event id (int4). */
const MAX_EVENT_ID = 2_147_483_647;

/**
 * What event writes need: the database and the app's event cache (event-cache.ts), from which each write
 * drops the event it changed (built once per app, composition.ts).
 */
export interface EventDeps {
  db: Kysely<DB>;
  cache: EventCache;
}

/** API `Event`. */
export type EventDto = components['schemas']['Event'];
/** API `NewEvent` (create and replace). */
export type NewEventDto = components['schemas']['NewEvent'];

/** The 403 of a user who owns as many events as the quota allows. */
function eventQuotaReached(max: number): ApiError {
  return new ApiError(403, `Event quota reached: a user owns at most ${max} events. Delete an event you no longer need, or ask an administrator.`);
}

/** Path of an event resource (the `Location` of a created event). */
export function eventLocation(id: number): string {
  return `/api/rest/v1/events/${id}`;
}

/** The API `Event` of a stored event row. */
export function toEventDto(row: repo.EventRow): EventDto {
  return {
    id: row.id,
    name: row.name,
    public: row.is_public,
    modems: row.modems,
    from: row.from_ms,
    to: row.to_ms,
    owner: row.owner_name,
    createdAt: row.created_at.toISOString(),
  };
}

/** The answer of a write: the event, with `warnings` when a client cannot use one of its modems (modem-clients.ts). */
function writtenEventDto(row: repo.EventRow): EventDto {
  const warnings = modemWarnings(row.modems);
  return warnings.length > 0 ? { ...toEventDto(row), warnings } : toEventDto(row);
}

function fieldsOf(input: NewEventDto): repo.EventFields {
  const fromMs = input.from ?? null;
  const toMs = input.to ?? null;
  if (fromMs !== null && toMs !== null && fromMs > toMs) throw validationError({ to: ['must not be before from'] }, 'The window ends before it starts.');
  return { name: input.name, isPublic: input.public, fromMs, toMs };
}

/**
 * The 404 of an event the caller may not see: the same status and body for a missing event and for a
 * private event of another user, so that event ids tell nothing about private events. Anonymous callers
 * get a hint about keys, again whether the event exists or not.
 */
export function noSuchEvent(id: number | string, caller: Principal | null): ApiError {
  return new ApiError(404, caller ? `No event ${id}.` : `No event ${id}. A private event needs an API key of its owner.`);
}

/** Whether `caller` may read the event: public, or the owner, or an admin. */
function canRead(caller: Principal | null, ev: { is_public: boolean; owner_id: number }): boolean {
  return ev.is_public || isAdmin(caller) || caller?.userId === ev.owner_id;
}

/** Throws {@link noSuchEvent} (404) when `caller` may not read the event. */
export function assertCanRead(caller: Principal | null, ev: { is_public: boolean; owner_id: number; id: number }): void {
  if (!canRead(caller, ev)) throw noSuchEvent(ev.id, caller);
}

/** After an event write has committed: drop the cached copies (event-cache.ts `EventCache.changed`). */
async function eventChanged(deps: EventDeps, id: number): Promise<void> {
  await deps.cache.changed([id]);
}

/** 404 for an event the caller may not even read (see {@link noSuchEvent}); 403 for a readable one of another user. */
function assertCanChange(caller: Principal, ev: repo.EventRow): void {
  if (isAdmin(caller) || caller.userId === ev.owner_id) return;
  assertCanRead(caller, ev);
  throw new ApiError(403, `Event ${ev.id} belongs to another user.`);
}

async function loadEvent(db: Kysely<DB>, id: number, caller: Principal | null): Promise<repo.EventRow> {
  const row = await repo.findEvent(db, id);
  if (!row) throw noSuchEvent(id, caller);
  return row;
}

/**
 * Creates an event owned by the caller. Its modems may be any serials: naming one registers (claims) nothing,
 * and the event's reads cover only the named modems registered to its owner, every named one for an
 * administrator's event (docs/decisions.md §5, "A modem belongs to the user that first uploads for it").
 * A non-admin caller owning `maxEvents` events already → 403 naming the quota, nothing created; the count
 * and the insert run under a per-user lock, so concurrent creations cannot pass it (docs/decisions.md §5
 * "Quotas").
 */
export async function createEvent(deps: EventDeps, caller: Principal, input: NewEventDto, maxEvents: number): Promise<EventDto> {
  const { db } = deps;
  const fields = fieldsOf(input);
  const quota = isAdmin(caller) ? null : maxEvents;
  const id = await db.transaction().execute(async (tx) => {
    const eventId = await repo.insertEventWithin(tx, caller.userId, fields, quota);
    if (eventId === undefined) throw eventQuotaReached(maxEvents);
    await repo.setEventModems(tx, eventId, input.modems);
    return eventId;
  });
  await eventChanged(deps, id);
  return writtenEventDto(await loadEvent(db, id, caller));
}

/**
 * A page of the events visible to the caller (spec `listEvents`): ids above `afterId` (capped to the int4
 * range of event ids), ascending, at most `limit`, and the number of all visible events above `afterId`.
 */
export async function listEvents(
  db: Kysely<DB>,
  caller: Principal | null,
  page: { afterId?: number; limit: number },
): Promise<{ events: EventDto[]; total: number }> {
  const afterId = Math.min(page.afterId ?? 0, MAX_EVENT_ID);
  const { rows, total } = await repo.listVisibleEvents(db, { all: isAdmin(caller), ownerId: caller?.userId ?? null }, { afterId, limit: page.limit });
  return { events: rows.map(toEventDto), total };
}

/** One event the caller may read. */
export async function getEvent(db: Kysely<DB>, caller: Principal | null, id: number): Promise<EventDto> {
  const row = await loadEvent(db, id, caller);
  assertCanRead(caller, row);
  return toEventDto(row);
}

/** Replaces an event (owner or admin); as in {@link createEvent}, naming modems claims none. */
export async function replaceEvent(deps: EventDeps, caller: Principal, id: number, input: NewEventDto): Promise<EventDto> {
  const { db } = deps;
  const current = await loadEvent(db, id, caller);
  assertCanChange(caller, current);
  const fields = fieldsOf(input);
  await db.transaction().execute(async (tx) => {
    await repo.updateEvent(tx, id, fields);
    await repo.setEventModems(tx, id, input.modems);
  });
  await eventChanged(deps, id);
  return writtenEventDto(await loadEvent(db, id, caller));
}

/** Deletes an event (owner or admin); punches stay. */
export async function deleteEvent(deps: EventDeps, caller: Principal, id: number): Promise<void> {
  const { db } = deps;
  const current = await loadEvent(db, id, caller);
  assertCanChange(caller, current);
  await repo.deleteEvent(db, id);
  await eventChanged(deps, id);
}
