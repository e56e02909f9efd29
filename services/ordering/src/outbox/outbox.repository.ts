/**
 * SQL of the transactional job outbox. Functions take the executor first so callers pass their transaction.
 */
import { sql, type Expression, type Kysely, type Selectable } from 'kysely';
import { PREPARED } from '@sports-timing/shared';
import type { DB } from '../db/schema';
import type { OutboxMessagesTable } from '../db/tables/outbox.tables';

/** A stored outbox row. */
export type OutboxMessage = Selectable<OutboxMessagesTable>;

/** Every column of a stored outbox row, named (for `PREPARED` statements). */
const OUTBOX_COLUMNS = sql.raw(
  (
    [
      'id',
      'kind',
      'dedupe_key',
      'message_id',
      'payload',
      'attempts',
      'next_attempt_at',
      'locked_until',
      'sent_at',
      'dead_at',
      'last_error',
      'created_at',
    ] satisfies (keyof OutboxMessagesTable)[]
  ).join(', '),
);

/** A row to insert with {@link insertMessages}. */
export interface NewOutboxMessage {
  kind: string;
  dedupeKey: string;
  messageId?: string | null;
  payload: unknown;
  notBefore?: Date;
  /** Leased by its enqueuer until then (dispatchers skip it; see `reserveMs` in outbox.service.ts). */
  lockedUntil?: Date;
}

/**
 * Inserts a job unless one with the same kind and dedupe key exists; wakes dispatchers on commit.
 * Returns whether it was new.
 */
export async function insertMessage(db: Kysely<DB>, m: NewOutboxMessage): Promise<boolean> {
  return (await insertMessages(db, [m])) === 1;
}

/**
 * Inserts jobs in one (prepared) statement, skipping those whose kind and dedupe key exist; wakes
 * dispatchers on commit. Returns how many were new.
 * @internal
 */
export async function insertMessages(db: Kysely<DB>, ms: readonly NewOutboxMessage[]): Promise<number> {
  if (ms.length === 0) return 0;
  // Listeners hear the NOTIFY only if (and when) the enqueuing transaction commits. It is sent from the
  // same statement, when a row was inserted.
  const r = await sql<{ inserted: number }>`${PREPARED}
    with inserted as (${messagesInsert(ms)})
    select (select count(*) from inserted)::int as inserted, ${notifyInserted('inserted')} as notified`.execute(db);
  return r.rows[0].inserted;
}

/**
 * The insert of {@link insertMessages} as SQL to embed (a data-modifying CTE of a caller's statement),
 * returning the id, kind and reservation (`locked_until`) of each new row; select {@link notifyInserted} of the
 * CTE to wake the dispatchers' lanes of those kinds. The
 * rows travel as one JSON parameter, so the text does not depend on them (a `PREPARED` statement may hold it).
 */
export function messagesInsert(ms: readonly NewOutboxMessage[]) {
  const rows = ms.map((m) => ({
    kind: m.kind,
    dedupe_key: m.dedupeKey,
    message_id: m.messageId ?? null,
    payload: m.payload,
    next_attempt_at: m.notBefore ?? null,
    locked_until: m.lockedUntil ?? null,
  }));
  return sql<{
    id: number;
    kind: string;
    locked_until: Date | null;
  }>`insert into outbox_messages (kind, dedupe_key, message_id, payload, next_attempt_at, locked_until)
    select m.kind, m.dedupe_key, m.message_id, m.payload, coalesce(m.next_attempt_at, now()), m.locked_until
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      as m(kind text, dedupe_key text, message_id text, payload jsonb, next_attempt_at timestamptz, locked_until timestamptz)
    on conflict (kind, dedupe_key) do nothing
    returning id, kind, locked_until`;
}

/** Channel the dispatchers LISTEN on; a notification's payload is the kind of the new or revived job. */
export const OUTBOX_CHANNEL = 'outbox';

/**
 * `pg_notify('outbox', <kind>)`: wakes the dispatchers' lanes of `kind` (an SQL expression, e.g. the column of
 * a CTE's rows) once the transaction commits (NOTIFY is transactional, and PostgreSQL sends one notification
 * per distinct payload of a transaction).
 */
function notifyOutbox(kind: Expression<string>) {
  return sql<unknown>`pg_notify(${sql.lit(OUTBOX_CHANNEL)}, ${kind})`;
}

/**
 * Wakes the lanes of the jobs that the CTE named `cte` inserted (its rows have `kind` and `locked_until`, as
 * {@link messagesInsert} returns them): a notification per kind once the transaction commits, none for a
 * reserved job, which no lane may claim before its reservation ends (the dispatchers' poll finds it then).
 * Evaluates to the number of rows notified for.
 */
