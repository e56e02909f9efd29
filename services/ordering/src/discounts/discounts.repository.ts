/**
 * SQL of discount campaigns, codes and redemptions. Free functions taking the executor first, so the
 * order pipeline passes its transaction.
 */
import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import type { DB } from '../db/schema';
import type { DiscountCampaignsTable } from '../db/tables/discounts.tables';

/** A stored campaign. */
export type CampaignRow = Selectable<DiscountCampaignsTable>;

/** A code joined with its campaign's terms. */
export interface CodeWithCampaignRow {
  code_id: number;
  code: string;
  redemptions: number;
  max_redemptions: number;
  campaign_id: number;
  name: string;
  kind: string;
  percent: string | null;
  amount_cents: number | null;
  currency: string;
  valid_from: Date | null;
  valid_to: Date | null;
  minimum_order_net_cents: number;
  restricted_article_numbers: string[];
}

/** Inserts a campaign; returns it as stored. */
export async function insertCampaign(db: Kysely<DB>, row: Insertable<DiscountCampaignsTable>): Promise<CampaignRow> {
  return db.insertInto('discount_campaigns').values(row).returningAll().executeTakeFirstOrThrow();
}

/**
 * Inserts codes of a campaign (upper case) and returns the codes actually inserted; codes that exist
 * already (in any campaign) are skipped, never overwritten.
 */
export async function insertCodes(db: Kysely<DB>, campaignId: number, codes: readonly string[], maxRedemptions: number): Promise<string[]> {
  if (codes.length === 0) return [];
  const rows = await db
    .insertInto('discount_codes')
    .values(codes.map((code) => ({ campaign_id: campaignId, code, max_redemptions: maxRedemptions })))
    .onConflict((oc) => oc.column('code').doNothing())
    .returning('code')
    .execute();
  return rows.map((r) => r.code);
}

/** Codes (upper case) with their campaigns' terms; unknown codes are absent. */
export async function selectCodesWithCampaign(db: Kysely<DB>, codes: readonly string[]): Promise<CodeWithCampaignRow[]> {
  if (codes.length === 0) return [];
  return db
    .selectFrom('discount_codes as c')
    .innerJoin('discount_campaigns as k', 'k.id', 'c.campaign_id')
    .select([
      'c.id as code_id',
      'c.code',
      'c.redemptions',
      'c.max_redemptions',
      'k.id as campaign_id',
      'k.name',
      'k.kind',
      'k.percent',
      'k.amount_cents',
      'k.currency',
      'k.valid_from',
      'k.valid_to',
      'k.minimum_order_net_cents',
      'k.restricted_article_numbers',
    ])
    .where('c.code', 'in', [...codes])
    .execute();
}

/**
 * Redeems one use of a code if one is left: a single conditional update, so under any number of
 * concurrent orders a code with N uses is redeemed at most N times (a concurrent redeemer waits for the
 * row lock, then re-checks the condition). Returns whether a use was taken.
 */
export async function redeemOnce(db: Kysely<DB>, codeId: number): Promise<boolean> {
  const r = await sql<{ id: number }>`
    update discount_codes set redemptions = redemptions + 1
    where id = ${codeId} and redemptions < max_redemptions
    returning id`.execute(db);
  return r.rows.length === 1;
}

/** Records which order redeemed a code and for how much (net cents). */
export async function insertRedemptions(db: Kysely<DB>, orderId: number, redemptions: readonly { codeId: number; netAmountCents: number }[]): Promise<void> {
  if (redemptions.length === 0) return;
  await db
    .insertInto('discount_redemptions')
    .values(redemptions.map((r) => ({ code_id: r.codeId, order_id: orderId, net_amount_cents: r.netAmountCents })))
    .execute();
}

/**
 * Ends the short hold of unpaid orders' code uses (ordering README "Discount uses of unpaid orders"): for up to
 * `limit` `pending_payment` orders without a payment on its way, created at or before `cutoff`, that still hold
 * a use, each held use is marked released and its code counts one down, in one statement. The orders are
 * locked `for update skip locked`, so a payment confirming one of them at the same time waits or is waited for,
 * and concurrent sweeps take disjoint orders. Returns the released uses (order id, code).
 */
export async function releaseExpiredHolds(db: Kysely<DB>, cutoff: Date, limit: number): Promise<{ order_id: number; code: string }[]> {
  const r = await sql<{ order_id: number; code: string }>`
    with due as (
      select o.id from orders o
       where o.state = 'pending_payment' and o.payment_on_hold_at is null and o.created_at <= ${cutoff}
         and exists (select 1 from discount_redemptions r where r.order_id = o.id and r.released_at is null)
       order by o.created_at limit ${limit}
       for update skip locked),
    released as (
      update discount_redemptions r set released_at = now()
        from due where r.order_id = due.id and r.released_at is null
      returning r.order_id, r.code_id),
    counted as (
      update discount_codes c set redemptions = c.redemptions - n.k
        from (select code_id, count(*)::int as k from released group by code_id) n
       where c.id = n.code_id
      returning c.id, c.code)
    select released.order_id, counted.code from released join counted on counted.id = released.code_id`.execute(db);
  return r.rows;
}

/**
 * Takes back the uses an order's short hold had released, when the order is paid after all: each released use
 * whose code has a use left is held again (its code counts one up, never past its limit); the others stay
 * released. Run in the paying transaction. Returns every released use of the order with whether it was taken back.
 */
export async function retakeReleasedUses(trx: Kysely<DB>, orderId: number): Promise<{ code: string; retaken: boolean }[]> {
  const r = await sql<{ code: string; retaken: boolean }>`
    with taken as (
      update discount_codes c set redemptions = c.redemptions + 1
        from discount_redemptions r
       where r.order_id = ${orderId} and r.released_at is not null and c.id = r.code_id and c.redemptions < c.max_redemptions
      returning c.id),
    back as (
      update discount_redemptions r set released_at = null from taken where r.order_id = ${orderId} and r.code_id = taken.id returning r.code_id)
    select c.code, c.id in (select code_id from back) as retaken
      from discount_redemptions r join discount_codes c on c.id = r.code_id
     where r.order_id = ${orderId} and r.released_at is not null`.execute(trx);
  return r.rows;
}
