/**
 * SQL of the punch readers: the page and count reads (docs/decisions.md §5, §7), and the gap-free protocol
 * they rely on. The writers' side (upload, notification, quota) is punch-upload.repository.ts.
 *
 * Never skip a punch while polling by `afterId`. Ids come from a sequence at insert time, but upload
 * transactions commit in any order: if a reader could see id 11 while id 10 is still uncommitted, a poller
 * that moves on to `afterId=11` loses id 10 for ever. The protocol that prevents it:
 *
 * - Writers (`uploadPunchBatch`, punch-upload.repository.ts) allocate both their transaction id (xid) and all their punch ids
 *   inside one critical section (a session advisory lock), doing no write before it. So for any two upload
 *   transactions A and B, xid(A) < xid(B) exactly when every id of A is below every id of B.
 * - Every transaction that inserts punches takes the shared punch writer lock before it has an xid
 *   (migration 0012; a statement trigger on `punches` enforces it), so a running xid whose backend lacks that
 *   lock is a *stranger* that never inserts a punch.
 * - Readers expose only rows with `txid` below the own-writers horizon `punch_visible_xmin()`
 *   (db/punch-visibility-rule.ts), evaluated once in the same statement as the page (same snapshot): the
 *   smallest running xid of the snapshot that is not a known stranger, else the snapshot's xmax. Every
 *   writer with a lower xid than a returned row's has then ended: committed (and visible to this snapshot)
 *   or rolled back (invisible for ever). So when a reader returns id N, every id below N is either in the
 *   result or will never exist, and `afterId = N` is safe.
 * - Only that allocation is serialized (migration 0005): the rows are written after the lock is released,
 *   and commits run outside it too, so concurrent uploads insert in parallel and group commit still works.
 *
 * Negative control: without the `txid` condition, the concurrency test (test/polling.test.ts) fails with
 * about a hundred skipped punches out of 20,000 in four seconds of 32 uploaders; the lock alone does not
 * help because commit order still differs from id order.
 *
 * Costs: only the service's own uploads in flight delay newer punches (a new stranger up to 0.1 s), never a
 * transaction elsewhere on the cluster (docs/decisions.md §5). Nothing is lost or reordered.
 */
import type pg from 'pg';
import { PUNCH_API_COLUMNS, punchColumns } from '../db/punch-row';
import { VIS_CTE, VIS_XMIN, VISIBLE_XMIN, visibleHead, visibleRow } from '../db/punch-visibility-rule';
import { PUNCH_FIELDS, PUNCH_PAGE_SIZE } from './punch-spec';
import { modemWindowCondition, type ModemWindow } from './punch-windows.repository';

/**
 * Session settings of the service's pool (server.ts; the tests and the benchmark's raw server use them
 * too), for the page statement, which runs as a prepared statement ({@link pageQuery}):
 * - `plan_cache_mode = force_generic_plan`: the statement is built so that one plan serves every afterId
 *   (its strategy is chosen at run time by one-time filters). Left to itself PostgreSQL keeps re-planning
 *   it per execution, because custom plans look cheaper, and the planning of a many-modem event costs many
 *   times the execution of a tail poll on the cached plan (bench/README.md, finding 14).
 * - `enable_bitmapscan = off`, `random_page_cost = 1.1`: a generic plan does not know afterId, so PostgreSQL
 *   assumes a third of each modem's rows qualify and would read every later row of each modem by a bitmap
 *   heap scan and sort them (many times a page walk: bench/README.md, finding 14) instead of walking
 *   the (modem, id) index for at most a page (every read here is such a walk or a small lookup; 1.1 suits SSDs).
 * - `max_parallel_workers_per_gather = 0`: at 50 M punches generic plans started parallel workers for one
 *   page (SCALING.md, "Ten years of punches"). test/explain.test.ts checks the generic plan.
 */
export const PUNCH_SESSION_SETTINGS: Record<string, number | string> = {
  plan_cache_mode: 'force_generic_plan',
  random_page_cost: 1.1,
  enable_bitmapscan: 'off',
  max_parallel_workers_per_gather: 0,
};

