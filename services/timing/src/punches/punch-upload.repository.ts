/**
 * SQL of the punch writers: the gap-free batch insert, its notification, and the daily upload quota
 * (docs/decisions.md §5, §7). The writers' half of the gap-free protocol (allocate the xid and every punch id
 * inside one critical section, write nothing before it) is described with the readers' half in
 * punches.repository.ts, whose page reads rely on it.
 */
import type pg from 'pg';
import { PUNCH_ROW, UPLOAD_FIELDS, type PunchInsert, type UploadField } from '../db/punch-row';

/**
 * Result of {@link uploadPunchBatch}: rows newly stored and the highest new id (null when nothing was new);
 * or, with nothing written, the batch's modems that are not registered yet or belong to another user.
 */
export interface InsertResult {
  stored: number;
  maxId: number | null;
  unknownModems: string[];
  foreignModems: string[];
}

/**
 * Inserts a batch for user `userId` with the gap-free protocol (punches.repository.ts), in one call of `upload_punch_batch`
 * (migrations 0002, 0005): it first checks the batch's modems (read only, so no xid yet) and writes nothing
 * when one is unknown or — unless `admin` — another user's, returning them; the caller then registers
 * unknown modems in a statement of its own and calls again. Otherwise it runs the critical section (advisory
 * lock, `pg_current_xact_id()`, the batch's ids, unlock), then the insert. Re-sent punches (same modem,
 * card, code, time, type), also within the batch, are skipped. Ids follow the batch order.
 *
 * Called as one autocommitted statement, so the lock is never held across a client round trip and the
 * commit right after it runs outside the lock. On any error the pooled connection is destroyed rather than
 * returned: an error after the lock leaves the session lock held (a rollback does not release session
 * locks); closing the session does.
 */
export async function uploadPunchBatch(pool: pg.Pool, userId: number, admin: boolean, rows: readonly PunchInsert[]): Promise<InsertResult> {
  if (rows.length === 0) return { stored: 0, maxId: null, unknownModems: [], foreignModems: [] };
  const r = await callUpload<UploadRow>(pool, {
    name: 'upload_punch_batch',
    text: UPLOAD_SQL,
    values: [userId, admin, ...batchArrays(rows)],
  });
  return insertResult(r);
}

/**
 * The upload call: user and admin flag, then one array per {@link UPLOAD_FIELDS} field in table order, cast to
 * its `uploadArray` type (db/punch-row.ts), as `upload_punch_batch`'s signature takes them.
 */
const UPLOAD_SQL = `select stored, max_id, unknown_modems, foreign_modems from upload_punch_batch($1::int, $2::bool, ${UPLOAD_FIELDS.map(
  (f, i) => `$${i + 3}::${PUNCH_ROW[f].uploadArray}`,
).join(', ')})`;

interface UploadRow {
  stored: number;
  max_id: string | null;
  unknown_modems: string[];
  foreign_modems: string[];
}

/**
 * The batch as the upload function's column arrays, one per {@link UPLOAD_FIELDS} field in table order (cards,
 * times, codes, types, modems, reception times), each already in PostgreSQL's array text form
 * ({@link textArrayLiteral} for `text` fields, {@link intArrayLiteral} for `integer` ones). pg would quote and
 * escape every element itself (two regex replaces each): about a fifth of the service's CPU for a 1000-punch upload.
 */
function batchArrays(rows: readonly PunchInsert[]): string[] {
  return UPLOAD_FIELDS.map((f) => columnArray(rows, f));
}

/** The array literal of field `f` of `rows` (the kind of the field says which). */
function columnArray(rows: readonly PunchInsert[], f: UploadField): string {
  return PUNCH_ROW[f].kind === 'text' ? textArrayLiteral(rows.map((r) => r[f] as string)) : intArrayLiteral(rows.map((r) => r[f] as number));
}

/** An element that needs no quotes in an array literal: letters, digits and `_ . : + -`. */
const BARE_ELEMENT = /^[\w.:+-]+$/;

/**
 * PostgreSQL array literal (text form, for a `text[]` parameter) of `values`: bare elements when every
 * value is a plain word ({@link BARE_ELEMENT}, none spelled `null`), the way API-validated cards, modems
 * and types always are; otherwise each element double-quoted with `"` and `\` backslash-escaped.
 * @internal
 */
export function textArrayLiteral(values: readonly string[]): string {
  if (values.every((v) => BARE_ELEMENT.test(v) && !(v.length === 4 && v.toLowerCase() === 'null'))) return `{${values.join(',')}}`;
  return `{${values.map((v) => `"${v.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`;
}

/** PostgreSQL array literal of safe integers (for an `int4[]`/`int8[]` parameter); throws on anything else. @internal */
export function intArrayLiteral(values: readonly number[]): string {
  for (const v of values) if (!Number.isSafeInteger(v)) throw new Error(`not a safe integer for an array literal: ${v}`);
  return `{${values.join(',')}}`;
}

function insertResult(r: UploadRow): InsertResult {
  return { stored: r.stored, maxId: r.max_id === null ? null : Number(r.max_id), unknownModems: r.unknown_modems, foreignModems: r.foreign_modems };
}

/**
 * Runs an upload function as one autocommitted statement on a connection of its own; on any error the
 * connection is destroyed rather than returned (see {@link uploadPunchBatch}).
 */
async function callUpload<R extends UploadRow>(pool: pg.Pool, query: { name: string; text: string; values: unknown[] }): Promise<R> {
  const client = await pool.connect();
  try {
    const { rows } = await client.query<R>(query);
    client.release();
    return rows[0];
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

/**
 * Charges `n` punches to the user's count of the current UTC day (database clock) unless that would exceed
 * `limit`: one conditional upsert, so concurrent uploads are charged one after the other and never pass the
 * limit together. Returns the day's new count, or null (nothing charged) when refused.
 */
export async function chargeDailyPunches(pool: pg.Pool, userId: number, n: number, limit: number): Promise<number | null> {
  if (n > limit) return null;
  const { rows } = await pool.query<{ punches: string }>(
    `insert into upload_quota as q (user_id, day, punches) values ($1, (now() at time zone 'utc')::date, $2)
     on conflict (user_id, day) do update set punches = q.punches + excluded.punches
       where q.punches + excluded.punches <= $3
     returning punches`,
    [userId, n, limit],
  );
  return rows.length > 0 ? Number(rows[0].punches) : null;
}

/** Gives `n` punches back to the user's count of the current UTC day (duplicates, a refused upload). */
export async function refundDailyPunches(pool: pg.Pool, userId: number, n: number): Promise<void> {
  if (n <= 0) return;
  await pool.query(`update upload_quota set punches = greatest(0, punches - $2) where user_id = $1 and day = (now() at time zone 'utc')::date`, [userId, n]);
}
