/**
 * Users and API keys (tags `users`, `keys`; security scheme `apiKey`): authentication of the `apikey`
 * header, user creation with a first key, key creation/listing/revocation, and the bootstrap admin.
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { ApiError } from '@sports-timing/shared';
import type { DB } from '../db/schema';
import { generateApiKey, hashApiKey, keyDisplayPrefix, keyLookupHash } from '../auth/keys';
import type { Request } from 'express';
import type { Principal, Role } from '../auth/principal';
import type { KeyUses } from './key-uses';
import * as repo from './users.repository';
import { toApiKeyDto, toUserDto, type ApiKeyCreatedDto, type ApiKeyDto, type UserDto } from './users.mapper';

/** Value of `WWW-Authenticate` on 401 answers. */
export const AUTH_SCHEME = 'apikey';

/** 401 for a missing key where one is needed. */
export function keyRequired(detail = 'An API key is required (header apikey).'): ApiError {
  return new ApiError(401, detail, { headers: { 'WWW-Authenticate': AUTH_SCHEME } });
}

/**
 * Channel of key revocations (payload: the key id), sent by {@link revokeKey} and heard by every instance's
 * LISTEN session (live/listener.ts).
 */
export const KEY_CHANNEL = 'timing_keys';

/**
 * The 401's detail for a request without a key: how the service takes one (the `apikey` header of the
 * spec's security scheme), and what went wrong when the key came as `Authorization: Bearer` (the
 * ordering service's way, a common first try) or in another header.
 */
export function missingKeyDetail(req: Request): string {
  const authorization = req.headers.authorization;
  if (authorization !== undefined && /^bearer\s/i.test(authorization))
    return 'An API key is required in the apikey header (apikey: tk_…); this service does not read Authorization: Bearer.';
  return 'An API key is required in the apikey header (apikey: tk_…).';
}

/** The 401 for an unknown or revoked API key. */
export function unknownKey(): ApiError {
  return keyRequired('The API key is unknown or revoked.');
}

/**
 * The principal of an API key, looked up by its SHA-256 on every request (so a revocation takes effect
 * at once). Unknown or revoked → ApiError 401 ({@link unknownKey}). The rules: `keyLookupHash` and the SQL
 * function `active_key_owner`. A key found is noted in `uses` (its `lastUsedAt`, written off the request's path).
 */
export async function authenticateKey(db: Kysely<DB>, key: string, uses: KeyUses): Promise<Principal> {
  const hash = keyLookupHash(key);
  const owner = hash === undefined ? undefined : await repo.findActiveKeyOwner(db, hash);
  if (!owner) throw unknownKey();
  uses.record(owner.key_id);
  return { userId: owner.user_id, userName: owner.user_name, role: owner.role, keyId: owner.key_id, roles: [owner.role] };
}

/** Whether a pg error is a unique violation. */
function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: unknown })?.code === '23505';
}

async function issueKey(db: Kysely<DB>, userId: number, name: string, key = generateApiKey()): Promise<ApiKeyCreatedDto> {
  const row = await repo.insertApiKey(db, { userId, hash: hashApiKey(key), prefix: keyDisplayPrefix(key), name });
  return { ...toApiKeyDto(row), key };
}

/**
 * Creates a user and its first key (shown once). `key` lets the bootstrap use a configured key;
 * otherwise one is generated. A taken user name → 409.
 */