/** Punches per response (`getPunches`: the `maxItems` of its 200 response). */
const PAGE_SIZE = PUNCH_PAGE_SIZE;

/** Header row of the CSV format (the CSV form of `getPunches`): the spec's `Punch` fields. */
const CSV_HEADER = PUNCH_FIELDS.join(',');

/** Which punches a read covers: the modems (already access-checked), exclusive `afterId`, inclusive local-ms bounds on `time`, modem windows. */
export interface PunchScope {
  modems: readonly string[];
  afterId: number;
  timeFrom: number | null;
  timeTo: number | null;
  /** When given, a punch is covered only inside one of its modem's windows (punch-windows.repository.ts). */
  windows?: readonly ModemWindow[];
}

/** Response formats of a punch read. */
export type PunchFormat = 'json' | 'csv';

/**
 * A page as built by PostgreSQL: the number of punches in it, the finished response body, the `X-Total-Count`,
 * and `head`, the visible head of the statement's snapshot (see {@link readVisibleHead}, decimal text): the page
 * is a function of the scope, the format and this value.
 */
export interface PunchPage {
  count: number;
  body: string;
  total: number;
  head: string;
}

/**
 * Conditions shared by page and count; `$1` modems, `$2` afterId, then optional time bounds; `xmin` the
 * statement's horizon (see {@link visibleRow}).
 */
function scopeConditions(scope: PunchScope, alias: string, modemCondition: string, xmin?: string): { where: string; values: unknown[] } {
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
  if (scope.windows !== undefined) parts.push(modemWindowCondition(scope.windows, alias, values));
  parts.push(visibleRow(alias, xmin));
  return { where: parts.join(' and '), values };
}

// Compact JSON (no blanks; json_agg and json_build_object would add them) with the API's field names.
const JSON_BODY = `'[' || coalesce(string_agg(row_to_json(r)::text, ',' order by r.id), '') || ']'`;
const JSON_FROM = `(select ${PUNCH_API_COLUMNS} from page) r`;
const CSV_BODY = `'${CSV_HEADER}' || E'\\n' || coalesce(string_agg(concat_ws(',', ${punchColumns()}), E'\\n' order by id) || E'\\n', '')`;

/** Bits of the id buckets of `punch_counts` above the fine level, highest first (migrations 0002, 0003, 0010); each is 8 of the next. */
const UPPER_SHIFTS = [19, 16, 13];
const [MID_SHIFT, FINE_SHIFT] = [UPPER_SHIFTS[UPPER_SHIFTS.length - 1], 10]; // the levels below the others

/** Condition on the modems that no index can serve: makes PostgreSQL walk the primary key in id order. */
const MODEM_FILTER = '(q.modem = any($1::text[])) is true';

/** Exact count of the visible punches of the modems in the rest of afterId's fine bucket (< 1,024 ids, by the primary key). */
const PARTIAL_BUCKET_COUNT = `(select count(*) from punches q
        where ${MODEM_FILTER} and q.id > $2 and q.id < (($2::int8 >> ${FINE_SHIFT}) + 1) << ${FINE_SHIFT} and ${visibleRow('q', VIS_XMIN)})`;

/** End (exclusive) of afterId's fine bucket. */
const AFTER_BUCKET_END = `((($2::int8 >> ${FINE_SHIFT}) + 1) << ${FINE_SHIFT})`;

/**
 * Columns of the page's one aggregate (next to its count and body) that {@link PARTIAL_BUCKET_FROM_PAGE}
 * needs: the page's last id and its rows below the end of afterId's fine bucket. Taken in the same pass
 * that renders the body; reading the page CTE again for them cost a measurable part of a full page
 * (bench/README.md, finding 14).
 */
const PAGE_EDGE_COLUMNS = `max(id) as last_id, count(*) filter (where id < ${AFTER_BUCKET_END}) as in_bucket`;

