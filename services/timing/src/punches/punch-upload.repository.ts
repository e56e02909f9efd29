/**
 * SQL of the punch writers: the gap-free batch insert with the daily upload quota, and its notification
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

/** Result of {@link uploadPunchBatchByKey}: the key's owner (null when the key is unknown or revoked: nothing written) and the insert's result. */
export interface KeyInsertResult extends InsertResult {
  owner: { keyId: number; userId: number; userName: string; role: string } | null;
}

/** SQLSTATE that `upload_punches` raises when the newly stored punches would pass the daily quota (nothing is stored). */
export const QUOTA_REACHED_SQLSTATE = 'TQ429';

/**
 * Inserts a batch for user `userId` with the gap-free protocol (punches.repository.ts), in one call of
 * `upload_punches` (migration 0015): it first checks the batch's modems (read only, so no xid yet) and writes
 * nothing when one is unknown or — unless `admin` — another user's, returning them; the caller then registers
 * unknown modems in a statement of its own and calls again. Otherwise it runs the critical section (advisory
 * lock, `pg_current_xact_id()`, the batch's ids, unlock), then the insert. Re-sent punches (same modem,
 * card, code, time, type), also within the batch, are skipped. Ids follow the batch order. The newly stored
 * punches are charged to the user's count of the UTC day (database clock) unless `admin` or `quota` is null;
 * past `quota` the statement fails with {@link QUOTA_REACHED_SQLSTATE} and stores nothing (docs/decisions.md
 * §5 "Quotas"), so concurrent uploads of one user are charged one after the other and never pass it together.
 *
 * Called as one autocommitted statement, so the lock is never held across a client round trip and the
 * commit right after it runs outside the lock. On any other error the pooled connection is destroyed rather
 * than returned: an error after the lock leaves the session lock held (a rollback does not release session
 * locks); closing the session does.
 */
export async function uploadPunchBatch(
  pool: pg.Pool,
  userId: number,
  admin: boolean,
  quota: number | null,
  rows: readonly PunchInsert[],
): Promise<InsertResult> {
  if (rows.length === 0) return { stored: 0, maxId: null, unknownModems: [], foreignModems: [] };
  const r = await callUpload<UploadRow>(pool, {
    name: 'upload_punches',
    text: UPLOAD_SQL,
    values: [userId, admin, quota, ...batchArrays(rows)],
  });
  return insertResult(r);
}

/**
 * {@link uploadPunchBatch} for the owner of the API key whose lookup hash is `keyHash` (auth/keys.ts), the key
 * checked in the same statement (`upload_punches_by_key`, `active_key_owner`): one round trip for an upload
 * whose key the fast lane already took as valid. An unknown or revoked key writes nothing and answers
 * `owner: null`; the owner's role decides `admin`.
 */
export async function uploadPunchBatchByKey(pool: pg.Pool, keyHash: Buffer, quota: number | null, rows: readonly PunchInsert[]): Promise<KeyInsertResult> {
  const r = await callUpload<UploadRow & KeyOwnerRow>(pool, {
    name: 'upload_punches_by_key',
    text: UPLOAD_BY_KEY_SQL,
    values: [keyHash, quota, ...batchArrays(rows)],
  });
  const owner =
    r.key_id === null || r.user_id === null || r.user_name === null || r.role === null
      ? null
      : { keyId: r.key_id, userId: r.user_id, userName: r.user_name, role: r.role };
  return { owner, ...insertResult(r) };
}

/** The upload arrays as `upload_punches`' signature takes them: one per {@link UPLOAD_FIELDS} field in table order, from parameter `first` on. */
function arrayParameters(first: number): string {
  return UPLOAD_FIELDS.map((f, i) => `$${i + first}::${PUNCH_ROW[f].uploadArray}`).join(', ');
}

/** The upload call: user, admin flag and quota, then the batch's arrays, each cast to its `uploadArray` type (db/punch-row.ts). */
const UPLOAD_SQL = `select stored, max_id, unknown_modems, foreign_modems from upload_punches($1::int, $2::bool, $3::int8, ${arrayParameters(4)})`;

/** The upload call by key: the key's lookup hash and the quota, then the batch's arrays. */
const UPLOAD_BY_KEY_SQL = `select key_id, user_id, user_name, role, stored, max_id, unknown_modems, foreign_modems from upload_punches_by_key($1::bytea, $2::int8, ${arrayParameters(3)})`;

interface KeyOwnerRow {
  key_id: number | null;
  user_id: number | null;
  user_name: string | null;
  role: string | null;
}

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
 * Runs an upload function as one autocommitted statement on a connection of its own; on any error but the
 * quota's the connection is destroyed rather than returned (see {@link uploadPunchBatch}).
 */
async function callUpload<R extends UploadRow>(pool: pg.Pool, query: { name: string; text: string; values: unknown[] }): Promise<R> {
  const client = await pool.connect();
  try {
    const { rows } = await client.query<R>(query);
    client.release();
    return rows[0];
  } catch (err) {
    // The quota check runs after the id lock is released, so that error leaves the session clean.
    if ((err as { code?: unknown }).code === QUOTA_REACHED_SQLSTATE) client.release();
    else client.release(err instanceof Error ? err : new Error(String(err)));
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