export async function createUserWithKey(
  db: Kysely<DB>,
  input: { userName: string; role?: Role; keyName?: string; key?: string },
): Promise<{ user: UserDto; key: ApiKeyCreatedDto }> {
  try {
    return await db.transaction().execute(async (tx) => {
      const user = await repo.insertUser(tx, input.userName, input.role ?? 'user');
      const key = await issueKey(tx, user.id, input.keyName ?? 'default', input.key);
      return { user: toUserDto(user), key };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new ApiError(409, `The user name ${input.userName} is taken.`);
    throw err;
  }
}

/** Returns the user named `userName`, creating it (without keys) when missing; race-safe. */
export async function ensureUser(db: Kysely<DB>, userName: string, role: Role): Promise<UserDto> {
  const existing = await repo.findUserByName(db, userName);
  if (existing) return toUserDto(existing);
  try {
    return toUserDto(await repo.insertUser(db, userName, role));
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    const row = await repo.findUserByName(db, userName);
    if (!row) throw err;
    return toUserDto(row);
  }
}

/** All users (admin operation). */
export async function listUsers(db: Kysely<DB>): Promise<UserDto[]> {
  return (await repo.listUsers(db)).map(toUserDto);
}

/** One user by id, or 404. */
export async function getUser(db: Kysely<DB>, id: number): Promise<UserDto> {
  const row = await repo.findUserById(db, id);
  if (!row) throw new ApiError(404, `No user ${id}.`);
  return toUserDto(row);
}

/**
 * A new key for the caller (shown once). A non-admin caller with `maxKeys` active keys already → 403 naming
 * the quota, nothing created (so a stolen key cannot mint keys without end); the count and the insert run
 * under a per-user lock (docs/decisions.md §5 "Quotas").
 */
export async function createKey(db: Kysely<DB>, caller: Principal, name: string, maxKeys: number): Promise<ApiKeyCreatedDto> {
  if (caller.role === 'admin') return issueKey(db, caller.userId, name);
  const key = generateApiKey();
  const row = await db
    .transaction()
    .execute((tx) => repo.insertApiKeyWithin(tx, { userId: caller.userId, hash: hashApiKey(key), prefix: keyDisplayPrefix(key), name }, maxKeys));
  if (row === undefined)
    throw new ApiError(403, `Key quota reached: a user holds at most ${maxKeys} active keys. Revoke a key you no longer use (deleteKey) first.`);
  return { ...toApiKeyDto(row), key };
}

/** The caller's keys, revoked ones included. */
export async function listKeys(db: Kysely<DB>, caller: Principal): Promise<ApiKeyDto[]> {
  return (await repo.listApiKeys(db, caller.userId)).map(toApiKeyDto);
}

/** A key the caller may see (own; admins any); another user's key is 404 so ids reveal nothing. */
async function visibleKey(db: Kysely<DB>, caller: Principal, id: number): Promise<repo.ApiKeyRow> {
  const row = await repo.findApiKey(db, id);
  if (!row || (row.user_id !== caller.userId && caller.role !== 'admin')) throw new ApiError(404, `No key ${id}.`);
  return row;
}

/** One key (own; admins any). */
export async function getKey(db: Kysely<DB>, caller: Principal, id: number): Promise<ApiKeyDto> {
  return toApiKeyDto(await visibleKey(db, caller, id));
}

/**
 * Revokes a key (own; admins any); idempotent. Ends the live requests held with it on every instance
 * ({@link KEY_CHANNEL}).
 */
export async function revokeKey(db: Kysely<DB>, caller: Principal, id: number): Promise<void> {
  await visibleKey(db, caller, id);
  await repo.revokeApiKey(db, id, KEY_CHANNEL);
}

/** Whether the key with id `keyId` is still active (held live requests re-check it, live/live.service.ts). */
export function isKeyActive(db: Kysely<DB>, keyId: number): Promise<boolean> {
  return repo.isKeyActive(db, keyId);
}

/**
 * On a database without users, creates `admin` (role admin) with `bootstrap.key` (TIMING_BOOTSTRAP_API_KEY, or a
 * development key kept in the file `bootstrap.generatedIn`). A generated development key is logged, only on
 * the start that creates the admin, with the file it is kept in. `null` (a deployment without
 * TIMING_BOOTSTRAP_API_KEY): nobody is created and, on a database without users, one warning names the
 * variable. Returns whether the admin was created.
 */
export async function ensureBootstrapAdmin(db: Kysely<DB>, bootstrap: { key: string; generatedIn?: string } | null, logger: Logger): Promise<boolean> {
  if (await repo.anyUserExists(db)) return false;
  if (bootstrap === null) {
    logger.warn('no bootstrap admin created: TIMING_BOOTSTRAP_API_KEY is unset (staging and production generate no key)');
    return false;
  }
  try {
    await createUserWithKey(db, { userName: 'admin', role: 'admin', keyName: 'bootstrap', key: bootstrap.key });
  } catch (err) {
    // Another instance starting at the same time created it first.
    if (err instanceof ApiError && err.status === 409) return false;
    throw err;
  }
  if (bootstrap.generatedIn !== undefined)
    logger.info(
      { userName: 'admin', developmentApiKey: bootstrap.key, file: bootstrap.generatedIn },
      `created bootstrap admin with a generated development API key (shown once; stored in ${bootstrap.generatedIn})`,
    );
  else logger.info({ userName: 'admin' }, 'created bootstrap admin with TIMING_BOOTSTRAP_API_KEY');
  return true;
}