/**
 * The same count taken from a full page when the page reaches past the end of afterId's fine bucket: the
 * page holds every visible punch of the modems from afterId up to its last id (keyset order, same snapshot),
 * so its rows below the bucket's end ({@link PAGE_EDGE_COLUMNS}) are exactly those punches. Otherwise
 * {@link PARTIAL_BUCKET_COUNT}. Saves the heap reads of up to 1,023 rows of other modems (bench/README.md,
 * finding 14).
 */
const PARTIAL_BUCKET_FROM_PAGE = `(case when last_id >= ${AFTER_BUCKET_END} - 1 then in_bucket else ${PARTIAL_BUCKET_COUNT} end)`;

/** The fine level's part of {@link counterTotal}, from the CTE `fine` ({@link FINE_COUNTS}). */
const FINE_PART = `(select coalesce(sum(f.n), 0) from fine f where f.bucket < (($2::int8 >> ${MID_SHIFT}) + 1) << ${MID_SHIFT - FINE_SHIFT})`;

/** The visible counts of level `shift` above afterId's bucket, below the end of afterId's bucket at level `upper` (none: no end). */
function levelPart(shift: number, upper?: number): string {
  const below = upper === undefined ? '' : ` and c.bucket < (($2::int8 >> ${upper}) + 1) << ${upper - shift}`;
  return `(select coalesce(sum(c.n), 0) from punch_counts c
        where c.modem = any($1::text[]) and c.shift = ${shift} and c.bucket > ($2::int8 >> ${shift})${below} and ${visibleRow('c', VIS_XMIN)})`;
}

/**
 * Number of visible punches of the modems `$1` after `$2` from the counters, for scopes without a time window
 * (the statement defines `vis` and `fine`): the buckets above afterId's at the highest level used, at each lower
 * level those above afterId's within afterId's bucket one level up, and `partial`, the rest of afterId's fine
 * bucket; each with the pages' visibility rule, so the sum equals `count(*)`. A level costs an index descent per
 * modem, so the top one serves only when the newest id lies two of its buckets or more beyond afterId's.
 */
function counterTotal(partial: string): string {
  const [top, second, ...rest] = UPPER_SHIFTS;
  const far = `(select coalesce(max(id), 0) from punches) >> ${top} > ($2::int8 >> ${top}) + 1`;
  const highest = `(case when ${far} then ${levelPart(top)} + ${levelPart(second, top)} else ${levelPart(second)} end)`;
  const parts = [highest, ...rest.map((shift, i) => levelPart(shift, [second, ...rest][i])), FINE_PART, partial];
  return `(\n      ${parts.join('\n    + ')}\n    )::int8`;
}

/** Ids after `afterId` up to the newest id within which a page reads by the primary key (the live head). */
const HEAD_IDS = 4096;

/** Fine buckets after afterId's own within which a full page must lie for the dense strategy. */
const DENSE_BUCKETS = 4;

/**
 * CTE `fine` of the statements that count without a time window: the visible counts of the modems' fine buckets
 * after afterId's, as far as both the dense check (the next {@link DENSE_BUCKETS}) and the total's fine level
 * (the rest of afterId's middle bucket) need them. One read (an index descent per modem) serves both.
 */
const FINE_COUNTS = `
    fine as materialized (
      select c.bucket, sum(c.n) as n from punch_counts c
      where c.modem = any($1::text[]) and c.shift = ${FINE_SHIFT} and c.bucket > ($2::int8 >> ${FINE_SHIFT})
        and c.bucket <= greatest(($2::int8 >> ${FINE_SHIFT}) + ${DENSE_BUCKETS}, ((($2::int8 >> ${MID_SHIFT}) + 1) << ${MID_SHIFT - FINE_SHIFT}) - 1)
        and ${visibleRow('c', VIS_XMIN)}
      group by c.bucket)`;

/**
 * The last fine bucket of the dense strategy from id `after` (an SQL expression), given `counts`, a relation
 * of visible (bucket, n) fine counts of the modems covering at least the {@link DENSE_BUCKETS} buckets after
 * `after`'s: the first bucket b among those such that the buckets after `after`'s up to b hold at least a page
 * of visible punches; null when there is none (the modems are sparse there). `after`'s own bucket is left out
 * of the sum, so the id range (after, (b + 1) << 10) surely holds a full page.
 */
