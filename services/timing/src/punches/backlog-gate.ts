/**
 * Pacing of backlog replays (docs/architecture.md "Backlog replays"): a read loop that replays history page
 * after page (a stream or a fan-out subscriber starting from an old `afterId`, a whole-event ROC answer) reads
 * each page after its first through one instance-wide gate, so that at most {@link BacklogGate.limit} such
 * pages are read at once (first come, first served) and every page ends with a turn of the event loop. Plain
 * polls and the first page of every read never wait here: a client's own round trips already pace them.
 */
import { DEFAULT_BACKLOG_READS } from '../config';

/** The gate; build one per app (app.ts) and hand it to every replaying read. */
export class BacklogGate {
  private running = 0;
  private readonly queue: (() => void)[] = [];
  /** Pages read through the gate, those that had to wait for a turn, and the most read at once so far. */
  readonly stats = { pages: 0, waited: 0, mostAtOnce: 0 };

  /** `limit` (≥ 1): backlog pages read at once. */
  constructor(readonly limit: number = DEFAULT_BACKLOG_READS) {}

  /** Runs `read` (one backlog page) when a turn is free; yields to the event loop after it. Errors pass through. */
  async page<T>(read: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) {
      this.stats.waited += 1;
      await new Promise<void>((resolve) => this.queue.push(resolve));
    } else {
      this.running += 1;
    }
    this.stats.pages += 1;
    this.stats.mostAtOnce = Math.max(this.stats.mostAtOnce, this.running);
    try {
      return await read();
    } finally {
      // The turn passes straight to the next waiter (running stays counted), else it is given back.
      const next = this.queue.shift();
      if (next) next();
      else this.running -= 1;
      await new Promise((r) => setImmediate(r));
    }
  }
}
