/**
 * Live delivery of punches: the per-instance hub that long-polls and SSE streams wait on.
 *
 * The hub never carries punch content. A wake-up only tells waiters "something may be new": each waiter
 * then re-reads with the normal gap-free query from its own `afterId` (punches.repository.ts), so a client
 * never skips or repeats a punch whichever instance stored it, and a lost or coalesced notification can only
 * delay a client, never corrupt what it receives.
 *
 * Visibility: `NOTIFY punches '<maxId>'` is sent after the upload commits, but a reader only sees that punch
 * once every older upload of the service has ended (the own-writers horizon, punch-visibility.repository.ts). The hub wakes the waiters at once
 * and then checks the hinted id's visibility itself (one primary-key lookup every
 * {@link VISIBILITY_RETRY_MS} ms at first); if it was still hidden, it wakes them again once it is readable,
 * so waiters never spin on their own. Waiters also re-read on their own every `safetyPollMs`, which
 * covers a punch that stays invisible longer (an upload stuck in flight) and a LISTEN connection that is
 * down.
 */
import type pg from 'pg';
import type { Logger } from 'pino';
import { ApiError } from '@sports-timing/shared';
import { isPunchVisible } from '../punches/punch-visibility.repository';

/** Delay between visibility checks of a notified punch (ms). */
const VISIBILITY_RETRY_MS = 10;

/** Quick visibility checks before the hub slows down to one check per 100 ms. */
const VISIBILITY_MAX_TRIES = 20;

/** Options of {@link LiveHub}. */
export interface LiveHubOptions {
  /** Pool of the service (search_path set to the timing schema), for the visibility check. */
  pool: pg.Pool;
  logger?: Logger;
  /** Most held long-polls plus open streams of this instance (503 beyond); `TIMING_MAX_LIVE_CONNECTIONS`. */
  maxConnections?: number;
  /**
   * Most of them one client may hold (429 beyond), so one client cannot take every slot;
   * `TIMING_MAX_LIVE_CONNECTIONS_PER_CLIENT`. Default: a tenth of `maxConnections`, at least 1.
   */
  maxConnectionsPerClient?: number;
  /** Waiters re-read at least this often (ms) even without a notification. Default 5000. */
  safetyPollMs?: number;
}

/** Why {@link LiveHub.wait} returned. */
export type WakeReason = 'wake' | 'timeout' | 'aborted' | 'closing';

/** A held connection's slot; release it exactly once when the request ends. */
export type LiveSlot = () => void;

/**
 * Per-instance registry of waiting live clients: a generation counter bumped by every wake-up, the waiters'
 * resolvers, the connection bound and the shutdown switch.
 */
export class LiveHub {
  /** Bumped on every wake; a waiter that saw generation g before its read returns at once when it changed. */
  private generation = 0;
  /** Bumped by {@link keysChanged}: a held request whose key was checked under another value checks it again. */
  private keyGen = 0;
  private readonly waiters = new Set<(reason: WakeReason) => void>();
  private held = 0;
  /** Slots held per client (see {@link acquire}); a client with none has no entry. */
  private readonly heldBy = new Map<string, number>();
  private closing = false;
  private pendingHint: number | null = null;
  private checking = false;
  readonly maxConnections: number;
  readonly maxConnectionsPerClient: number;
  readonly safetyPollMs: number;

  constructor(private readonly opts: LiveHubOptions) {
    this.maxConnections = opts.maxConnections ?? 1000;
    this.maxConnectionsPerClient = opts.maxConnectionsPerClient ?? Math.max(1, Math.floor(this.maxConnections / 10));
    this.safetyPollMs = opts.safetyPollMs ?? 5_000;
  }

  /** Current generation; take it before a read and pass it to {@link wait}. */
  get current(): number {
    return this.generation;
  }

  /**
   * Revocation generation: moves whenever a key may have been revoked (a `timing_keys` notification, or a
   * (re)connect of the LISTEN session, which may have missed some); see live.service.ts `keyGuard`.
   */
  get keyGeneration(): number {
    return this.keyGen;
  }

  /**
   * A key may have been revoked (a revocation was announced, or announcements may have been missed): moves
   * {@link keyGeneration} and wakes every waiter, so that each held request with a key re-checks it now.
   */
  keysChanged(): void {
    this.keyGen += 1;
    this.wakeAll();
  }

  /** True once {@link close} was called: live requests answer at once and streams end. */
  get isClosing(): boolean {
    return this.closing;
  }

  /** Connections currently held (long-polls waiting plus open streams). */
  get connections(): number {
    return this.held;
  }

