/**
 * SQL of the stored ERP API tokens (`erp_api_tokens`, migration 0007). Rows hold ciphertext only.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';
import type { ErpSystem } from './erp.types';

/** A stored token row (ciphertext, not the token). */
export interface StoredErpToken {
  ciphertext: string;
  keyVersion: number;
  updatedAt: Date;
}

/** The stored row of `system`, or null. */
export async function findStoredToken(db: Kysely<DB>, system: ErpSystem): Promise<StoredErpToken | null> {
  const row = await db.selectFrom('erp_api_tokens').select(['ciphertext', 'key_version', 'updated_at']).where('erp_system', '=', system).executeTakeFirst();
  return row ? { ciphertext: row.ciphertext, keyVersion: row.key_version, updatedAt: row.updated_at } : null;
}

/** Inserts or replaces the row of `system` (one statement: concurrent sets end with one of them). */
export async function upsertStoredToken(db: Kysely<DB>, system: ErpSystem, ciphertext: string, keyVersion: number, updatedBy: string): Promise<void> {
  await db
    .insertInto('erp_api_tokens')
    .values({ erp_system: system, ciphertext, key_version: keyVersion, updated_at: new Date(), updated_by: updatedBy })
    .onConflict((oc) => oc.column('erp_system').doUpdateSet({ ciphertext, key_version: keyVersion, updated_at: new Date(), updated_by: updatedBy }))
    .execute();
}
