/**
 * Identical punch reads share one answer (docs/architecture.md, "Shared punch answers"): per app and
 * pool (one cache per pool, built by the punch service of each app, punches.service.ts `createPunchService`), the answer of a read is kept under its key (the access-checked scope, the format) together with the
 * visible head it was computed under, and a later identical request is answered from it while the database's
 * visible head has not moved; concurrent identical requests wait for one computation.
 *
 * Why this is exact: the punches (and totals) a statement exposes are fixed by the visible head of its
 * snapshot (punches.repository.ts `readVisibleHead`), and the page statement returns the head it ran under.
 * An answer is served only when it was computed by a statement that started after the request arrived, or
 * when a head probe that started after the request arrived returned the answer's head: either way the answer
 * is exactly what the database returns for that request at a moment within the request. The gap-free
 * guarantee (docs/decisions.md §5) is therefore the database's, unchanged. Probes are coalesced too: one in
 * flight per pool; every request that arrived after it started waits for the next one, and one probe serves
 * every key.
 *
 * Access: the key is built after access was checked and holds the resolved modems and time window, so an
 * answer only ever goes to a caller who may read exactly that scope.
 *
 * Memory: a least-recently-used map bounded by bytes (bodies, derived bodies such as the gzip encoding, keys).
 */
import { LRUCache } from 'lru-cache';
import type pg from 'pg';
import * as repo from './punches.repository';

/** Default bound of one pool's cache (bytes); `TIMING_READ_CACHE_MB`. */
export const DEFAULT_READ_CACHE_BYTES = 64 * 1024 * 1024;

/** Bytes accounted per entry beyond its bodies and key (the entry objects, the LRU's bookkeeping). */
const ENTRY_OVERHEAD = 200;

/** What a computation yields: a body, its `X-Total-Count`, and the head it was read under. */
export interface ComputedAnswer {
  body: string | Buffer;
  total: number;
  head: string;
}

/**
 * A shared answer and the bodies derived from it (gzip encoding, the Center's simple format), all valid for
 * the answer's head; derived bodies are added by the first request that needs them ({@link PunchReadCache.derive}).
 */
export interface SharedAnswer extends ComputedAnswer {
  /** Request sequence number when its computation started (a later computation replaces an earlier one). */
  readonly seq: number;
  readonly derived: Map<string, string | Buffer>;
}

function bytesOf(value: string | Buffer): number {
  return typeof value === 'string' ? Buffer.byteLength(value) : value.length;
}

function sizeOf(answer: SharedAnswer, key: string): number {
  let n = ENTRY_OVERHEAD + key.length * 2 + answer.head.length * 2 + bytesOf(answer.body);
  for (const [name, v] of answer.derived) n += name.length * 2 + bytesOf(v);
  return n;
}

/** A computation or probe in flight and the request sequence number current when it started. */
interface Started<T> {
  seq: number;
  promise: Promise<T>;
}

/** One pool's cache of read answers for one app (see the module comment). */
export class PunchReadCache {
  private readonly lru: LRUCache<string, SharedAnswer>;
  private readonly inflight = new Map<string, Started<SharedAnswer>>();
  /** Sequence number of requests: a computation or probe serves a request when it started at or after its number. */
  private seq = 0;
  private probe: Started<string> | null = null;
  private nextProbe: Promise<string> | null = null;
  /** Requests answered from a cached answer, by joining a computation, by computing; probes run. */
  readonly stats = { hits: 0, joined: 0, computed: 0, probes: 0 };

  /** `maxBytes` (> 0): bound of the cached answers, bodies, derived bodies and keys together. */
  constructor(
    private readonly pool: pg.Pool,
    maxBytes: number,
  ) {
    this.lru = new LRUCache<string, SharedAnswer>({ maxSize: maxBytes, sizeCalculation: (v, k) => Math.max(1, sizeOf(v, k)) });
  }

