/**
 * SQL of punches: the gap-free batch insert and the page/count reads (DESIGN §5, §7).
 *
 * Never skip a punch while polling by `afterId`. Ids come from a sequence at insert time, but upload
 * transactions commit in any order: if a reader could see id 11 while id 10 is still uncommitted, a poller
 * that moves on to `afterId=11` loses id 10 for ever. The protocol that prevents it:
 *
 * - Writers ({@link insertPunchBatch}) allocate both their transaction id (xid) and all their punch ids
 *   inside one critical section (a session advisory lock), doing no write before it. So for any two upload
 *   transactions A and B, xid(A) < xid(B) exactly when every id of A is below every id of B.
 * - Readers expose only rows with `txid < pg_snapshot_xmin(pg_current_snapshot())`, evaluated in the same
 *   statement as the page (same snapshot). Every transaction with a lower xid than a returned row's has
 *   then ended: committed (and visible to this snapshot) or rolled back (invisible for ever). So when a
 *   reader returns id N, every id below N is either in the result or will never exist, and `afterId = N`
 *   is safe.
 * - Commits run outside the lock, in parallel, so group commit still works; only the insert is serialized.
 *
 * Negative control: without the `txid` condition, the concurrency test (test/polling.test.ts) fails with
 * about a hundred skipped punches out of 20,000 in four seconds of 32 uploaders; the lock alone does not
 * help because commit order still differs from id order.
 *
 * Costs: a transaction with an xid that stays open anywhere on the cluster (an idle-in-transaction session,
 * a long migration) delays the visibility of newer punches until it ends; nothing is lost or reordered.
 * Uploads themselves are single statements, so they never sit idle inside a transaction.
 */
import type pg from 'pg';

/** Punches per response (timing spec §4.1 rule 2, §8). */
export const PAGE_SIZE = 1000;

/** Header row of the CSV format (timing spec §2.1). */
export const CSV_HEADER = 'id,card,time,code,type,modem,receptionTimeUtc';

/** A punch to insert: `time` local wall-clock ms, `receptionTimeUtc` UTC ms. */
export interface PunchInsert {
  card: string;
  time: number;
  code: number;
  type: string;
  modem: string;
  receptionTimeUtc: number;
}

/** Result of a batch insert: rows newly stored and the highest new id (null when nothing was new). */
export interface InsertResult {
  stored: number;
  maxId: number | null;
}

/** Which punches a read covers: the modems (already access-checked), exclusive `afterId`, inclusive local-ms bounds on `time`. */
export interface PunchScope {
  modems: readonly string[];
  afterId: number;
  timeFrom: number | null;
  timeTo: number | null;
}

/** Response formats of a punch read. */
export type PunchFormat = 'json' | 'csv';

/** A page as built by PostgreSQL: the number of punches in it and the finished response body. */
export interface PunchPage {
  count: number;
  body: string;
}

/**
 * Inserts a batch with the gap-free protocol above; re-sent punches (same modem, card, code, time, type),
 * also within the batch, are skipped. Ids follow the batch order.
 *
 * The critical section runs server-side in `insert_punch_batch` (migration 0001): advisory lock,
 * `pg_current_xact_id()`, the insert, unlock; called as one autocommitted statement, so the lock is never
 * held across a client round trip and the commit right after it runs outside the lock. The caller must
 * have registered the batch's modems before (in another transaction), so that this transaction takes its
 * xid inside the lock.
 *
 * On any error the pooled connection is destroyed rather than returned: an error after the lock leaves the
 * session lock held (a rollback does not release session locks); closing the session does.
 */
export async function insertPunchBatch(pool: pg.Pool, rows: readonly PunchInsert[]): Promise<InsertResult> {
  if (rows.length === 0) return { stored: 0, maxId: null };
  const client = await pool.connect();
  try {
    const { rows: out } = await client.query<{ stored: number; max_id: number | null }>(
      'select stored, max_id from insert_punch_batch($1::text[], $2::int8[], $3::int4[], $4::text[], $5::text[], $6::int8[])',
      [
        rows.map((r) => r.card),
        rows.map((r) => r.time),
        rows.map((r) => r.code),
        rows.map((r) => r.type),
        rows.map((r) => r.modem),
        rows.map((r) => r.receptionTimeUtc),
      ],
    );
    client.release();
    return { stored: out[0].stored, maxId: out[0].max_id };
  } catch (err) {
    client.release(err instanceof Error ? err : new Error(String(err)));
    throw err;
  }
}

