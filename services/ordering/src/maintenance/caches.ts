/**
 * The named in-process caches of one app, cleared by `POST /api/rest/v1/maintenance/clear-caches` (`clearCaches`)
 * on every instance. The composition root (`composeOrdering`) builds one {@link CacheRegistry} per app and hands
 * it to the owners of caches, which register themselves in it:
 *
 *     const registry = new CacheRegistry();
 *     const byCulture = new Map<string, Country[]>();
 *     registry.register('countries', () => byCulture.clear());
 *
 * - `register(name, clear)` adds a cache and returns a function that removes it again. `clear` may be async;
 *   it must only drop in-memory state (the next read repopulates it from the database).
 * - Several registrations may share a name; all are cleared. A failing `clear` is logged and reported, it
 *   does not stop the others.
 * - Two apps in one process have two registries: clearing one leaves the other's caches alone, unless the
 *   clear goes through the database ({@link CacheRegistry.clearEverywhere}), as between instances.
 *
 * Across instances: {@link CacheRegistry.clearEverywhere} clears the registry and sends
 * `NOTIFY ordering_clear_caches` with the registry's instance id; every instance runs a {@link CacheClearListener}
 * (started in `server.ts`) that clears its registry when it hears another instance's notification. A cache that
 * must never be stale longer than a bound should still use a TTL of its own: a notification sent while an
 * instance's listener reconnects is lost.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import { listenOn } from '@sports-timing/shared';
import { CLEAR_CACHES_CHANNEL, notifyClearCachesChannel } from './maintenance.repository';

/** Result of clearing: the names cleared and the names whose `clear` failed. */
export interface ClearResult {
  cleared: string[];
  failed: string[];
}

/** A set of named in-process caches: those of one app. */
export class CacheRegistry {
  private readonly entries = new Set<{ name: string; clear: () => void | Promise<void> }>();

  /** `instanceId` names this registry in notifications (default a random UUID), so that the sender does not clear twice. */
  constructor(readonly instanceId: string = randomUUID()) {}

  /** Adds a cache; returns the function that removes it. */
  register(name: string, clear: () => void | Promise<void>): () => void {
    const entry = { name, clear };
    this.entries.add(entry);
    return () => {
      this.entries.delete(entry);
    };
  }

  /** Names of the registered caches, sorted, each once. */
  names(): string[] {
    return [...new Set([...this.entries].map((e) => e.name))].sort();
  }

  /** Clears every registered cache (in parallel); never throws. */
  async clearAll(logger?: Logger): Promise<ClearResult> {
    const cleared = new Set<string>();
    const failed = new Set<string>();
    await Promise.all(
      [...this.entries].map(async (e) => {
        try {
          await e.clear();
          cleared.add(e.name);
        } catch (err) {
          failed.add(e.name);
          logger?.warn({ cache: e.name, err: { message: (err as Error).message } }, 'cache clear failed');
        }
      }),
    );
    return { cleared: [...cleared].filter((n) => !failed.has(n)).sort(), failed: [...failed].sort() };
  }

  /**
   * Clears this registry, then tells every other instance (including those of other processes) to clear its
   * own once the caller's transaction commits (`NOTIFY` on `db`). Answers what was cleared here.
   */
  async clearEverywhere<T>(db: Kysely<T>, logger?: Logger): Promise<ClearResult> {
    const local = await this.clearAll(logger);
    await notifyClearCachesChannel(db, this.instanceId);
    return local;
  }
}

/**
 * Listens on {@link CLEAR_CACHES_CHANNEL} on a dedicated connection (LISTEN needs a session of its own)
 * and clears `registry` on each notification from another instance (another registry id); reconnects after a
 * connection loss.
 */
export class CacheClearListener {
  private client: pg.Client | undefined;
  private stopped = true;
  private retry: NodeJS.Timeout | undefined;

  constructor(private readonly opts: { url: string; registry: CacheRegistry; logger?: Logger; onCleared?: (r: ClearResult) => void }) {}

  /** Connects and listens; resolves once listening (or after a failed first attempt, which is retried). */
  async start(): Promise<void> {
    this.stopped = false;
    await this.connect();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({ connectionString: this.opts.url });
    client.on('error', () => undefined);
    client.on('notification', (msg) => {
      if (msg.channel !== CLEAR_CACHES_CHANNEL || msg.payload === this.opts.registry.instanceId) return;
      void this.opts.registry.clearAll(this.opts.logger).then((r) => {
        this.opts.logger?.info({ cleared: r.cleared, failed: r.failed }, 'caches cleared on notification');
        this.opts.onCleared?.(r);
      });
    });
    client.on('end', () => {
      // Only the active session reconnects; a session that failed to start is retried below.
      if (this.client !== client) return;
      this.client = undefined;
      this.scheduleRetry();
    });
    try {
      await client.connect();
      await listenOn(client, [CLEAR_CACHES_CHANNEL]);
      if (this.stopped) await client.end();
      else this.client = client;
    } catch {
      await client.end().catch(() => undefined);
      this.scheduleRetry();
    }
  }

  private scheduleRetry(): void {
    if (this.stopped || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.connect();
    }, 1_000);
  }

  /** Stops listening and closes the connection. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
    await this.client?.end().catch(() => undefined);
    this.client = undefined;
  }
}
