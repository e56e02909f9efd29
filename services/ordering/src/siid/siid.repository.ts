/**
 * SQL of the card-number table. Free functions taking the executor first (a transaction may be passed).
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema';

/** The numbers among `candidates` that are claimed (reserved or sold). One index probe per candidate. */
export async function takenAmong(db: Kysely<DB>, candidates: readonly number[]): Promise<Set<number>> {
  if (candidates.length === 0) return new Set();
  const rows = await db
    .selectFrom('card_numbers')
    .select('service_id')
    .where('service_id', '=', sql<number>`any(${sql.val([...candidates])}::int[])`)
    .execute();
  return new Set(rows.map((r) => r.service_id));
}

/** Whether one number is claimed. */
export async function isTaken(db: Kysely<DB>, serviceId: number): Promise<boolean> {
  const row = await db.selectFrom('card_numbers').select('service_id').where('service_id', '=', serviceId).executeTakeFirst();
  return !!row;
}

/**
 * Up to `limit` unclaimed numbers in `[from, to]`, ascending, not in `exclude`. Walks the range with the
 * primary-key index and stops at `limit`: used only when random sampling finds too few free numbers.
 */
export async function freeInRange(db: Kysely<DB>, from: number, to: number, limit: number, exclude: readonly number[]): Promise<number[]> {
  if (from > to || limit <= 0) return [];
  const { rows } = await sql<{ n: number }>`
    select s as n
    from generate_series(${from}::int, ${to}::int) as s
    where not exists (select 1 from card_numbers c where c.service_id = s)
      and not (s = any(${sql.val([...exclude])}::int[]))
    order by s
    limit ${limit}`.execute(db);
  return rows.map((r) => r.n);
}

/**
 * Claims numbers for an order: inserts the rows that are free and returns the numbers inserted. A number
 * claimed by a concurrent transaction makes this wait for it, then skip the number if it committed
 * (`on conflict do nothing`), so the caller's transaction stays usable. Ascending insert order keeps
 * two orders with overlapping numbers from deadlocking.
 */
export async function insertClaims(db: Kysely<DB>, cardType: string, serviceIds: readonly number[], orderRef: string | null, state: string): Promise<number[]> {
  if (serviceIds.length === 0) return [];
  const sorted = [...serviceIds].sort((a, b) => a - b);
  const { rows } = await sql<{ service_id: number }>`
    insert into card_numbers (service_id, card_type, state, order_ref)
    select n, ${cardType}, ${state}, ${orderRef}
    from unnest(${sql.val(sorted)}::int[]) with ordinality as t(n, ord)
    order by ord
    on conflict (service_id) do nothing
    returning service_id`.execute(db);
  return rows.map((r) => r.service_id);
}

/** Deletes the claims of an order (cancelled order, ERP re-import); returns how many. */
export async function deleteClaimsOfOrder(db: Kysely<DB>, orderRef: string): Promise<number> {
  const res = await db.deleteFrom('card_numbers').where('order_ref', '=', orderRef).executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Sets the state of the claims of an order; returns how many rows changed. */
export async function updateStateOfOrder(db: Kysely<DB>, orderRef: string, state: string): Promise<number> {
  const res = await db
    .updateTable('card_numbers')
    .set({ state, updated_at: new Date() })
    .where('order_ref', '=', orderRef)
    .where('state', '<>', state)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/**
 * Deletes the claims of the `numbers[i]`–`orderRefs[i]` pairs (a number claimed by another order is kept) and
 * returns the deleted claims with their state (`reserved` or `sold`).
 */
export async function deleteClaimPairs(
  trx: Kysely<DB>,
  numbers: readonly number[],
  orderRefs: readonly string[],
): Promise<{ service_id: number; state: string; order_ref: string }[]> {
  if (numbers.length === 0) return [];
  const r = await sql<{ service_id: number; state: string; order_ref: string }>`
    delete from card_numbers c using unnest(${[...numbers]}::int[], ${[...orderRefs]}::text[]) as t(n, ref)
    where c.service_id = t.n and c.order_ref = t.ref
    returning c.service_id, c.state, c.order_ref`.execute(trx);
  return r.rows;
}
