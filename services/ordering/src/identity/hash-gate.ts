/**
 * Bounded password hashing (ordering README "Accounts, e-mail verification and sign-in limits"). One
 * scrypt hash at the production cost takes 128 MiB and a few hundred milliseconds of one libuv worker
 * thread; the pool (4 threads by default) also serves compression and file reads, so unbounded hashing
 * makes every other request wait behind a login burst. The gate lets a few hashes run at once, queues a
 * few more, and turns the rest away at once with 503 and `Retry-After`.
 */
import { ApiError } from '@sports-timing/shared';

/** The 503 of a full gate. */
export function hashingBusy(): ApiError {
  return new ApiError(503, 'The service is busy checking passwords; retry shortly.', { headers: { 'Retry-After': '1' } });
}

/** Runs password hashes at most `concurrency` at a time, with at most `queueLength` waiting. */
export class HashGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly concurrency: number,
    private readonly queueLength: number,
  ) {}

  /**
   * Runs `fn` when a slot is free. Throws ApiError 503 with `Retry-After: 1` (see {@link hashingBusy})
   * without running it when every slot is taken and the queue is full.
   */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.queueLength) throw hashingBusy();
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await fn();
    } finally {
      // The slot passes straight to the next waiter, so `running` stays counted.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  /** Whether a call of {@link run} now would be turned away (lets callers refuse before any other work). */
  get saturated(): boolean {
    return this.running >= this.concurrency && this.waiting.length >= this.queueLength;
  }
}
