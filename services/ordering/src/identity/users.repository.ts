/**
 * SQL of the users table (ordering spec §4.6). Free functions taking the executor first, so a
 * transaction can be passed in.
 */
import { sql, type Insertable, type Kysely, type Selectable, type Updateable } from 'kysely';
import type { DB } from '../db/schema';
import type { UsersTable } from '../db/tables/identity.tables';

/** A users row. */
export type UserRow = Selectable<UsersTable>;

/** The user with this id, or undefined. */
export function findUserById(db: Kysely<DB>, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The user with this user name (case-insensitive), or undefined. */
export function findUserByName(db: Kysely<DB>, userName: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where(sql`lower(user_name)`, '=', userName.toLowerCase())
    .executeTakeFirst();
}

/**
 * The user a login name designates: the user with that user name, else the one with that e-mail address
 * (both case-insensitive; a user name match wins because user names may look like e-mail addresses).
 */
export function findUserByLogin(db: Kysely<DB>, login: string): Promise<UserRow | undefined> {
  const l = login.toLowerCase();
  return db
    .selectFrom('users')
    .selectAll()
    .where((eb) => eb.or([eb(sql`lower(user_name)`, '=', l), eb(sql`lower(email)`, '=', l)]))
    .orderBy(sql`lower(user_name) = ${l}`, 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** All users sorted by user name (case-insensitive). */
export function listUsers(db: Kysely<DB>): Promise<UserRow[]> {
  return db
    .selectFrom('users')
    .selectAll()
    .orderBy(sql`lower(user_name)`)
    .orderBy('id')
    .execute();
}

/** Whether any user exists (bootstrap runs only on an empty table). */
export async function anyUserExists(db: Kysely<DB>): Promise<boolean> {
  return !!(await db.selectFrom('users').select('id').limit(1).executeTakeFirst());
}

/** Inserts a user; unique violations (user name, e-mail) surface as PostgreSQL error 23505. */
export function insertUser(db: Kysely<DB>, row: Insertable<UsersTable>): Promise<UserRow> {
  return db.insertInto('users').values(row).returningAll().executeTakeFirstOrThrow();
}

/**
 * Updates a user (and `updated_at`); with `bumpTokenVersion`, raises `token_version` by one in the same
 * statement (an increment, so concurrent changes never write the same version twice). Undefined when the
 * user does not exist.
 */
export function updateUser(
  db: Kysely<DB>,
  id: number,
  changes: Updateable<UsersTable>,
  opts: { bumpTokenVersion?: boolean } = {},
): Promise<UserRow | undefined> {
  return db
    .updateTable('users')
    .set({ ...changes, updated_at: new Date(), ...(opts.bumpTokenVersion ? { token_version: sql<number>`token_version + 1` } : {}) })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Locks the user row for the rest of the transaction; undefined when it does not exist. */
export function lockUser(db: Kysely<DB>, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/**
 * Locks every active admin row (in id order, so concurrent callers cannot deadlock) and returns their ids:
 * two concurrent demotions of the last two admins serialize here, and the second sees one admin left.
 */
export async function lockActiveAdmins(db: Kysely<DB>): Promise<number[]> {
  const rows = await db
    .selectFrom('users')
    .select('id')
    .where('is_active', '=', true)
    .where(sql<boolean>`'admin' = any(roles)`)
    .orderBy('id')
    .forUpdate()
    .execute();
  return rows.map((r) => r.id);
}

/** Records a successful login. */
export async function touchLastLogin(db: Kysely<DB>, id: number): Promise<void> {
  await db.updateTable('users').set({ last_login_at: new Date() }).where('id', '=', id).execute();
}

/** `is_active` and `token_version` of a user, or undefined when the user does not exist. */
export function userTokenState(db: Kysely<DB>, id: number): Promise<{ is_active: boolean; token_version: number } | undefined> {
  return db.selectFrom('users').select(['is_active', 'token_version']).where('id', '=', id).executeTakeFirst();
}

/** Whether a user other than `exceptId` has this e-mail address (case-insensitive). */
export async function emailTakenByOther(db: Kysely<DB>, email: string, exceptId: number): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where(sql`lower(email)`, '=', email.toLowerCase())
    .where('id', '<>', exceptId)
    .executeTakeFirst();
  return !!row;
}

/**
 * Replaces the user's pending e-mail change: earlier unspent tokens are spent, then the new one is stored
 * (as SHA-256 hex of the token text).
 */
export async function replaceEmailVerification(db: Kysely<DB>, v: { userId: number; email: string; tokenHash: string; expiresAt: Date }): Promise<void> {
  await db.updateTable('email_verifications').set({ used_at: new Date() }).where('user_id', '=', v.userId).where('used_at', 'is', null).execute();
  await db.insertInto('email_verifications').values({ user_id: v.userId, email: v.email, token_hash: v.tokenHash, expires_at: v.expiresAt }).execute();
}

/**
 * Spends an unexpired, unspent verification token in one conditional update (two concurrent presentations
 * cannot both succeed); undefined when it cannot be spent.
 */
export function spendEmailVerification(db: Kysely<DB>, tokenHash: string): Promise<{ user_id: number; email: string } | undefined> {
  return db
    .updateTable('email_verifications')
    .set({ used_at: new Date() })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', new Date())
    .returning(['user_id', 'email'])
    .executeTakeFirst();
}
