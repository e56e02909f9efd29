/**
 * Time formats of the live view, in the organiser's locale (the browser's language): one hour:minute:second
 * shape everywhere, the date in front only where the day is not the event's day. Punch times are the event's
 * local wall clock (ms written as if UTC, the API's `time`), so they are formatted in UTC; upload instants
 * (UTC ms, `receptionTimeUtc`) are moved into the event's time zone by its offset ({@link LiveClock.estimateOffset}).
 */
const TIME = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', timeZone: 'UTC' });
const DATE = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' });
const QUARTER_HOUR = 15 * 60_000;

/** A day number of a local wall-clock time (ms as if UTC). */
export function dayOf(localMs: number): number {
  return Math.floor(localMs / 86_400_000);
}

/** Local wall-clock date and time (ms as if UTC), or "open" for an unset window bound. */
export function localDateTime(ms: number | null): string {
  return ms === null ? 'open' : `${DATE.format(ms)} ${TIME.format(ms)}`;
}

/** A span for the quiet warning in whole minutes ("<1 min"), hours from two hours on. */
export function duration(ms: number): string {
  const min = Math.floor(ms / 60_000);
  if (min < 1) return '<1 min';
  if (min < 120) return `${min} min`;
  return `${Math.floor(min / 60)} h`;
}

/** The service clock and the event's zone, as the view learns them from `getEventStatus`. */
export class LiveClock {
  /** Service clock − browser clock (ms). */
  private serverOffset = 0;
  /** The event's offset from UTC (ms); the browser's own until punches tell better. */
  private eventOffset = -new Date().getTimezoneOffset() * 60_000;
  /** The event's day (local), for "is this another day"; null until known. */
  eventDay: number | null = null;

  /** Takes the service's clock (`serverTimeUtc`, UTC ms). */
  syncServer(serverTimeUtc: number): void {
    this.serverOffset = serverTimeUtc - Date.now();
  }

  /** The service's current time (UTC ms). */
  now(): number {
    return Date.now() + this.serverOffset;
  }

  /** The service's current time on the event's local wall clock (ms as if UTC). */
  localNow(): number {
    return this.now() + this.eventOffset;
  }

  /**
   * The event's offset: a punch's local `time` minus its `receptionTimeUtc` is that offset less a few seconds
   * of radio delay, so the median over the newest punches rounded to a quarter hour gives it. A median beyond
   * ±14 h (a replay of an old file) is not an offset: the browser's own is kept.
   */
  estimateOffset(punches: readonly { time: number; receptionTimeUtc: number }[]): void {
    const diffs = punches.map((p) => p.time - p.receptionTimeUtc).sort((a, b) => a - b);
    if (diffs.length === 0) return;
    const median = Math.round(diffs[Math.floor(diffs.length / 2)] / QUARTER_HOUR) * QUARTER_HOUR;
    if (Math.abs(median) <= 14 * 3_600_000) this.eventOffset = median;
  }

  /** A local wall-clock time, the date added when it is not the event's day; "—" for none. */
  localTime(ms: number | null): string {
    if (ms === null) return '—';
    return (this.eventDay !== null && dayOf(ms) !== this.eventDay ? `${DATE.format(ms)} ` : '') + TIME.format(ms);
  }

  /** When a UTC instant was: "12 s ago" within the hour, else its time in the event's zone; "—" for none. */
  ago(ms: number | null): string {
    if (ms === null) return '—';
    const s = Math.max(0, Math.round((this.now() - ms) / 1000));
    if (s < 60) return `${s} s ago`;
    if (s < 3600) return `${Math.floor(s / 60)} min ago`;
    return this.localTime(ms + this.eventOffset);
  }
}
