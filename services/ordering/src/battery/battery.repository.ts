/**
 * SQL of the battery records. Free functions taking the executor first.
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema';

/** The battery record of a card, or undefined. `battery_date` is `YYYY-MM-DD` or null. */
export async function findBatteryRecord(db: Kysely<DB>, cardNumber: number): Promise<{ card_number: number; battery_date: string | null } | undefined> {
  return db.selectFrom('battery_records').select(['card_number', 'battery_date']).where('card_number', '=', cardNumber).executeTakeFirst();
}

/** Counts of {@link upsertBatteryRecords}. */
export interface UpsertCounts {
  inserted: number;
  updated: number;
}

/**
 * Inserts or replaces battery records in one statement (atomic). Records whose date is unchanged are not
 * written (neither counted as updated nor given a new `updated_at`). Card numbers must be distinct.
 */
export async function upsertBatteryRecords(db: Kysely<DB>, cardNumbers: readonly number[], batteryDates: readonly (string | null)[]): Promise<UpsertCounts> {
  if (cardNumbers.length === 0) return { inserted: 0, updated: 0 };
  const { rows } = await sql<{ inserted: number; updated: number }>`
    with written as (
      insert into battery_records (card_number, battery_date)
      select card_number, battery_date
      from unnest(${sql.val([...cardNumbers])}::int[], ${sql.val([...batteryDates])}::date[]) as t(card_number, battery_date)
      on conflict (card_number) do update
        set battery_date = excluded.battery_date, updated_at = now()
        where battery_records.battery_date is distinct from excluded.battery_date
      returning (xmax = 0) as is_insert
    )
    select count(*) filter (where is_insert)::int as inserted, count(*) filter (where not is_insert)::int as updated
    from written`.execute(db);
  return rows[0] ?? { inserted: 0, updated: 0 };
}
