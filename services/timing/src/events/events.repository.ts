/**
 * SQL of events and their modems. Free functions taking the Kysely executor first.
 * Windows (`from_ms`, `to_ms`) are local wall-clock milliseconds.
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema';

/** An event with its modems (ascending) and its owner's name. */
export interface EventRow {
  id: number;
  name: string;
  owner_id: number;
  owner_name: string;
  is_public: boolean;
  from_ms: number | null;
  to_ms: number | null;
  created_at: Date;
  modems: string[];
}

/**
 * An event as its reads need it. `covered`: the named modems its reads cover (docs/decisions.md §5), those
 * registered to the owner, every named one when the owner is an administrator (ascending). `pending`: some
 * named modem is registered to no one yet, so its first upload (by the owner) makes the event cover more
 * (punches.service.ts `readStably` checks again after a page that saw punches).
 */
export interface CoveredEventRow extends EventRow {
  covered: string[];
  pending: boolean;
}

/** Fields written on create and replace. */
export interface EventFields {
  name: string;
  isPublic: boolean;
  fromMs: number | null;
  toMs: number | null;
}

const eventSelect = (db: Kysely<DB>) =>
  db
    .selectFrom('events as e')
    .innerJoin('users as u', 'u.id', 'e.owner_id')
    .select([
      'e.id',
      'e.name',
      'e.owner_id',
      'u.user_name as owner_name',
      'e.is_public',
      'e.from_ms',
      'e.to_ms',
      'e.created_at',
      sql<string[]>`array(select em.modem from event_modems em where em.event_id = e.id order by em.modem)`.as('modems'),
    ]);

/** One event with what its reads cover (see {@link CoveredEventRow}), if it exists. */
export async function findEvent(db: Kysely<DB>, id: number): Promise<CoveredEventRow | undefined> {
  return eventSelect(db)
    .select([
      sql<string[]>`array(select em.modem from event_modems em
        where em.event_id = e.id and (u.role = 'admin' or exists (select 1 from modems m where m.serial = em.modem and m.user_id = e.owner_id))
        order by em.modem)`.as('covered'),
      sql<boolean>`(u.role <> 'admin' and exists (select 1 from event_modems em
        where em.event_id = e.id and not exists (select 1 from modems m where m.serial = em.modem)))`.as('pending'),
    ])
    .where('e.id', '=', id)
    .executeTakeFirst();
}

/**
 * A page of the events visible to a caller — public ones, those owned by `ownerId`, or all when `all` — with
 * an id above `afterId`, ascending id, at most `limit` (≥ 1); `total` counts every such event (a window count,
 * computed before LIMIT; an empty page means there is none).
 */
export async function listVisibleEvents(
  db: Kysely<DB>,
  viewer: { all: boolean; ownerId: number | null },
  page: { afterId: number; limit: number },
): Promise<{ rows: EventRow[]; total: number }> {
  let q = eventSelect(db)
    .select(sql<string>`count(*) over ()`.as('total'))
    .where('e.id', '>', page.afterId);
  if (!viewer.all) {
    const ownerId = viewer.ownerId;
    q = q.where((eb) => (ownerId === null ? eb('e.is_public', '=', true) : eb.or([eb('e.is_public', '=', true), eb('e.owner_id', '=', ownerId)])));
  }
  const rows = await q.orderBy('e.id').limit(page.limit).execute();
  return { rows: rows.map(({ total: _total, ...row }) => row), total: rows.length > 0 ? Number(rows[0].total) : 0 };
}

/** Finds the first event with this name and owner (the demo loader's idempotency check). */
export async function findEventIdByName(db: Kysely<DB>, name: string, ownerId: number): Promise<number | undefined> {
  const row = await db.selectFrom('events').select('id').where('name', '=', name).where('owner_id', '=', ownerId).orderBy('id').executeTakeFirst();
  return row?.id;
}

/** Advisory lock (with the user id) under which a user's events are counted and inserted. */
const EVENT_QUOTA_LOCK = 0x657674; // 'evt'

/** Events owned by a user. @internal */
export async function countOwnedEvents(db: Kysely<DB>, ownerId: number): Promise<number> {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('owner_id', '=', ownerId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Inserts an event in transaction `tx`; returns its id, or undefined (nothing inserted) when the owner already
 * owns `maxPerOwner` events. The count and the insert hold a per-owner transaction lock, so concurrent
 * inserts for one owner are counted one after the other; null → no limit.
 */
export async function insertEventWithin(tx: Kysely<DB>, ownerId: number, f: EventFields, maxPerOwner: number | null): Promise<number | undefined> {
  if (maxPerOwner !== null) {
    await sql`select pg_advisory_xact_lock(${EVENT_QUOTA_LOCK}::int, ${ownerId}::int)`.execute(tx);
    if ((await countOwnedEvents(tx, ownerId)) >= maxPerOwner) return undefined;
  }
  return insertEvent(tx, ownerId, f);
}

/** Inserts an event; returns its id. */
async function insertEvent(db: Kysely<DB>, ownerId: number, f: EventFields): Promise<number> {
  const row = await db
    .insertInto('events')
    .values({ name: f.name, owner_id: ownerId, is_public: f.isPublic, from_ms: f.fromMs, to_ms: f.toMs })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Replaces the fields of an event. */
export async function updateEvent(db: Kysely<DB>, id: number, f: EventFields): Promise<void> {
  await db.updateTable('events').set({ name: f.name, is_public: f.isPublic, from_ms: f.fromMs, to_ms: f.toMs }).where('id', '=', id).execute();
}

/** Replaces the modem set of an event. */
export async function setEventModems(db: Kysely<DB>, id: number, modems: readonly string[]): Promise<void> {
  await db.deleteFrom('event_modems').where('event_id', '=', id).execute();
  if (modems.length > 0)
    await db
      .insertInto('event_modems')
      .values(modems.map((modem) => ({ event_id: id, modem })))
      .execute();
}

/** Deletes an event (its modem links cascade; punches are untouched). */
export async function deleteEvent(db: Kysely<DB>, id: number): Promise<void> {
  await db.deleteFrom('events').where('id', '=', id).execute();
}

/**
 * `NOTIFY timing_events, '<payload>'` (autocommitted, so after the change's commit): other instances drop their
 * cached copy. The payload is an event id, several ids separated by commas, or `*` for every event
 * (event-cache.ts `EVENT_CHANNEL`).
 */
export async function notifyEventChanged(db: Kysely<DB>, payload: string, channel: string): Promise<void> {
  await sql`select pg_notify(${channel}, ${payload})`.execute(db);
}