/** Channel of new-punch notifications; the payload is the highest new punch id. */
export const PUNCH_CHANNEL = 'punches';

/**
 * `NOTIFY punches, '<maxId>'` in a transaction of its own with asynchronous commit: the punches are
 * already durable, so this commit need not wait for a WAL flush, and it stays out of the upload
 * transaction, where the notification queue lock would serialize concurrent upload commits.
 */
export async function notifyNewPunches(pool: pg.Pool, maxId: number): Promise<void> {
  const id = Math.trunc(Number(maxId));
  await pool.query(`begin; set local synchronous_commit = off; select pg_notify('${PUNCH_CHANNEL}', '${id}'); commit`);
}

/** Conditions shared by page and count; `$1` modems, `$2` afterId, then optional time bounds. */
function scopeConditions(scope: PunchScope, alias: string, modemCondition: string): { where: string; values: unknown[] } {
  const values: unknown[] = [[...scope.modems], scope.afterId];
  const parts = [modemCondition, `${alias}.id > $2`];
  if (scope.timeFrom !== null) {
    values.push(scope.timeFrom);
    parts.push(`${alias}.time >= $${values.length}`);
  }
  if (scope.timeTo !== null) {
    values.push(scope.timeTo);
    parts.push(`${alias}.time <= $${values.length}`);
  }
  // The polling guarantee: only rows below the snapshot's xmin (see the module comment).
  parts.push(`${alias}.txid < (select pg_snapshot_xmin(pg_current_snapshot()))`);
  return { where: parts.join(' and '), values };
}

const JSON_BODY = `coalesce(json_agg(json_build_object('id', id, 'card', card, 'time', time, 'code', code, 'type', type,
  'modem', modem, 'receptionTimeUtc', reception_time_utc) order by id)::text, '[]')`;
const CSV_BODY = `'${CSV_HEADER}' || E'\\n' || coalesce(string_agg(concat_ws(',', id, card, time, code, type, modem, reception_time_utc), E'\\n' order by id) || E'\\n', '')`;

/**
 * The page statement: one branch per modem, each the first {@link PAGE_SIZE} visible punches after
 * `afterId` by the (modem, id) index, combined with UNION ALL under an outer `order by id limit`: PostgreSQL
 * merges the ordered index scans (Merge Append) and stops after about a page plus one row per modem, whatever
 * the table size. (A lateral join over the modem array let the planner read every later row of each modem
 * and sort them: 0.5–1 s per page of a 1-million-punch event, against ~6 ms for this form; see
 * BENCHMARKS.md.) PostgreSQL renders the body (JSON array or CSV with header), so no row objects are built
 * in Node.
 */
export function pageQuery(scope: PunchScope, format: PunchFormat): { text: string; values: unknown[] } {
  const { where, values } = scopeConditions(scope, 'q', 'q.modem = ($1::text[])[__N__]');
  const branches = scope.modems.map(
    (_m, i) => `(select q.id, q.card, q.time, q.code, q.type, q.modem, q.reception_time_utc
        from punches q
        where ${where.replace('__N__', String(i + 1))}
        order by q.id
        limit ${PAGE_SIZE})`,
  );
  const text = `
    with page as (
      select * from (${branches.join('\n      union all ')}) u
      order by id
      limit ${PAGE_SIZE}
    )
    select count(*)::int as count, ${format === 'json' ? JSON_BODY : CSV_BODY} as body from page`;
  return { text, values };
}

/** Reads one page (see {@link pageQuery}). `scope.modems` must be distinct. */
export async function readPunchPage(db: pg.Pool | pg.ClientBase, scope: PunchScope, format: PunchFormat): Promise<PunchPage> {
  const q = pageQuery(scope, format);
  const { rows } = await db.query<PunchPage>(q.text, q.values);
  return rows[0];
}

/**
 * Exact number of visible punches in scope (for `X-Total-Count` when a page is full). The one place to
 * replace with counters or bounded counts for very large events (benchmark issue).
 */
export async function countPunches(db: pg.Pool | pg.ClientBase, scope: PunchScope): Promise<number> {
  const { where, values } = scopeConditions(scope, 'q', 'q.modem = any($1::text[])');
  const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from punches q where ${where}`, values);
  return rows[0].n;
}

/** Text of the empty body of a format (no query needed when the scope has no modems). */
export function emptyBody(format: PunchFormat): string {
  return format === 'json' ? '[]' : `${CSV_HEADER}\n`;
}
