/**
 * The scope of a punch read (docs/decisions.md §5): filters and access resolved into the modems, time bounds
 * and windows a page statement covers (punches.repository.ts `PunchScope`), and the check that keeps polling
 * gap-free although the scope is resolved before the page (`readStably`).
 */
import type { Kysely } from 'kysely';
import { ApiError, validationError } from '@sports-timing/shared';
import type { DB } from '../db/schema';
import type { operations } from '../generated/openapi';
import { isAdmin, type Principal } from '../auth/principal';
import { assertCanRead, noSuchEvent } from '../events/events.service';
import type { EventCache } from '../events/event-cache';
import { modemReadWindows, modemsOfUserName } from '../modems/modems.repository';
import { keyRequired } from '../users/users.service';
import type { PunchScope } from './punches.repository';
import type { ModemWindow } from './punch-windows.repository';
import type { TimingLimits } from './punch-spec';

/** Largest event id (int4); larger `eventId` values cannot exist. */
const MAX_EVENT_ID = 2_147_483_647;

/** What resolving a scope needs: the Kysely instance, the app's event cache and the limits of its spec (a punch service has them). */
interface ScopeDeps {
  db: Kysely<DB>;
  events: EventCache;
  limits: Pick<TimingLimits, 'maxModemsPerQuery'>;
}

/** Query parameters of `getPunches` after spec validation (`afterId`, `after` coerced to numbers), `wait` left to the caller. */
export type PunchQuery = Omit<NonNullable<operations['getPunches']['parameters']['query']>, 'wait'>;

function intersect(current: Set<string> | null, next: Iterable<string>): Set<string> {
  const n = new Set(next);
  if (current === null) return n;
  return new Set([...current].filter((s) => n.has(s)));
}

/**
 * A scope of {@link resolveScope}. `pending`: a modem registered after it was resolved could widen it (an
 * event naming a serial no one holds yet, a read by user, a listed serial the caller may not read yet), see
 * {@link readStably}.
 */
export interface ResolvedScope extends PunchScope {
  pending: boolean;
}

/**
 * Resolves filters and access into a scope:
 * - `eventId`: the modems the event covers (the named ones registered to its owner, every named one for an
 *   administrator's event: docs/decisions.md §5) and its window; public, or the owner's or an admin's key (404
 *   alike for an unknown event and one the caller may not read);
 * - `user`: that user's modems; only that user or an admin;
 * - `modem` alone: the caller's own modems wholly, any modem for an admin, and another user's modem only within
 *   the windows of the public events covering it (`windows` of the scope; an event without a window exposes
 *   the whole modem); other serials match nothing, exactly as unknown ones (spec `getPunches`, "Access"). With
 *   `eventId` or `user` given, the modem list only narrows their scope.
 *
 * `fresh`: the event is read from the database, not the app's cache (event-cache.ts).
 * @internal
 */
export async function resolveScope(deps: ScopeDeps, caller: Principal | null, q: PunchQuery, fresh = false): Promise<ResolvedScope> {
  const listed = (q.modem ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (listed.length === 0 && q.eventId === undefined && q.user === undefined) {
    throw validationError({ modem: ['One of modem, eventId or user is required.'] }, 'Give at least one of the filters modem, eventId, user.');
  }
  const maxModems = deps.limits.maxModemsPerQuery;
  if (listed.length > maxModems) throw validationError({ modem: [`at most ${maxModems} serial numbers`] });

  let modems: Set<string> | null = null;
  let windows: ModemWindow[] | undefined;
  let timeFrom: number | null = null;
  let timeTo: number | null = null;
  let pending = false;
  if (q.eventId !== undefined) {
    const id = Number(q.eventId);
    const ev = id >= 1 && id <= MAX_EVENT_ID ? await deps.events.get(id, fresh) : undefined;
    if (!ev) throw noSuchEvent(q.eventId, caller);
    assertCanRead(caller, ev);
    modems = intersect(modems, ev.covered);
    pending = ev.pending;
    timeFrom = ev.from_ms;
    timeTo = ev.to_ms;
  }
  if (q.user !== undefined) {
    if (!caller) throw keyRequired('Reading by user needs the key of that user or of an admin.');
    if (!isAdmin(caller) && caller.userName !== q.user) throw new ApiError(403, 'Only that user or an admin may read by user.');
    modems = intersect(modems, await modemsOfUserName(deps.db, q.user));
    pending = true;
  }
  if (listed.length > 0) {
    let readable = listed;
    if (q.eventId === undefined && q.user === undefined && !isAdmin(caller)) {
      // A modem the caller may not read matches nothing, exactly like an unknown serial: the answer does not
      // tell whether a private modem exists.
      const read = await readWindowsOf(deps, listed, caller);
      readable = listed.filter((serial) => read.readable.has(serial));
      windows = read.windows;
      pending = readable.length < new Set(listed).size;
    }
    modems = intersect(modems, readable);
  }
  if (q.after !== undefined) {
    // `time` is integral, so `time >= after` equals `time >= ceil(after)` (accepts `1580584563000.0`).
    const after = Math.ceil(Math.max(-Number.MAX_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, q.after)));
    timeFrom = timeFrom === null ? after : Math.max(timeFrom, after);
  }
  return { modems: [...(modems ?? [])], afterId: Math.min(q.afterId ?? 0, Number.MAX_SAFE_INTEGER), timeFrom, timeTo, windows, pending };
}

