/**
 * SQL of modems (serial number → user). Free functions taking the Kysely executor first.
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema';

/** A modem with its user's name. */
export interface ModemListRow {
  serial: string;
  user_name: string;
  created_at: Date;
}

/** Access facts of a modem for anonymous reads: its user and whether it is in at least one public event. */
export interface ModemAccessRow {
  serial: string;
  user_id: number;
  is_public: boolean;
}

/** Owners of the given serials that exist. */
export async function findModemOwners(db: Kysely<DB>, serials: readonly string[]): Promise<{ serial: string; user_id: number }[]> {
  if (serials.length === 0) return [];
  return db.selectFrom('modems').select(['serial', 'user_id']).where('serial', '=', sql<string>`any(${[...serials]}::text[])`).execute();
}

/**
 * Registers the serials to `userId` where not registered yet (existing ones keep their user). Runs as its
 * own statement: callers on the upload path rely on it committing before the punch transaction starts.
 */
export async function registerModems(db: Kysely<DB>, serials: readonly string[], userId: number): Promise<void> {
  if (serials.length === 0) return;
  await sql`
    insert into modems (serial, user_id)
    select s, ${userId}::int from unnest(${[...serials]}::text[]) as s
    on conflict (serial) do nothing
  `.execute(db);
}

/** Modems of one user (or all when `userId` is null), ascending serial. */
export async function listModems(db: Kysely<DB>, userId: number | null): Promise<ModemListRow[]> {
  let q = db.selectFrom('modems as m').innerJoin('users as u', 'u.id', 'm.user_id').select(['m.serial', 'u.user_name', 'm.created_at']);
  if (userId !== null) q = q.where('m.user_id', '=', userId);
  return q.orderBy('m.serial').execute();
}

/** Serials of the modems of the user named `userName` (empty when the user does not exist). */
export async function modemsOfUserName(db: Kysely<DB>, userName: string): Promise<string[]> {
  const rows = await db
    .selectFrom('modems as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select('m.serial')
    .where('u.user_name', '=', userName)
    .execute();
  return rows.map((r) => r.serial);
}

/** For each existing serial: its user and whether a public event contains it. */
export async function modemAccess(db: Kysely<DB>, serials: readonly string[]): Promise<ModemAccessRow[]> {
  if (serials.length === 0) return [];
  const { rows } = await sql<ModemAccessRow>`
    select m.serial, m.user_id,
           exists (select 1 from event_modems em join events e on e.id = em.event_id
                   where em.modem = m.serial and e.is_public) as is_public
    from modems m
    where m.serial = any(${[...serials]}::text[])
  `.execute(db);
  return rows;
}
