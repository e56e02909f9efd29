/**
 * When each API key was last used (schema `ApiKey.lastUsedAt`; docs/decisions.md §5 "Key last used"). Every
 * authenticated request says which key it used ({@link KeyUses.record}); the database is written at most once
 * per key per granularity (60 s) and instance, off the request's path.
 */
import { performance } from 'node:perf_hooks';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DB } from '../db/schema';
import * as repo from './users.repository';

/** How stale `lastUsedAt` may be on one instance (ms): a key's use is written at most this often. */
const KEY_USE_GRANULARITY_MS = 60_000;

/**
 * The key uses of one app instance: a memo of when this instance last wrote each key's use, and the writes
 * still running. Made once per app (app.ts `TimingDeps.keyUses`, server.ts), never module-level: two apps in
 * one process (tests) keep their own memos, as two instances do.
 *
 * A write is a conditional UPDATE (users.repository.ts `touchKeyLastUsed`): the memo keeps this instance to one
 * statement per key per granularity, the condition keeps several instances to about one row write. Writes are
 * not awaited by the request and never fail it: an error (a read-only database after a fail-over, a lock
 * timeout) is logged, at most once per granularity, and the use is written again at the key's next use after
 * the granularity.
 */
export class KeyUses {
  private readonly db: Kysely<DB>;
  private readonly logger: Logger;
  private readonly granularityMs: number;
  /** Key id → `performance.now()` of this instance's last write of it (monotonic: a clock step changes nothing). */
  private readonly written = new Map<number, number>();
  private readonly running = new Set<Promise<void>>();
  private lastSweep = performance.now();
  private lastFailureLog = -Infinity;
  private failuresSinceLog = 0;

  /** `granularityMs`: 60 s unless given (0 in a test's negative control writes every use). */
  constructor(opts: { db: Kysely<DB>; logger: Logger; granularityMs?: number }) {
    this.db = opts.db;
    this.logger = opts.logger;
    this.granularityMs = opts.granularityMs ?? KEY_USE_GRANULARITY_MS;
  }

  /**
   * Notes that key `keyId` authenticated a request now. Returns at once; the write (when due) runs on its own
   * and its failure is only logged.
   */
  record(keyId: number): void {
    const now = performance.now();
    const last = this.written.get(keyId);
    if (last !== undefined && now - last < this.granularityMs) return;
    this.written.set(keyId, now);
    this.sweep(now);
    const write: Promise<void> = repo
      .touchKeyLastUsed(this.db, keyId, this.granularityMs / 1000)
      .then(
        () => undefined,
        (err: unknown) => this.failed(keyId, err),
      )
      .finally(() => this.running.delete(write));
    this.running.add(write);
  }

  /** Resolves when the writes started so far have ended (at shutdown before the pool closes, and in tests). */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  /** Drops memo entries older than the granularity, at most once per granularity: the memo holds the keys in recent use. */
  private sweep(now: number): void {
    if (now - this.lastSweep < this.granularityMs) return;
    this.lastSweep = now;
    for (const [id, at] of this.written) if (now - at >= this.granularityMs) this.written.delete(id);
  }

  private failed(keyId: number, err: unknown): void {
    const now = performance.now();
    this.failuresSinceLog++;
    if (now - this.lastFailureLog < this.granularityMs) return;
    this.lastFailureLog = now;
    this.logger.warn({ err, keyId, failures: this.failuresSinceLog }, 'could not record the use of an API key (lastUsedAt stays as it was)');
    this.failuresSinceLog = 0;
  }
}
