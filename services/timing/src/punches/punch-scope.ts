/**
 * Reads whose scope cannot change under them (docs/decisions.md §5, gap-free polling). A scope that depends on
 * which modems are registered — a `user` read, or listed serials the caller cannot read (yet) — is resolved
 * before the page statement takes its snapshot: a modem registered in between, whose first punches committed
 * under ids below the page's last one, would be skipped for good by a poller moving its `afterId` past them.
 */
import type { ModemWindow } from './punch-windows.repository';
import type { PunchScope } from './punches.repository';

/**
 * `read(scope)` under a scope that did not grow while it ran: a modem is registered no later than its punches
 * commit, so the scope resolved again after the read holds every modem whose punches the read could see; when
 * it grew (and the answer was not empty, which moves no `afterId`), the read is repeated under it. Scopes that
 * `mayGrow` says cannot widen are read once.
 */
export async function readUntilScopeStable<T extends { total: number }>(
  resolve: () => Promise<PunchScope>,
  mayGrow: (scope: PunchScope) => boolean,
  read: (scope: PunchScope) => Promise<T>,
): Promise<T> {
  let scope = await resolve();
  for (;;) {
    const answer = await read(scope);
    if (answer.total === 0 || !mayGrow(scope)) return answer;
    const after = await resolve();
    if (sameScope(after, scope)) return answer;
    scope = after;
  }
}

/**
 * Whether registering a modem can widen `scope` of the read `q` (`getPunches` filters; `admin`: the caller is
 * an administrator, whose serials are read as listed): a `user` read always can, a serial list only while some
 * listed serial is not in the scope, an event's or an administrator's scope cannot.
 */
export function scopeMayGrow(admin: boolean, q: { user?: string; modem?: string; eventId?: unknown }, scope: PunchScope): boolean {
  if (q.user !== undefined) return true;
  if (q.eventId !== undefined || admin || q.modem === undefined) return false;
  const listed = new Set(
    q.modem
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  );
  return scope.modems.length < listed.size;
}

function sameScope(a: PunchScope, b: PunchScope): boolean {
  return [...a.modems].sort().join(',') === [...b.modems].sort().join(',') && windowsKey(a.windows) === windowsKey(b.windows);
}

/** The windows of a scope as part of a cache key: canonical (sorted) text, empty when the scope has none. */
export function windowsKey(windows: readonly ModemWindow[] | undefined): string {
  if (windows === undefined) return '';
  return windows
    .map((w) => `${w.modem}:${w.from ?? ''}:${w.to ?? ''}`)
    .sort()
    .join(';');
}

/** `next` as a set, cut to `current` unless that is null (no filter yet). */
export function intersect(current: Set<string> | null, next: Iterable<string>): Set<string> {
  const n = new Set(next);
  if (current === null) return n;
  return new Set([...current].filter((s) => n.has(s)));
}
