/**
 * SQL of modems (serial number → user). Free functions taking the Kysely executor first.
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema';

/** First key of the per-user advisory lock taken while checking the modem cap (second key: the user id). */
const MODEM_CAP_LOCK = 0x6d6f64; // 'mod'

/** A modem with its user's name. */
export interface ModemListRow {
  serial: string;
  user_name: string;
  created_at: Date;
}

/**
 * A window in which a caller may read a modem's punches by serial: the whole modem (`from_ms` and `to_ms` null)
 * when it is the caller's, else the window of a public event containing it (local ms, inclusive, null = open).
 */
export interface ModemReadWindowRow {
  serial: string;
  from_ms: number | null;
  to_ms: number | null;
}

/** Owners of the given serials that exist. */
export async function findModemOwners(db: Kysely<DB>, serials: readonly string[]): Promise<{ serial: string; user_id: number }[]> {
  if (serials.length === 0) return [];
  return db
    .selectFrom('modems')
    .select(['serial', 'user_id'])
    .where('serial', '=', sql<string>`any(${[...serials]}::text[])`)
    .execute();
}

/**
 * Serializes the modem-cap checks of `userId` in the caller's transaction `trx` (held until it ends), so
 * concurrent uploads of one user cannot pass the cap together.
 */
export async function lockModemCap(trx: Kysely<DB>, userId: number): Promise<void> {
  await sql`select pg_advisory_xact_lock(${MODEM_CAP_LOCK}::int, ${userId}::int)`.execute(trx);
}

/** How many modems `userId` holds, and how many of `serials` are not registered to anyone yet. */
export async function countModemsForCap(db: Kysely<DB>, userId: number, serials: readonly string[]): Promise<{ held: number; fresh: number }> {
  const { rows } = await sql<{ held: number; fresh: number }>`
    select (select count(*)::int from modems where user_id = ${userId}::int) as held,
           (select count(*)::int from unnest(${[...serials]}::text[]) as s where not exists (select 1 from modems m where m.serial = s)) as fresh
  `.execute(db);
  return rows[0];
}

/** Registers the serials to `userId` where not registered yet (existing ones keep their user); returns the serials it registered. */
export async function insertModems(db: Kysely<DB>, serials: readonly string[], userId: number): Promise<string[]> {
  const { rows } = await sql<{ serial: string }>`
    insert into modems (serial, user_id)
    select s, ${userId}::int from unnest(${[...serials]}::text[]) as s
    on conflict (serial) do nothing
    returning serial
  `.execute(db);
  return rows.map((r) => r.serial);
}

/** Ids of the events naming any of `serials` (ascending). */
export async function eventsNaming(db: Kysely<DB>, serials: readonly string[]): Promise<number[]> {
  if (serials.length === 0) return [];
  const rows = await db
    .selectFrom('event_modems')
    .select('event_id')
    .distinct()
    .where('modem', '=', sql<string>`any(${[...serials]}::text[])`)
    .orderBy('event_id')
    .execute();
  return rows.map((r) => r.event_id);
}

/**
 * Removes a modem's event memberships and its registration (run both in one transaction, `trx`); null when
 * no modem has that serial, else the ids of the events that named it.
 */
export async function deleteModemRows(trx: Kysely<DB>, serial: string): Promise<number[] | null> {
  const events = await trx.deleteFrom('event_modems').where('modem', '=', serial).returning('event_id').execute();
  const r = await trx.deleteFrom('modems').where('serial', '=', serial).executeTakeFirst();
  return Number(r.numDeletedRows) > 0 ? events.map((e) => e.event_id) : null;
}

/** Modems of one user (or all when `userId` is null), ascending serial. */
export async function listModems(db: Kysely<DB>, userId: number | null): Promise<ModemListRow[]> {
  let q = db.selectFrom('modems as m').innerJoin('users as u', 'u.id', 'm.user_id').select(['m.serial', 'u.user_name', 'm.created_at']);
  if (userId !== null) q = q.where('m.user_id', '=', userId);
  return q.orderBy('m.serial').execute();
}

/** Serials of the modems of the user named `userName` (empty when the user does not exist). */
export async function modemsOfUserName(db: Kysely<DB>, userName: string): Promise<string[]> {
  const rows = await db.selectFrom('modems as m').innerJoin('users as u', 'u.id', 'm.user_id').select('m.serial').where('u.user_name', '=', userName).execute();
  return rows.map((r) => r.serial);
}

/**
 * The windows in which the user `userId` (null: anonymous) may read each of `serials` by serial: one unbounded
 * row for each of the user's own modems, one row per public event covering a serial with that event's window
 * (an event covers the named modems registered to its owner, every named one for an administrator's event:
 * docs/decisions.md §5). A serial without a row is not readable (unknown, or another user's modem that no
 * public event covers).
 */
export async function modemReadWindows(db: Kysely<DB>, serials: readonly string[], userId: number | null): Promise<ModemReadWindowRow[]> {
  if (serials.length === 0) return [];
  const { rows } = await sql<ModemReadWindowRow>`
    select m.serial, null::int8 as from_ms, null::int8 as to_ms
    from modems m
    where m.serial = any(${[...serials]}::text[]) and m.user_id = ${userId}::int
    union all
    select em.modem, e.from_ms, e.to_ms
    from event_modems em join events e on e.id = em.event_id join users o on o.id = e.owner_id
    where em.modem = any(${[...serials]}::text[]) and e.is_public
      and (o.role = 'admin' or exists (select 1 from modems m where m.serial = em.modem and m.user_id = e.owner_id))
  `.execute(db);
  return rows;
}