function denseLastBucket(after: string, counts: string): string {
  return `(select min(w.bucket) from (
          select g.bucket, sum(g.n) over (order by g.bucket) as cum from ${counts} g
          where g.bucket > (${after} >> ${FINE_SHIFT}) and g.bucket <= (${after} >> ${FINE_SHIFT}) + ${DENSE_BUCKETS}) w
        where w.cum >= ${PAGE_SIZE})`;
}

/** Visible fine counts of the modems in the {@link DENSE_BUCKETS} buckets after `after`'s, for {@link denseLastBucket}. */
function fineCountsAfter(after: string): string {
  return `(select c.bucket, sum(c.n) as n from punch_counts c
            where c.modem = any($1::text[]) and c.shift = ${FINE_SHIFT} and c.bucket > (${after} >> ${FINE_SHIFT})
              and c.bucket <= (${after} >> ${FINE_SHIFT}) + ${DENSE_BUCKETS} and ${visibleRow('c', VIS_XMIN)}
            group by c.bucket)`;
}

/**
 * One below the first id of the modems after afterId, visible or not (one (modem, id) index probe per
 * modem); null when they have none. No punch of the scope lies between afterId and it, so a page after
 * afterId is the page after it: the first page of an event (afterId 0, the polling procedure's start) walks
 * from the event's first punch instead of declaring the modems sparse because the ids just above 0 belong
 * to other events.
 */
const SCOPE_START = `(select min(f.id) - 1 from unnest($1::text[]) as m(modem)
          cross join lateral (select p.id from punches p where p.modem = m.modem and p.id > $2 order by p.id limit 1) f)`;

/**
 * The two statements of a page read ({@link readPunchPage}): `walk` decides the strategy and, unless it is
 * `sparse`, reads the page by the primary key; `sparse` reads it by the per-modem index branches.
 * @internal
 */
export type PageStatement = 'walk' | 'sparse';

/** Name of the prepared statement of a page shape (the text depends only on these). */
function statementName(statement: PageStatement, scope: PunchScope, format: PunchFormat, withTotal: boolean): string {
  const modems = statement === 'sparse' ? String(scope.modems.length) : 'any';
  return `punch_page_${statement}_${format}_${modems}_${scope.timeFrom === null ? 0 : 1}${scope.timeTo === null ? 0 : 1}${scope.windows === undefined ? '' : 'w'}${withTotal ? '' : '_nt'}`;
}

/**
 * A page statement. A page is the first {@link PAGE_SIZE} visible punches of the modems after `afterId`,
 * found one of two ways, both exact (only the cost differs):
 *
 * - `sparse`: one branch per modem, each the first page of that modem after `afterId` by the (modem, id)
 *   index, under an outer `order by id limit` (PostgreSQL merges the ordered index scans and stops after
 *   about a page plus one row per modem). Cost bounded by page and modems, however the modems' rows
 *   interleave with others. (A lateral join over the modems read every later row of each modem and sorted
 *   them: 0.5–1 s per page of a 1-million-punch event; see BENCHMARKS.md.)
 * - `head` / `dense`: one walk of the primary key from `afterId`, keeping the modems' rows — what PostgREST
 *   does, and cheaper when neighbouring ids belong to the scope (a page then sits on few heap pages
 *   instead of one page per punch). Taken only when it is bounded: at the live head (newest id at most
 *   {@link HEAD_IDS} ahead), or, without a time window, when the counters show a full page within
 *   {@link DENSE_BUCKETS} fine buckets ({@link denseLastBucket}) after afterId or, failing that, after the
 *   scope's first punch beyond afterId ({@link SCOPE_START}); the walk then runs from there to that bucket's end.
 *
 * The `walk` statement picks the way at run time and walks when it may; when the way is `sparse` it reads
 * nothing and says so (column `sparse`), and the caller runs the `sparse` statement. Two statements rather
 * than one holding both: PostgreSQL sets up every branch of a statement on each execution, even those cut
 * off by one-time filters, and the index branches of a large event are a large part of a tail poll
 * (bench/README.md, finding 14).
 *
 * PostgreSQL renders the body (JSON array or CSV with header), and the `X-Total-Count` in the same
 * statement and snapshot: the page's size when the page is not full; otherwise from the counters
 * ({@link counterTotal}) or, with a time window, an exact count (init plans, run only when the CASE needs
 * them).
 *
 * The text depends only on the statement, the format, which time bounds (and modem windows) are set and, for
 * `sparse`, the number of modems, so it runs as a named prepared statement (parsed and planned once per connection).
 * `withTotal: false` leaves the total out (null), for the benchmark's raw server. Every variant, rendered
 * whole under its statement name: `src/punches/sql/*.sql` (`pnpm sql`; docs/database.md).
 * @internal
 */
