/**
 * SQL of the licenses (ordering spec §4.7). A free license has no e-mail; assignment is one conditional
 * statement, so concurrent assignments never share a license.
 */
import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import type { DB } from '../db/schema';
import type { LicensesTable } from '../db/tables/identity.tables';

/** A licenses row. */
export type LicenseRow = Selectable<LicensesTable>;

/** Inserts new (free) licenses. */
export async function insertLicenses(db: Kysely<DB>, rows: Insertable<LicensesTable>[]): Promise<void> {
  if (rows.length) await db.insertInto('licenses').values(rows).execute();
}

/** Secret hashes of a product's licenses in creation order. */
export async function secretHashesOf(db: Kysely<DB>, product: string): Promise<string[]> {
  const rows = await db.selectFrom('licenses').select('secret_hash').where('product', '=', product).orderBy('seq').execute();
  return rows.map((r) => r.secret_hash);
}

/**
 * Assigns the oldest free license of `product` to `email`: the inner select locks one free row and skips
 * rows other transactions hold, so two concurrent assignments get two different licenses (or one gets
 * none). Undefined when no free license is left.
 */
export function assignFreeLicense(db: Kysely<DB>, product: string, email: string): Promise<LicenseRow | undefined> {
  return db
    .updateTable('licenses')
    .set({ email, assigned_at: new Date() })
    .where('id', '=', (eb) =>
      eb.selectFrom('licenses').select('id').where('product', '=', product).where('email', 'is', null).orderBy('seq').limit(1).forUpdate().skipLocked(),
    )
    .where('email', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** Assigns the license `id` of `product` if it is still free; undefined otherwise. */
export function assignLicenseById(db: Kysely<DB>, id: string, product: string, email: string): Promise<LicenseRow | undefined> {
  return db
    .updateTable('licenses')
    .set({ email, assigned_at: new Date() })
    .where('id', '=', id)
    .where('product', '=', product)
    .where('email', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** The license with this id, or undefined. */
export function findLicense(db: Kysely<DB>, id: string): Promise<LicenseRow | undefined> {
  return db.selectFrom('licenses').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Locks the license of `product` assigned to `email` (case-insensitive): the one with `licenseId` when
 * given, else the most recently assigned one. Undefined when there is none.
 */
export function lockAssignedLicense(db: Kysely<DB>, product: string, email: string, licenseId?: string): Promise<LicenseRow | undefined> {
  let q = db
    .selectFrom('licenses')
    .selectAll()
    .where('product', '=', product)
    .where(sql`lower(email)`, '=', email.toLowerCase());
  if (licenseId) q = q.where('id', '=', licenseId);
  return q.orderBy('assigned_at', 'desc').orderBy('seq', 'desc').limit(1).forUpdate().executeTakeFirst();
}

/** Stores a newly issued key; returns the row with the incremented `keys_issued`. */
export function storeLicenseKey(db: Kysely<DB>, id: string, key: string, issuedAt: Date): Promise<LicenseRow> {
  return db
    .updateTable('licenses')
    .set((eb) => ({ license_key: key, key_issued_at: issuedAt, keys_issued: eb('keys_issued', '+', 1) }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Licenses assigned to `email` (case-insensitive), optionally of one product, newest assignment first. */
export function licensesOf(db: Kysely<DB>, email: string, product?: string): Promise<LicenseRow[]> {
  let q = db
    .selectFrom('licenses')
    .selectAll()
    .where(sql`lower(email)`, '=', email.toLowerCase());
  if (product) q = q.where('product', '=', product);
  return q.orderBy('assigned_at', 'desc').orderBy('seq', 'desc').execute();
}
