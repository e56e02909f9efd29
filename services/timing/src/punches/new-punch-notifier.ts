/**
 * The NOTIFY after uploads (`NOTIFY punches, '<maxId>'`, live/listener.ts): one notifier per punch service
 * (punches.service.ts `createPunchService`), so one per app.
 */
import type pg from 'pg';
import * as upload from './punch-upload.repository';

/**
 * Coalesces new-punch notifications of one punch service: at most one NOTIFY in flight, the next one carrying the
 * highest id seen meanwhile. Listeners (long-polls and streams, live/hub.ts) re-read from their
 * own `afterId`, so only the latest id matters. Failures are logged and dropped: a lost notification only delays live
 * clients until their next poll.
 */
export class NewPunchNotifier {
  private pending: number | null = null;
  private running = false;
  constructor(
    private readonly pool: pg.Pool,
    private readonly onError: (err: unknown) => void,
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
      await upload.notifyNewPunches(this.pool, id).catch(this.onError);
    }
    this.running = false;
  }
}
