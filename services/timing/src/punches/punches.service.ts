/**
 * Punch reads and uploads (tag `punches`, docs/decisions.md §5): filter resolution and access for reads, modem
 * ownership and the gap-free batch insert for uploads. SQL lives in punches.repository.ts.
 */
import type { Kysely } from 'kysely';
import type pg from 'pg';
import type { Logger } from 'pino';
import { validationError, type OpenApiDocument } from '@sports-timing/shared';
import { dailyQuotaReached } from './upload-quota';
import type { PunchInsert } from '../db/punch-row';
import type { DB } from '../db/schema';
import type { components } from '../generated/openapi';
import { isAdmin, type Principal } from '../auth/principal';
import type { EventCache } from '../events/event-cache';
import { claimModems, foreignModemsError } from '../modems/modems.service';
import { unknownKey } from '../users/users.service';
import { jsonFromCsvPage } from './page-json';
import { simplePunchPage } from './simple-format';
import { compilePunchCsvParser, type CheckedBatch, type NewPunch, type RejectedPunch } from './punches.csv';
import * as upload from './punch-upload.repository';
import * as repo from './punches.repository';
import { readStably, scopeIsEmpty, scopeKey, type PunchQuery } from './punch-scope';
import { punchLimits, type TimingLimits } from './punch-spec';
import { DEFAULT_READ_CACHE_BYTES, PunchReadCache } from './read-cache';
import { NewPunchNotifier } from './new-punch-notifier';
import type { BacklogGate } from './backlog-gate';

/** How a punch service is built ({@link createPunchService}): the Kysely instance, the pool (raw SQL on the hot paths), optionally a logger. */
export interface PunchServiceOptions {
  db: Kysely<DB>;
  pool: pg.Pool;
  logger?: Logger;
  /**
   * Pool on a streaming replica (`TIMING_READ_DATABASE_URL`) for whole downloads, see {@link readPunches}.
   * Absent: every read on `pool`.
   */
  historyPool?: pg.Pool;
  /**
   * Bound (bytes) of each pool's cache of shared read answers (read-cache.ts; `TIMING_READ_CACHE_MB`);
   * default {@link DEFAULT_READ_CACHE_BYTES}, 0 = every read runs its own statement.
   */
  readCacheBytes?: number;
  /**
   * Most punches a (non-admin) user may upload per UTC day (`TIMING_QUOTA_PUNCHES_PER_DAY`; docs/decisions.md
   * §5 "Quotas"): a batch beyond is 429 with nothing stored. Absent: no limit.
   */
  dailyPunchQuota?: number;
  /**
   * The app's pacing of backlog pages (backlog-gate.ts): multi-page answers (rendered-pages.ts) read every
   * page after the first through it. Absent: they only yield between pages.
   */
  backlog?: BacklogGate;
  /** The app's cache of events (event-cache.ts): reads by `eventId` resolve the event there. */
  events: EventCache;
  /** The limits of the app's spec (punch-spec.ts): batch size, `modem` list length, card numbers, modem caps. */
  limits: TimingLimits;
}

/**
 * One app's punch service: its options and the state it owns, built once by {@link createPunchService} (the
 * composition root, composition.ts) and handed to every handler, the fast lane and the demo loader of that
 * app. Two services never share a cache or a notifier.
 */
export interface PunchService extends Omit<PunchServiceOptions, 'readCacheBytes'> {
  /** Shared read answers on `pool` and on `historyPool` (read-cache.ts); null when the cache is off or there is no such pool. */
  readonly caches: { readonly primary: PunchReadCache | null; readonly history: PunchReadCache | null };
  /** Announces new punches after uploads (coalesced, see NewPunchNotifier). */
  readonly notifier: { notify(maxId: number): void };
}

