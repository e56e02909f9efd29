/**
 * SQL of the refresh tokens (ordering spec §4.1, refresh-token grant). Tokens are stored as SHA-256 hex.
 */
import type { Kysely, Selectable } from 'kysely';
import type { DB } from '../db/schema';
import type { RefreshTokensTable } from '../db/tables/identity.tables';

/** A refresh_tokens row. */
export type RefreshTokenRow = Selectable<RefreshTokensTable>;

/** Stores a new refresh token of `familyId`. */
export async function insertRefreshToken(
  db: Kysely<DB>,
  row: { tokenHash: string; familyId: string; userId: number; scope: string | null; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('refresh_tokens')
    .values({ token_hash: row.tokenHash, family_id: row.familyId, user_id: row.userId, scope: row.scope, expires_at: row.expiresAt })
    .execute();
}

/**
 * Spends a refresh token: marks it used if it is unused, unrevoked and unexpired, in one conditional
 * update, so two concurrent presentations of one token can never both succeed. Undefined when it could
 * not be spent.
 */
export function spendRefreshToken(db: Kysely<DB>, tokenHash: string): Promise<RefreshTokenRow | undefined> {
  return db
    .updateTable('refresh_tokens')
    .set({ used_at: new Date() })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', new Date())
    .returningAll()
    .executeTakeFirst();
}

/** The row of a token hash, or undefined. */
export function findRefreshToken(db: Kysely<DB>, tokenHash: string): Promise<RefreshTokenRow | undefined> {
  return db.selectFrom('refresh_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

/** Revokes every token of a family; returns how many were still unrevoked. */
export async function revokeFamily(db: Kysely<DB>, familyId: string): Promise<number> {
  const r = await db
    .updateTable('refresh_tokens')
    .set({ revoked_at: new Date() })
    .where('family_id', '=', familyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** Revokes every refresh token of a user (deactivation, password change). */
export async function revokeUserRefreshTokens(db: Kysely<DB>, userId: number): Promise<void> {
  await db.updateTable('refresh_tokens').set({ revoked_at: new Date() }).where('user_id', '=', userId).where('revoked_at', 'is', null).execute();
}
