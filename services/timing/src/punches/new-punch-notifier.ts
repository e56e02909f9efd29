/**
 * The NOTIFY after uploads (`NOTIFY punches, '<maxId>'`, live/listener.ts): one notifier per punch service
 * (punches.service.ts `createPunchService`), so one per app.
 */
import type pg from 'pg';
import * as upload from './punch-upload.repository';

/**
 * Shortest time from the start of one NOTIFY to the start of the next, in ms (docs/architecture.md "Wake-up"):
 * a NOTIFY is a transaction of its own, and modems posting one punch each would otherwise send about one per
 * upload. A lone upload is announced at once; uploads during the interval are announced together at its end.
 * @internal
 */
export const NOTIFY_INTERVAL_MS = 10;

/**
 * Coalesces new-punch notifications of one punch service: at most one NOTIFY in flight and at most one per
 * `intervalMs` (default {@link NOTIFY_INTERVAL_MS}), the next one carrying the highest id seen meanwhile.
 * Listeners (long-polls and streams, live/hub.ts) re-read from their own `afterId`, so only the latest id
 * matters. Failures are logged and dropped: a lost notification only delays live clients until their next poll.
 */
export class NewPunchNotifier {
  private pending: number | null = null;
  private running = false;
  constructor(
    private readonly pool: pg.Pool,
    private readonly onError: (err: unknown) => void,
    private readonly intervalMs = NOTIFY_INTERVAL_MS,
  ) {}

  /** Announces that punches up to id `maxId` were committed (coalesced with those still pending). */
  notify(maxId: number): void {
    this.pending = this.pending === null ? maxId : Math.max(this.pending, maxId);
    if (!this.running) void this.drain();
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.pending !== null) {
      const id = this.pending;
      this.pending = null;
      const started = performance.now();
      await upload.notifyNewPunches(this.pool, id).catch(this.onError);
      const rest = this.intervalMs - (performance.now() - started);
      // Unreferenced: a pause never keeps a stopping process alive (what is pending then is announced by nobody,
      // as with a failed NOTIFY).
      if (rest > 0) await new Promise((resolve) => setTimeout(resolve, Math.ceil(rest)).unref());
    }
    this.running = false;
  }
}