/** Builds a punch service: one read cache per pool, bounded by `readCacheBytes` each, and one notifier. */
export function createPunchService(opts: PunchServiceOptions): PunchService {
  const { readCacheBytes, ...rest } = opts;
  const bytes = readCacheBytes ?? DEFAULT_READ_CACHE_BYTES;
  const cacheOf = (pool: pg.Pool | undefined) => (bytes > 0 && pool !== undefined ? new PunchReadCache(pool, bytes) : null);
  const notifier = new NewPunchNotifier(opts.pool, (err) =>
    opts.logger?.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'NOTIFY punches failed'),
  );
  return { ...rest, caches: { primary: cacheOf(opts.pool), history: cacheOf(opts.historyPool) }, notifier };
}

/**
 * A read's response: the body as built by PostgreSQL (text), or JSON converted from its CSV (UTF-8 bytes,
 * page-json.ts), and the `X-Total-Count` value.
 */
export interface PunchReadResult {
  body: string | Buffer;
  total: number;
  /**
   * What the answer is a function of: the read's key (format and access-checked scope) and the visible head
   * it was computed under (`<head>|<key>`; `empty|<format>` for a scope that matches nothing). Equal versions
   * mean equal bodies, so HTTP validators are derived from it (http/read-caching.ts) without hashing a body.
   */
  version: string;
  /**
   * A body derived from this answer (e.g. its gzip encoding) under `name`, made by `make` only the first time
   * for a shared answer (read-cache.ts) and reused by every request served the same answer. Absent for
   * answers that are not shared.
   */
  derive?: (name: string, make: () => Promise<string | Buffer> | string | Buffer) => Promise<string | Buffer>;
}

/** API `UploadResult`. */
export type UploadResult = components['schemas']['UploadResult'];

/** A punch for {@link uploadPunches}; internal callers (the demo loader) may set `receptionTimeUtc` (UTC ms). */
export type PunchUpload = NewPunch & { receptionTimeUtc?: number };

/**
 * One page of punches (at most 1000, ascending id) rendered by PostgreSQL as CSV (JSON converted from it,
 * or rendered by PostgreSQL when the CSV does not qualify, see page-json.ts), and the
 * `X-Total-Count`: the page's own size when it is not full, otherwise the exact total from the punch
 * counters (migration 0002) — all in one statement. With `deps.historyPool`, a read without `afterId` that is
 * not `live` (long-poll, stream) is answered by the replica (infra/README.md "Read replicas for punch reads").
 */
export async function readPunches(
  deps: PunchService,
  caller: Principal | null,
  q: PunchQuery,
  format: repo.PunchFormat,
  opts: { live?: boolean } = {},
): Promise<PunchReadResult> {
  const empty: PunchReadResult = { body: repo.emptyBody(format), total: 0, version: `empty|${format}` };
  return readStably(
    deps,
    caller,
    q,
    (scope) => readScope(deps, scope, q, format, opts),
    (answer) => answer.total,
    empty,
  );
}

/** The page of an access-checked scope (see {@link readPunches}). */
async function readScope(
  deps: PunchService,
  scope: repo.PunchScope,
  q: PunchQuery,
  format: repo.PunchFormat,
  opts: { live?: boolean },
): Promise<PunchReadResult> {
  if (scopeIsEmpty(scope)) return { body: repo.emptyBody(format), total: 0, version: `empty|${format}` };
  // A whole download (no afterId) may come from the replica: the gap-free rule holds there too (a standby's
  // snapshot counts every transaction the primary had open as running until its commit is replayed), so it
  // answers a prefix of what the primary would, late by the replication lag. Follow-up polls (afterId set)
  // and live reads (long-poll, stream) stay on the primary, so the lag never delays a new punch.
  // An unreachable replica is not an outage: the read falls back to the primary.
  if (deps.historyPool && !q.afterId && !opts.live) {
    try {
      return await sharedPage(deps.historyPool, deps.caches.history, scope, format);
    } catch (err) {
      deps.logger?.warn({ err: { message: (err as Error).message } }, 'punch read on the replica failed; reading from the primary');
    }
  }
  return sharedPage(deps.pool, deps.caches.primary, scope, format);
}

