/**
 * Local midnight in a named time zone, the one computation behind document dates of the ERP (docs/weclapp.md:
 * weclapp stores a date as the epoch ms of local midnight in the tenant's zone, Europe/Berlin), used by the
 * ordering service's ERP client (month filters of sales invoices) and by the ERP simulator (its seed's dates).
 */

/** Offset of `timeZone` from UTC at instant `utcMs`, in ms (positive east of Greenwich). */
function zoneOffsetMs(timeZone: string, utcMs: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(utcMs));
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value);
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return asUtc - Math.floor(utcMs / 1000) * 1000;
}

/**
 * Epoch ms of local midnight starting day `day` of `month` (1–12) of `year` in the IANA zone `timeZone`
 * (e.g. 1 March 2025 in Europe/Berlin → 28 February 23:00 UTC). Two passes, so a day that starts next to a
 * daylight saving change still gets its own offset.
 */
export function zonedMidnightMs(year: number, month: number, day: number, timeZone: string): number {
  const guess = Date.UTC(year, month - 1, day);
  const first = guess - zoneOffsetMs(timeZone, guess);
  return guess - zoneOffsetMs(timeZone, first);
}