export function pageQuery(
  scope: PunchScope,
  format: PunchFormat,
  withTotal = true,
  statement: PageStatement = 'walk',
): { name: string; text: string; values: unknown[] } {
  const name = statementName(statement, scope, format, withTotal);
  const { where, values } = scopeConditions(scope, 'q', 'q.modem = ($1::text[])[__N__]', VIS_XMIN);
  const cached = pageTexts.get(name);
  if (cached !== undefined) return { name, text: cached, values };
  const cols = punchColumns('q');
  const windowed = scope.timeFrom !== null || scope.timeTo !== null || scope.windows !== undefined;
  let page: string;
  let mode = '';
  if (statement === 'sparse') {
    const branches = scope.modems.map(
      (_m, i) => `(select ${cols}
        from punches q
        where ${where.replace('__N__', String(i + 1))}
        order by q.id
        limit ${PAGE_SIZE})`,
    );
    page = `select * from (${branches.join('\n      union all ')}) u
      order by id
      limit ${PAGE_SIZE}`;
  } else {
    // Dense from afterId; else, when the scope's first punch lies further on, dense from there (lo).
    const dense = windowed
      ? 'select null::int8 as last, null::int8 as lo'
      : `select coalesce(a.last, b.last) as last, b.lo
        from (select ${denseLastBucket('$2::int8', 'fine')} as last) a
        left join lateral (
          select s.lo, ${denseLastBucket('s.lo', fineCountsAfter('s.lo'))} as last
          from start s
          where a.last is null and s.lo > $2) b on true`;
    // A CTE, so that it runs once however often the plan refers to it, and only when the dense check needs it.
    mode = `${
      windowed
        ? ''
        : `
    start as materialized (select ${SCOPE_START} as lo),`
    }
    mode as materialized (
      select case when h.head then 'head' when e.last is not null then 'dense' else 'sparse' end as m,
             (e.last + 1) << ${FINE_SHIFT} as hi, coalesce(e.lo, $2) as lo
      from (select coalesce((select max(id) from punches), 0) - $2 <= ${HEAD_IDS} as head) h
      left join lateral (${dense} where not h.head) e on true
    ),`;
    page = `select ${cols}
      from punches q
      where (select m from mode) <> 'sparse' and ${scopeConditions(scope, 'q', MODEM_FILTER, VIS_XMIN).where}
        and q.id > (select lo from mode) and q.id < coalesce((select hi from mode), 9223372036854775807)
      order by q.id
      limit ${PAGE_SIZE}`;
  }
  const exact = scopeConditions(scope, 'q', 'q.modem = any($1::text[])', VIS_XMIN).where;
  const fullTotal = !withTotal ? 'null' : windowed ? `(select count(*) from punches q where ${exact})` : counterTotal(PARTIAL_BUCKET_FROM_PAGE);
  const text = `
    with ${VIS_CTE},${windowed ? '' : `${FINE_COUNTS},`}${mode}
    page as (
      ${page}
    )
    select ${statement === 'walk' ? `(select m from mode) = 'sparse'` : 'false'} as sparse, n::int as count, body, ${visibleHead(VIS_XMIN)} as head,
      ${withTotal ? `(case when n < ${PAGE_SIZE} then n else ${fullTotal} end)::float8` : 'null::float8'} as total
    from (select count(*) as n, ${PAGE_EDGE_COLUMNS}, ${format === 'json' ? JSON_BODY : CSV_BODY} as body from ${format === 'json' ? JSON_FROM : 'page'}) b`;
  pageTexts.set(name, text);
  return { name, text, values };
}