/**
 * The page of `scope` in `format` on `pool`, shared through `cache` (that pool's, of this app; null: off) with
 * identical reads while the visible head has not moved (read-cache.ts). The key is the access-checked scope (modems in a canonical order: the page does not
 * depend on their order), so it never serves another scope's answer.
 */
async function sharedPage(pool: pg.Pool, cache: PunchReadCache | null, scope: repo.PunchScope, format: repo.PunchFormat): Promise<PunchReadResult> {
  const key = `${format}|${scopeKey(scope)}`;
  if (cache === null) {
    const page = await readPage(pool, scope, format);
    return { body: page.body, total: page.total, version: `${page.head}|${key}` };
  }
  const answer = await cache.get(key, () => readPage(pool, scope, format));
  return { body: answer.body, total: answer.total, version: `${answer.head}|${key}`, derive: (name, make) => cache.derive(key, answer, name, make) };
}

async function readPage(pool: pg.Pool, scope: repo.PunchScope, format: repo.PunchFormat): Promise<{ body: string | Buffer; total: number; head: string }> {
  // One statement: page, body and total (counters on full pages), see punches.repository.ts pageQuery.
  // JSON is converted from the cheaper CSV rendering when the text qualifies (page-json.ts).
  if (format === 'json') {
    const csv = await repo.readPunchPage(pool, scope, 'csv');
    const body = jsonFromCsvPage(csv.body, csv.count);
    if (body !== null) return { body, total: csv.total, head: csv.head };
  }
  return repo.readPunchPage(pool, scope, format);
}

/**
 * A page of an event's punches in the SPORTident Center simple punch format (`getPublicEventPunches`,
 * simple-format.ts): the event read of {@link readPunches} (same access, window and polling guarantee),
 * cut to the first `limit` punches — a prefix of a gap-free page is gap-free — with the same total.
 */
export async function readSimpleEventPunches(
  deps: PunchService,
  caller: Principal | null,
  q: { eventId: number; afterId?: number; limit: number },
  format: repo.PunchFormat,
): Promise<PunchReadResult> {
  const page = await readPunches(deps, caller, { eventId: String(q.eventId), afterId: q.afterId }, 'csv');
  const project = () => simplePunchPage(page.body.toString(), q.limit, format);
  return { body: page.derive ? await page.derive(`simple-${format}-${q.limit}`, project) : project(), total: page.total, version: page.version };
}

/** Card numbers as canonical decimal text, so `"0123"`, `"123"` and `123` are one card. */
function canonicalCard(card: string | number): string {
  return String(Number(card));
}

/**
 * Rows to insert: each punch's own fields (the `NewPunch` ones; the upload reads only the punch row's upload
 * fields, db/punch-row.ts), the card canonical and the reception time set. The punches were checked already
 * (punches.csv.ts, the fast lane).
 */
function insertRows(punches: readonly PunchUpload[], receivedAtUtc: number): PunchInsert[] {
  return punches.map((p) => ({ ...p, card: canonicalCard(p.card), receptionTimeUtc: p.receptionTimeUtc ?? receivedAtUtc }));
}

/** Rejects foreign modems, announces new punches (see NewPunchNotifier) and builds the API result. */
function uploaded(deps: PunchService, valid: number, rejected: readonly RejectedPunch[], result: upload.InsertResult): UploadResult {
  if (result.foreignModems.length > 0) throw foreignModemsError(result.foreignModems);
  if (result.maxId !== null) deps.notifier.notify(result.maxId);
  return { received: valid + rejected.length, stored: result.stored, duplicates: valid - result.stored, rejected: [...rejected] };
}

