/**
 * SQL of users and API keys. Free functions taking the Kysely executor first (a transaction or the pool).
 */
import { sql, type Kysely, type Selectable } from 'kysely';
import type { DB, ApiKeysTable, UsersTable } from '../db/schema';
import type { Role } from '../auth/principal';

/** A `users` row. */
export type UserRow = Selectable<UsersTable>;
/** An `api_keys` row. */
export type ApiKeyRow = Selectable<ApiKeysTable>;

/** The owner of an active key, found by the key's hash. */
export interface ActiveKeyOwner {
  key_id: number;
  user_id: number;
  user_name: string;
  role: Role;
}

/** Inserts a user; throws the unique violation (23505) when the name is taken. */
export async function insertUser(db: Kysely<DB>, userName: string, role: Role): Promise<UserRow> {
  return db.insertInto('users').values({ user_name: userName, role }).returningAll().executeTakeFirstOrThrow();
}

/** The user with this name, if any. */
export async function findUserByName(db: Kysely<DB>, userName: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('user_name', '=', userName).executeTakeFirst();
}

/** The user with this id, if any. */
export async function findUserById(db: Kysely<DB>, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** All users, ascending id. */
export async function listUsers(db: Kysely<DB>): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().orderBy('id').execute();
}

/** Whether any user exists (fresh database check for the bootstrap admin). */
export async function anyUserExists(db: Kysely<DB>): Promise<boolean> {
  const row = await db.selectFrom('users').select('id').limit(1).executeTakeFirst();
  return row !== undefined;
}

/** Advisory lock (with the user id) under which a user's keys are counted and inserted. */
const KEY_QUOTA_LOCK = 0x6b6579; // 'key'

/**
 * Stores a key's hash in transaction `tx` unless the user already has `maxActive` active (unrevoked) keys
 * (undefined then, nothing stored). Count and insert hold a per-user transaction lock.
 */
export async function insertApiKeyWithin(
  tx: Kysely<DB>,
  key: { userId: number; hash: Buffer; prefix: string; name: string },
  maxActive: number,
): Promise<ApiKeyRow | undefined> {
  await sql`select pg_advisory_xact_lock(${KEY_QUOTA_LOCK}::int, ${key.userId}::int)`.execute(tx);
  const row = await tx
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', key.userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirstOrThrow();
  if (Number(row.n) >= maxActive) return undefined;
  return insertApiKey(tx, key);
}

/** Stores a key's hash for a user. */
export async function insertApiKey(db: Kysely<DB>, key: { userId: number; hash: Buffer; prefix: string; name: string }): Promise<ApiKeyRow> {
  return db
    .insertInto('api_keys')
    .values({ user_id: key.userId, key_hash: key.hash, prefix: key.prefix, name: key.name })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * The user of an active key with this hash, by the SQL function `active_key_owner` (migration 0008): the one
 * definition of an active key. One lookup through the
 * unique index on `key_hash`.
 */
export async function findActiveKeyOwner(db: Kysely<DB>, hash: Buffer): Promise<ActiveKeyOwner | undefined> {
  const { rows } = await sql<ActiveKeyOwner>`select key_id, user_id, user_name, role from active_key_owner(${hash})`.execute(db);
  return rows[0];
}

/**
 * Sets the key's `last_used_at` to now() unless it is already within `granularitySeconds` of now (the
 * conditional keeps instances that use the same key from each writing it: a second one, waiting on the row
 * lock, finds the new value and writes nothing). Returns whether the row was written.
 */
export async function touchKeyLastUsed(db: Kysely<DB>, id: number, granularitySeconds: number): Promise<boolean> {
  const { numAffectedRows } = await sql`
    update api_keys set last_used_at = now()
      where id = ${id}::int and (last_used_at is null or last_used_at < now() - make_interval(secs => ${granularitySeconds}::float8))
  `.execute(db);
  return numAffectedRows === 1n;
}

/** The keys of a user, ascending id. */
export async function listApiKeys(db: Kysely<DB>, userId: number): Promise<ApiKeyRow[]> {
  return db.selectFrom('api_keys').selectAll().where('user_id', '=', userId).orderBy('id').execute();
}

/** A key by id, if any. */
export async function findApiKey(db: Kysely<DB>, id: number): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Marks a key revoked now (keeps an earlier revocation time) and, in the same statement, sends
 * `NOTIFY <channel>, '<id>'`, delivered at its commit to every instance's LISTEN session, so that open punch
 * streams and held long-polls with this key end on every instance (live/live.service.ts `keyGuard`).
 */
export async function revokeApiKey(db: Kysely<DB>, id: number, channel: string): Promise<void> {
  await sql`
    with revoked as (update api_keys set revoked_at = now() where id = ${id}::int and revoked_at is null returning id)
    select pg_notify(${channel}, ${String(id)})
  `.execute(db);
}

/**
 * Whether the key with this id is still active by the rule of `active_key_owner` (migration 0008: it exists and
 * is not revoked), looked up by the key's primary key; for the re-checks of held live requests.
 */
export async function isKeyActive(db: Kysely<DB>, id: number): Promise<boolean> {
  const { rows } = await sql<{ active: boolean }>`
    select exists (select 1 from api_keys k join users u on u.id = k.user_id where k.id = ${id}::int and k.revoked_at is null) as active
  `.execute(db);
  return rows[0]?.active === true;
}
