/**
 * SQL of the idempotency records of order requests (`idempotency_keys`): taking a key, and storing the reply
 * of the request that holds it together with the order transaction's outbox rows. Free functions taking the
 * executor first; the order pipeline passes its transaction.
 */
import { sql, type Kysely, type Selectable } from 'kysely';
import { PREPARED } from '@sports-timing/shared';
import type { DB } from '../../db/schema';
import { messagesInsert, notifyInserted, type NewOutboxMessage } from '../../outbox/outbox.repository';
import type { IdempotencyKeysTable } from '../../db/tables/orders.tables';

/** A stored `idempotency_keys` row. */
export type IdempotencyRow = Selectable<IdempotencyKeysTable>;

/**
 * Takes an idempotency key for this transaction in one statement: inserts the record, or takes over an
 * expired one. A record of a transaction still in flight makes this wait, at most `waitMs` (a transaction-
 * local `lock_timeout`, reset to the session's own (`DATABASE_LOCK_TIMEOUT_MS`) before the statement ends so
 * later waits of the transaction are bounded as everywhere else; PostgreSQL raises 55P03 when it expires).
 * When the key was taken, up to `purgeLimit` expired records nobody holds are deleted on the way. Returns null when the key is now this
 * transaction's, else the committed record that holds it (read by a second statement, whose snapshot
 * sees the record the wait was for).
 */
export async function takeIdempotencyKey(
  db: Kysely<DB>,
  rec: { scope: string; key: string; requestHash: string; expiresAt: Date; waitMs: number; purgeLimit: number },
): Promise<IdempotencyRow | null> {
  // `prior` keeps the session's lock_timeout; the insert reads its row from `wait_bound`, so the bound is set
  // before it can wait; `unbound` reads the insert's result, so the reset runs after the wait.
  const taken = await sql<{ taken: number }>`${PREPARED}
    with prior as materialized (select current_setting('lock_timeout') as lock_timeout),
    wait_bound as materialized (select set_config('lock_timeout', ${`${Math.max(1, Math.round(rec.waitMs))}ms`}, true) from prior),
    taken as (
      insert into idempotency_keys (scope, key, request_hash, expires_at)
      select ${rec.scope}, ${rec.key}, ${rec.requestHash}, ${rec.expiresAt}::timestamptz from wait_bound
      on conflict (scope, key) do update
        set request_hash = excluded.request_hash, order_id = null, response_status = null, response_body = null,
            created_at = now(), expires_at = excluded.expires_at
        where idempotency_keys.expires_at <= now()
      returning scope),
    unbound as materialized (select set_config('lock_timeout', (select lock_timeout from prior), true) from (select count(*) from taken) t),
    purged as (
      delete from idempotency_keys where ctid in (
        select ctid from idempotency_keys
        where expires_at <= now() and not (scope = ${rec.scope} and key = ${rec.key})
        limit ${rec.purgeLimit} for update skip locked)
      and exists (select 1 from taken))
    select (select count(*) from taken)::int as taken, (select count(*) from unbound)::int as unbound`.execute(db);
  if (taken.rows[0].taken === 1) return null;
  const existing = await db.selectFrom('idempotency_keys').selectAll().where('scope', '=', rec.scope).where('key', '=', rec.key).executeTakeFirst();
  return existing ?? null;
}

/**
 * Replaces the stored reply of key `claim` (held by order `orderId`) with `body` while the stored one has
 * no paylink yet (the reply is then the first answer that carried one). `json`, not `jsonb`: the reply is
 * kept as written, so a retry is answered the same bytes.
 */
export async function renewIdempotentResponse(db: Kysely<DB>, claim: { scope: string; key: string }, orderId: number, body: unknown): Promise<void> {
  await sql`${PREPARED}
    update idempotency_keys set response_body = ${JSON.stringify(body)}::json
    where scope = ${claim.scope} and key = ${claim.key} and order_id = ${orderId}
      and response_body->>'paylinkUrl' is null`.execute(db);
}

/**
 * The last writes of an order transaction in one prepared statement: its outbox rows (at least one: the
 * confirmation e-mail; dispatchers woken on commit; those whose kind and dedupe key exist are skipped) and,
 * when the request holds an idempotency key, the stored response of that key.
 */
export async function insertOutboxAndCompleteKey(
  db: Kysely<DB>,
  messages: readonly NewOutboxMessage[],
  completion: { scope: string; key: string; orderId: number; status: number; body: unknown } | null,
): Promise<void> {
  await sql`${PREPARED}
    with inserted as (${messagesInsert(messages)}),
    completed as (
      update idempotency_keys set order_id = ${completion?.orderId ?? null}::int, response_status = ${completion?.status ?? null}::int, response_body = ${completion ? JSON.stringify(completion.body) : null}::json
      where ${completion !== null}::boolean and scope = ${completion?.scope ?? null}::text and key = ${completion?.key ?? null}::text
      returning scope)
    select ${notifyInserted('inserted')} as notified, (select count(*) from completed)::int as completed`.execute(db);
}
