/**
 * The modem-window condition of the punch statements (punches.repository.ts `scopeConditions`): a read by modem
 * serial from a caller who is not the modem's user covers only the punches inside the windows of the public
 * events covering it (timing spec, "Anonymous reads"; punch-scope.ts `resolveScope`).
 */

/** A window of one modem's punches a read may cover: inclusive local-ms bounds on `time`, null = unbounded. */
export interface ModemWindow {
  modem: string;
  from: number | null;
  to: number | null;
}

/**
 * The condition that a punch (`alias`) lies in one of its modem's windows; appends its three array parameters
 * (modems, starts, ends) to `values`, the statement's parameters so far.
 */
export function modemWindowCondition(windows: readonly ModemWindow[], alias: string, values: unknown[]): string {
  values.push(
    windows.map((w) => w.modem),
    windows.map((w) => w.from),
    windows.map((w) => w.to),
  );
  const [m, lo, hi] = [values.length - 2, values.length - 1, values.length];
  return `exists (select 1 from unnest($${m}::text[], $${lo}::int8[], $${hi}::int8[]) as w(modem, lo, hi)
          where w.modem = ${alias}.modem and (w.lo is null or ${alias}.time >= w.lo) and (w.hi is null or ${alias}.time <= w.hi))`;
}