  /**
   * Takes a connection slot for `client` (an API key's user or an address, see `liveClientOf`). Throws 503
   * with `Retry-After` when {@link maxConnections} are held or while closing (the instance's limit: a
   * stopping or full instance sends live clients elsewhere), else 429 with `Retry-After` when that client
   * already holds {@link maxConnectionsPerClient} (the client's own limit). `shared: true` (an anonymous
   * stream of a public filter, which follows a shared feed, fanout.ts) counts toward the instance's limit
   * only: hundreds of spectators behind one address (an arena's Wi-Fi, a carrier NAT) cost one read per change
   * together, so what bounds them is what they cost, the instance's limit (docs/architecture.md "Stream fan-out").
   */
  acquire(client: string, opts: { shared?: boolean } = {}): LiveSlot {
    if (this.closing) throw new ApiError(503, 'The service is stopping; retry on another instance.', { headers: { 'Retry-After': '1' } });
    if (this.held >= this.maxConnections) {
      throw new ApiError(503, `Too many live connections (${this.maxConnections}); retry shortly or poll without wait.`, { headers: { 'Retry-After': '5' } });
    }
    const mine = this.heldBy.get(client) ?? 0;
    if (opts.shared === true) {
      this.held += 1;
      let released = false;
      return () => {
        if (!released) this.held -= 1;
        released = true;
      };
    }
    if (mine >= this.maxConnectionsPerClient) {
      throw new ApiError(429, `This client already holds ${this.maxConnectionsPerClient} live connections; close one or poll without wait.`, {
        headers: { 'Retry-After': '5' },
      });
    }
    this.held += 1;
    this.heldBy.set(client, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held -= 1;
      const left = (this.heldBy.get(client) ?? 1) - 1;
      if (left > 0) this.heldBy.set(client, left);
      else this.heldBy.delete(client);
    };
  }

  /**
   * Wakes every waiter now (a reconnect of the LISTEN session, where notifications may have been missed,
   * or a test).
   */
  wakeAll(): void {
    this.generation += 1;
    const ws = [...this.waiters];
    this.waiters.clear();
    for (const w of ws) w('wake');
  }

  /**
   * A `punches` notification with the highest new id as a hint: waiters are woken once that id is visible
   * to readers (or after the bounded number of checks). Hints arriving meanwhile are coalesced.
   */
  notify(maxIdHint: number): void {
    // Usually the notified punch is readable already (its upload committed before the NOTIFY): wake now.
    this.wakeAll();
    if (!Number.isSafeInteger(maxIdHint) || maxIdHint <= 0) return;
    this.pendingHint = Math.max(this.pendingHint ?? 0, maxIdHint);
    if (!this.checking) void this.checkVisibility();
  }

  /**
   * Follows the highest hinted id until it is readable and wakes the waiters again then, if it was not at
   * first: every {@link VISIBILITY_RETRY_MS} ms for {@link VISIBILITY_MAX_TRIES} tries, then every 100 ms
   * (an older upload still in flight can hide it for longer). A readable higher id implies
   * that every lower one is readable too (the gap-free protocol), so only the highest hint is checked.
   */
  private async checkVisibility(): Promise<void> {
    this.checking = true;
    let tries = 0;
    try {
      while (this.pendingHint !== null && !this.closing) {
        const id = this.pendingHint;
        if (await this.visible(id)) {
          if (this.pendingHint === id) this.pendingHint = null;
          if (tries > 0) this.wakeAll();
          tries = 0;
          continue;
        }
        tries += 1;
        await new Promise((r) => setTimeout(r, tries <= VISIBILITY_MAX_TRIES ? VISIBILITY_RETRY_MS : 100));
      }
    } finally {
      this.checking = false;
    }
  }

  /** Whether punch `id` passes the readers' visibility rule now (a missing row counts as visible: wake and re-read). */
  private async visible(id: number): Promise<boolean> {
    try {
      return await isPunchVisible(this.opts.pool, id);
    } catch (err) {
      this.opts.logger?.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'live: visibility check failed');
      return true;
    }
  }

  /**
   * Resolves when the generation moves past `seen` (at once if it already has), after `timeoutMs`, when
   * `signal` aborts (client gone) or when the hub closes.
   */
  wait(seen: number, timeoutMs: number, signal?: AbortSignal): Promise<WakeReason> {
    if (this.closing) return Promise.resolve('closing');
    if (signal?.aborted) return Promise.resolve('aborted');
    if (this.generation !== seen) return Promise.resolve('wake');
    return new Promise<WakeReason>((resolve) => {
      const done = (reason: WakeReason) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.waiters.delete(done);
        resolve(reason);
      };
      const onAbort = () => done('aborted');
      const timer = setTimeout(() => done('timeout'), Math.max(0, timeoutMs));
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(done);
    });
  }

  /** Graceful stop: refuses new live requests and releases every waiter with `closing`. Idempotent. */
  close(): void {
    if (this.closing) return;
    this.closing = true;
    const ws = [...this.waiters];
    this.waiters.clear();
    for (const w of ws) w('closing');
  }
}