/**
 * Stores the valid punches of a batch for the caller — `punches`, already checked one by one
 * (punches.csv.ts; `rejected` are the batch's invalid ones, reported back, spec `postPunches`): another user's
 * modem is 403 for the whole batch (admins excepted), the caller's new modems are registered to it, then one
 * gap-free insert (one database call when every modem is known, see uploadPunchBatch); re-sent punches are
 * counted as duplicates. `receivedAtUtc` (UTC ms) is the reception time of punches without their own. After the
 * commit, `NOTIFY punches, '<maxId>'` announces new punches (coalesced, see NewPunchNotifier). More than
 * 10,000 punches in all: 400, nothing stored. Newly stored punches beyond the caller's daily quota: 429, nothing
 * stored (the insert's own statement charges them, docs/decisions.md §5 "Quotas").
 *
 * `keyHash` (the lookup hash of the request's API key, auth/keys.ts): the insert's statement checks the key
 * again and stores for its owner as the database has it now, so a caller taken from the fast lane's memo of
 * valid keys (users/key-owner-memo.ts) is never trusted beyond that statement; a key revoked meanwhile is 401
 * ({@link unknownKey}) with nothing stored.
 */
export async function uploadPunches(
  deps: PunchService,
  caller: Principal,
  punches: readonly PunchUpload[],
  receivedAtUtc: number,
  rejected: readonly RejectedPunch[] = [],
  keyHash?: Buffer,
): Promise<UploadResult> {
  const maxBatch = deps.limits.maxPunchesPerUpload;
  if (punches.length + rejected.length > maxBatch) throw validationError({ $: [`at most ${maxBatch} punches per upload`] });
  if (punches.length === 0) return { received: rejected.length, stored: 0, duplicates: 0, rejected: [...rejected] };
  const rows = insertRows(punches, receivedAtUtc);
  const quota = deps.dailyPunchQuota ?? null;
  let owner = caller;
  const insert = async (): Promise<upload.InsertResult> => {
    if (keyHash === undefined) return upload.uploadPunchBatch(deps.pool, owner.userId, isAdmin(owner), quota, rows);
    const r = await upload.uploadPunchBatchByKey(deps.pool, keyHash, quota, rows);
    if (r.owner === null) throw unknownKey();
    const role = r.owner.role === 'admin' ? 'admin' : 'user';
    owner = { userId: r.owner.userId, userName: r.owner.userName, role, keyId: r.owner.keyId, roles: [role] };
    return r;
  };
  try {
    // Usually one call; the first upload for a new modem registers it in between (see uploadPunchBatch).
    let result = await insert();
    for (let attempt = 0; result.unknownModems.length > 0 && result.foreignModems.length === 0; attempt++) {
      if (attempt === 2) throw new Error(`modems ${result.unknownModems.join(', ')} stay unregistered`);
      await claimModems(deps.db, deps.limits, result.unknownModems, owner.userId, isAdmin(owner), deps.limits.maxNewModemsPerUpload, (ids) =>
        deps.events.changed(ids),
      );
      result = await insert();
    }
    return uploaded(deps, punches.length, rejected, result);
  } catch (err) {
    if (quota !== null && (err as { code?: unknown }).code === upload.QUOTA_REACHED_SQLSTATE) throw dailyQuotaReached(quota);
    throw err;
  }
}

/**
 * The reader of CSV upload bodies (punches.csv.ts) within the batch limit, its rules compiled from the loaded
 * spec `spec`: build it once per app.
 */
export function punchCsvReader(spec: OpenApiDocument): (text: string) => CheckedBatch {
  const parse = compilePunchCsvParser(spec);
  const maxBatch = punchLimits(spec).maxPunchesPerUpload;
  return (text) => parse(text, maxBatch);
}

/** Interval of the counter compaction (ms). */
const COUNT_COMPACTION_MS = 5_000;

/**
 * Folds the punch-counter deltas of ended transactions every `everyMs` (migration 0002): each upload
 * statement appends a few delta rows, and the totals stay cheap only while those are folded regularly.
 * Every instance may run one; concurrent compactions are safe. Returns a stop function.
 */
export function startCountCompaction(deps: { pool: pg.Pool; logger?: Logger }, everyMs = COUNT_COMPACTION_MS): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    repo
      .compactPunchCounts(deps.pool)
      .catch((err: unknown) => deps.logger?.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'punch counter compaction failed'))
      .finally(() => (running = false));
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