/** Page statement texts by statement name (the text depends only on the name; at most a few thousand). */
const pageTexts = new Map<string, string>();

/**
 * Reads one page with its total: the `walk` statement, then the `sparse` one when the walk declined (see
 * {@link pageQuery}). `scope.modems` must be distinct. `withTotal: false` (the benchmark's raw server)
 * leaves `total` null.
 */
export async function readPunchPage(db: pg.Pool | pg.ClientBase, scope: PunchScope, format: PunchFormat, withTotal = true): Promise<PunchPage> {
  const walk = await db.query<PunchPage & { sparse: boolean }>(pageQuery(scope, format, withTotal, 'walk'));
  let row = walk.rows[0];
  if (row.sparse) row = (await db.query<PunchPage & { sparse: boolean }>(pageQuery(scope, format, withTotal, 'sparse'))).rows[0];
  return { count: row.count, body: row.body, total: row.total, head: row.head };
}

/**
 * The visible head now: the highest punch id that the readers' rule (`txid` below the horizon) exposes in a snapshot taken
 * now, as decimal text, "0" when there is none (one round trip; a backward walk of the primary key).
 *
 * Two snapshots with the same visible head expose the same punches: the readers' rule exposes whole upload
 * transactions in xid order, and the writers' critical section gives a later xid only higher ids (see the
 * module comment), so a punch that becomes visible later has a higher id than every punch visible before it
 * and would move the head. Punches are never updated and the service never deletes one (a deletion of the
 * newest punches lowers the head and is seen too). The counter totals follow the same rule. So a page
 * computed under head H ({@link PunchPage.head}) is exactly what the same read returns now when this returns H.
 * (Sessions know strangers from their own reads of the lock table, so another session's head may lag.)
 */
export async function readVisibleHead(db: pg.Pool | pg.ClientBase): Promise<string> {
  const { rows } = await db.query<{ head: string }>({ name: 'punch_visible_head', text: `select ${visibleHead(`(select ${VISIBLE_XMIN})`)} as head` });
  return rows[0].head;
}

/** Exact number of visible punches in scope by `count(*)` (reference for tests and the benchmark's raw server; pages use counters). @internal */
export async function countPunches(db: pg.Pool | pg.ClientBase, scope: PunchScope): Promise<number> {
  const { where, values } = scopeConditions(scope, 'q', 'q.modem = any($1::text[])');
  const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from punches q where ${where}`, values);
  return rows[0].n;
}

/** Visible punches in scope as pages count them (counters unless windowed) without a page; tests compare it with {@link countPunches}. @internal */
export async function countPunchesFast(db: pg.Pool | pg.ClientBase, scope: PunchScope): Promise<number> {
  const { where, values } = scopeConditions(scope, 'q', 'q.modem = any($1::text[])');
  const windowed = scope.timeFrom !== null || scope.timeTo !== null || scope.windows !== undefined;
  const text = windowed
    ? `select count(*)::float8 as n from punches q where ${where}`
    : `with ${VIS_CTE}, ${FINE_COUNTS} select ${counterTotal(PARTIAL_BUCKET_COUNT)}::float8 as n`;
  const { rows } = await db.query<{ n: number }>(text, windowed ? values : values.slice(0, 2));
  return rows[0].n;
}

/**
 * Folds the counter deltas of ended transactions (migration 0002 `compact_punch_counts`); returns the number
 * of rows removed. Safe to run concurrently from every instance.
 */
export async function compactPunchCounts(db: pg.Pool | pg.ClientBase): Promise<number> {
  const { rows } = await db.query<{ merged: number }>('select merged from compact_punch_counts()');
  return rows[0].merged;
}

/** Text of the empty body of a format (no query needed when the scope has no modems). */
export function emptyBody(format: PunchFormat): string {
  return format === 'json' ? '[]' : `${CSV_HEADER}\n`;
}