export function notifyInserted(cte: string) {
  return sql<number>`(select count(${notifyOutbox(sql.ref('kind'))}) from ${sql.table(cte)} where locked_until is null)::int`;
}

/**
 * "Neither done nor dead", for the statements that find their jobs by key (id, or kind and dedupe key). Written
 * so that it does not imply the due index's predicate: PostgreSQL then cannot read that partial index for
 * them, which it would whenever its statistics were taken while few jobs were open (it then reckons the index
 * nearly empty), reading every open job to find a few by id under a backlog. The key's own index is always right.
 */
function stillOpen(alias?: string) {
  return alias
    ? sql<boolean>`coalesce(${sql.ref(`${alias}.sent_at`)}, ${sql.ref(`${alias}.dead_at`)}) is null`
    : sql<boolean>`coalesce(sent_at, dead_at) is null`;
}

/**
 * Claims up to `limit` due jobs of `kind` for `leaseSeconds` (short transaction; the work happens outside any
 * transaction so no lock or snapshot is held during network I/O). Several dispatchers never claim the same
 * row; a dispatcher claims only kinds it has a handler for. Reads the kind's part of the due index only, so
 * other kinds' backlogs cost it nothing.
 */
export async function claimDue(db: Kysely<DB>, kind: string, limit: number, leaseSeconds: number): Promise<OutboxMessage[]> {
  const r = await sql<OutboxMessage>`${PREPARED}
    update outbox_messages set locked_until = now() + make_interval(secs => ${leaseSeconds}), attempts = attempts + 1
    where id in (
      select id from outbox_messages
      where sent_at is null and dead_at is null and next_attempt_at <= now()
        and (locked_until is null or locked_until < now()) and kind = ${kind}
      order by next_attempt_at, id
      limit ${limit}
      for update skip locked)
    returning ${OUTBOX_COLUMNS}`.execute(db);
  return r.rows;
}

/** A claim of a job: its id and the attempt number the claim set (the fencing token of the claim). */
export interface JobClaim {
  id: number;
  attempts: number;
}

/**
 * Marks claimed jobs as done, in one (prepared) statement. Only claims still held count: a job taken over
 * by another dispatcher since (its `attempts` moved on) or done/dead already is left as it is.
 */
export async function markSentMany(db: Kysely<DB>, claims: readonly JobClaim[]): Promise<void> {
  if (claims.length === 0) return;
  await sql`${PREPARED} update outbox_messages o set sent_at = now(), locked_until = null, last_error = null
    from unnest(${claims.map((c) => c.id)}::bigint[], ${claims.map((c) => c.attempts)}::int[]) as c(id, attempts)
    where o.id = c.id and o.attempts = c.attempts and ${stillOpen('o')}`.execute(db);
}

/** Releases a claimed job (if the claim is still held) for a later attempt at `nextAttemptAt`. */
export async function markFailed(db: Kysely<DB>, claim: JobClaim, error: string, nextAttemptAt: Date): Promise<void> {
  await db
    .updateTable('outbox_messages')
    .set({ locked_until: null, last_error: error.slice(0, 500), next_attempt_at: nextAttemptAt })
    .where('id', '=', claim.id)
    .where('attempts', '=', claim.attempts)
    .where(stillOpen())
    .execute();
}

/** Marks a claimed job (if the claim is still held) as permanently failed (dead); it is never claimed again. */
export async function markDead(db: Kysely<DB>, claim: JobClaim, error: string): Promise<void> {
  await db
    .updateTable('outbox_messages')
    .set({ locked_until: null, last_error: error.slice(0, 500), dead_at: new Date() })
    .where('id', '=', claim.id)
    .where('attempts', '=', claim.attempts)
    .where(stillOpen())
    .execute();
}

/**
 * Extends the leases of running jobs to `leaseSeconds` from now (the dispatcher's heartbeat), in one
 * statement; returns the ids whose claim is still held (a job missing from the answer was taken over, or
 * finished elsewhere, and its runner has lost it).
 */
export async function renewLeases(db: Kysely<DB>, claims: readonly JobClaim[], leaseSeconds: number): Promise<number[]> {
  if (claims.length === 0) return [];
  const r = await sql<{ id: string | number }>`${PREPARED} update outbox_messages o set locked_until = now() + make_interval(secs => ${leaseSeconds})
    from unnest(${claims.map((c) => c.id)}::bigint[], ${claims.map((c) => c.attempts)}::int[]) as c(id, attempts)
    where o.id = c.id and o.attempts = c.attempts and ${stillOpen('o')}
    returning o.id`.execute(db);
  return r.rows.map((row) => Number(row.id));
}

/** A dead job as the admin API lists it. */
export type DeadMessage = Pick<OutboxMessage, 'id' | 'kind' | 'dedupe_key' | 'attempts' | 'last_error' | 'created_at' | 'dead_at'>;