  /**
   * The answer of the read `key`: the cached one when a probe started after this call returns its head,
   * else that of a computation started after this call (shared with identical requests), else `compute()`'s
   * own. A request that finds a computation of its key running that started before it waits for that one to
   * end and then tries again: the fresh answer is served when a probe confirms its head, so a burst of
   * identical requests costs one computation, and one key never runs more than one at a time.
   * `compute` must run statements whose result is a function of the key and the head they report.
   * Its errors reach every request that waited for it; nothing failed is cached.
   */
  async get(key: string, compute: () => Promise<ComputedAnswer>): Promise<SharedAnswer> {
    for (;;) {
      const mine = ++this.seq;
      const cached = this.lru.get(key);
      if (cached !== undefined && this.joinable(key, mine) === undefined) {
        // A failed probe is not an error of the read: the read computes its own answer.
        const head = await this.headAfter(mine).catch(() => null);
        if (head === cached.head) {
          this.stats.hits += 1;
          return cached;
        }
      }
      const flight = this.inflight.get(key);
      if (flight === undefined) {
        this.stats.computed += 1;
        return this.start(key, compute);
      }
      if (flight.seq >= mine) {
        this.stats.joined += 1;
        return flight.promise;
      }
      // Started before this request: its answer may miss what this request must see. Wait for it, then
      // try again (counted once, by the attempt that answers).
      await flight.promise.catch(() => undefined);
    }
  }

  /** Runs `compute` for `key` now, as the key's current computation; caches its answer. */
  private start(key: string, compute: () => Promise<ComputedAnswer>): Promise<SharedAnswer> {
    const seq = this.seq;
    const promise = compute().then((r): SharedAnswer => ({ body: r.body, total: r.total, head: r.head, seq, derived: new Map() }));
    const current = { seq, promise };
    this.inflight.set(key, current);
    const done = () => {
      if (this.inflight.get(key) === current) this.inflight.delete(key);
    };
    promise.then((answer) => {
      const have = this.lru.peek(key);
      if (have === undefined || answer.seq >= have.seq) this.lru.set(key, answer);
      done();
    }, done);
    return promise;
  }

  /**
   * The body derived from `answer` (the answer of `key`) under `name`, made by `make` once per answer and
   * reused by every request served the same answer; the cached entry's size is recounted.
   */
  async derive(key: string, answer: SharedAnswer, name: string, make: () => Promise<string | Buffer> | string | Buffer): Promise<string | Buffer> {
    const have = answer.derived.get(name);
    if (have !== undefined) return have;
    const value = await make();
    answer.derived.set(name, value);
    if (this.lru.peek(key) === answer) this.lru.set(key, answer);
    return value;
  }

  /** A computation of `key` in flight that started at or after request `mine` arrived. */
  private joinable(key: string, mine: number): Promise<SharedAnswer> | undefined {
    const f = this.inflight.get(key);
    return f !== undefined && f.seq >= mine ? f.promise : undefined;
  }

  /** The visible head returned by a probe that started at or after request `mine` arrived (coalesced). */
  private headAfter(mine: number): Promise<string> {
    if (this.probe !== null && this.probe.seq >= mine) return this.probe.promise;
    // The next probe starts later than now, so it serves this request too.
    if (this.nextProbe !== null) return this.nextProbe;
    if (this.probe === null) return this.startProbe();
    // A probe is running but started before this request: the next starts when it ends, for all who wait.
    this.nextProbe = this.probe.promise
      .catch(() => undefined)
      .then(() => {
        this.nextProbe = null;
        return this.startProbe();
      });
    return this.nextProbe;
  }

  private startProbe(): Promise<string> {
    const started: Started<string> = { seq: this.seq, promise: repo.readVisibleHead(this.pool) };
    this.probe = started;
    this.stats.probes += 1;
    const clear = () => {
      if (this.probe === started) this.probe = null;
    };
    started.promise.then(clear, clear);
    return started.promise;
  }
}