/** How often {@link readStably} resolves a scope again before it answers with nothing. */
const MAX_SCOPE_CHECKS = 3;

/**
 * The answer of `read` for the scope of `q`, such that polling by `afterId` never skips a punch although the
 * scope is resolved by statements of its own before the page's (docs/decisions.md §5; the timing README,
 * "Gap-free polling"). A modem first registered after the scope was resolved (so missing from it) may have
 * punches in the page's snapshot below ids the page returns. So when the scope is `pending` and the answer
 * holds punches (`count` > 0), the scope is resolved again from the database — after the page's snapshot, so
 * it sees every registration that snapshot saw — and the read repeated while the two differ; after
 * {@link MAX_SCOPE_CHECKS} differing checks the answer is `empty`, which moves no `afterId`. An answer without
 * punches moves no `afterId` either and is returned as it is.
 */
export async function readStably<T>(
  deps: ScopeDeps,
  caller: Principal | null,
  q: PunchQuery,
  read: (scope: ResolvedScope) => Promise<T>,
  count: (answer: T) => number,
  empty: T,
): Promise<T> {
  let scope = await resolveScope(deps, caller, q);
  for (let check = 0; check < MAX_SCOPE_CHECKS; check++) {
    const answer = await read(scope);
    if (!scope.pending || count(answer) === 0) return answer;
    const again = await resolveScope(deps, caller, q, true);
    if (scopeKey(again) === scopeKey(scope)) return answer;
    scope = again;
  }
  return empty;
}

/** Whether a scope matches no punch at all (no modem, or a time window that ends before it starts). */
export function scopeIsEmpty(scope: PunchScope): boolean {
  return scope.modems.length === 0 || (scope.timeFrom !== null && scope.timeTo !== null && scope.timeFrom > scope.timeTo);
}

/** The access-checked scope as canonical text (modems and windows sorted: the page does not depend on their order), part of the shared answers' keys. */
export function scopeKey(scope: PunchScope): string {
  return `${scope.afterId}|${scope.timeFrom ?? ''}|${scope.timeTo ?? ''}|${[...scope.modems].sort().join(',')}|${windowsKey(scope.windows)}`;
}

/**
 * Which of `serials` a non-admin `caller` may read by serial alone, and the windows that cut them: none
 * (`windows` undefined) when every readable serial is readable wholly (the caller's own, or in a public event
 * without a window); otherwise one unbounded window per wholly readable serial and the public events' windows
 * of the others (see `resolveScope`).
 */
async function readWindowsOf(deps: ScopeDeps, serials: string[], caller: Principal | null): Promise<{ readable: Set<string>; windows?: ModemWindow[] }> {
  const rows = await modemReadWindows(deps.db, serials, caller?.userId ?? null);
  const readable = new Set(rows.map((r) => r.serial));
  const whole = new Set(rows.filter((r) => r.from_ms === null && r.to_ms === null).map((r) => r.serial));
  if (whole.size === readable.size) return { readable };
  const windows: ModemWindow[] = [...whole].map((modem) => ({ modem, from: null, to: null }));
  for (const r of rows) if (!whole.has(r.serial)) windows.push({ modem: r.serial, from: r.from_ms, to: r.to_ms });
  return { readable, windows };
}

/** The windows of a scope as part of a cache key: canonical (sorted) text, empty when the scope has none. */
function windowsKey(windows: readonly ModemWindow[] | undefined): string {
  if (windows === undefined) return '';
  return windows
    .map((w) => `${w.modem}:${w.from ?? ''}:${w.to ?? ''}`)
    .sort()
    .join(';');
}