/** Dead jobs, newest first, optionally of one kind; at most `limit`, with ids below `beforeId` when given (paging). */
export async function selectDeadMessages(db: Kysely<DB>, opts: { kind?: string; limit: number; beforeId?: number }): Promise<DeadMessage[]> {
  let q = db
    .selectFrom('outbox_messages')
    .select(['id', 'kind', 'dedupe_key', 'attempts', 'last_error', 'created_at', 'dead_at'])
    .where('dead_at', 'is not', null)
    .where('sent_at', 'is', null);
  if (opts.kind) q = q.where('kind', '=', opts.kind);
  if (opts.beforeId !== undefined) q = q.where('id', '<', opts.beforeId);
  const rows = await q.orderBy('id', 'desc').limit(opts.limit).execute();
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}

/**
 * Gives a dead job another life: due now, attempts from zero, no lease; wakes the dispatchers on commit.
 * Returns the job, or undefined when no dead job has this id (unknown, or not dead: nothing changes).
 */
export async function reviveDeadMessage(db: Kysely<DB>, id: number): Promise<DeadMessage | undefined> {
  const r = await sql<DeadMessage>`with revived as (
      update outbox_messages set dead_at = null, attempts = 0, next_attempt_at = now(), locked_until = null
      where id = ${id} and dead_at is not null and sent_at is null
      returning id, kind, dedupe_key, attempts, last_error, created_at, dead_at)
    select r.*, ${notifyOutbox(sql.ref('r.kind'))} as notified from revived r`.execute(db);
  const row = r.rows[0];
  if (!row) return undefined;
  return {
    id: Number(row.id),
    kind: row.kind,
    dedupe_key: row.dedupe_key,
    attempts: row.attempts,
    last_error: row.last_error,
    created_at: row.created_at,
    dead_at: row.dead_at,
  };
}

/** Number of jobs not yet done and not dead, optionally of one kind (for metrics and status). */
export async function countPending(db: Kysely<DB>, kind?: string): Promise<number> {
  let q = db
    .selectFrom('outbox_messages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('sent_at', 'is', null)
    .where('dead_at', 'is', null);
  if (kind) q = q.where('kind', '=', kind);
  const r = await q.executeTakeFirstOrThrow();
  return Number(r.n);
}

/**
 * The fragment that marks the job (`kind`, `dedupeKey`) done, to embed as a data-modifying CTE of a
 * caller's statement (so the job's effect and its completion commit together): counts the attempt, ends
 * the lease. A job done or dead already is left as it is.
 */
export function completeJobSql(kind: string, dedupeKey: string) {
  return sql`update outbox_messages set sent_at = now(), locked_until = null, last_error = null, attempts = attempts + 1
    where kind = ${kind} and dedupe_key = ${dedupeKey} and ${stillOpen()}`;
}

/**
 * A failed attempt of the job (`kind`, `dedupeKey`) by its enqueuer (a reserved job, see `reserveMs`):
 * counts the attempt, ends the lease and leaves the job to the dispatchers from `nextAttemptAt`. A job
 * done or dead already is left as it is.
 */
export async function releaseReservedJob(db: Kysely<DB>, kind: string, dedupeKey: string, error: string, nextAttemptAt: Date): Promise<void> {
  await sql`update outbox_messages set attempts = attempts + 1, locked_until = null, last_error = ${error.slice(0, 500)}, next_attempt_at = ${nextAttemptAt}
    where kind = ${kind} and dedupe_key = ${dedupeKey} and ${stillOpen()}`.execute(db);
}

/**
 * Backlog figures of one job kind: unsent and not dead (`pending`), of those the ones whose last attempt
 * failed (`retrying`) and the ones leased to a runner now (`running`), dead, and the age of the oldest
 * pending one (s, from its creation).
 */
export interface OutboxBacklogRow {
  kind: string;
  pending: number;
  retrying: number;
  running: number;
  dead: number;
  oldest_age_seconds: number | null;
}

/** Per-kind backlog of unsent messages (one grouped read on the partial index of unsent rows; one row per kind with unsent messages). */
export async function selectOutboxBacklog(db: Kysely<DB>): Promise<OutboxBacklogRow[]> {
  const { rows } = await sql<OutboxBacklogRow>`
    select kind,
           (count(*) filter (where dead_at is null))::int as pending,
           (count(*) filter (where dead_at is null and last_error is not null))::int as retrying,
           (count(*) filter (where dead_at is null and locked_until > now()))::int as running,
           (count(*) filter (where dead_at is not null))::int as dead,
           extract(epoch from now() - min(created_at) filter (where dead_at is null))::float8 as oldest_age_seconds
      from outbox_messages
     where sent_at is null
     group by kind`.execute(db);
  return rows;
}
