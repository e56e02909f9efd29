/**
 * `LISTEN` sessions: connections of their own outside the pools (a pooled session would lose its `LISTEN` when
 * released), kept open with reconnects (docs/database.md "Database faults").
 */
import pg from 'pg';
import type { Logger } from 'pino';

/**
 * Sends `LISTEN` for every channel of `channels` on `client`, a connected session of its own outside any pool
 * (notifications arrive as its `notification` events). Channel names are quoted as identifiers, so they must
 * match the `pg_notify`/`NOTIFY` name exactly. Throws the driver's error (e.g. the session was lost).
 */
export async function listenOn(client: pg.ClientBase, channels: readonly string[]): Promise<void> {
  await client.query(channels.map((c) => `listen "${c.replace(/"/g, '""')}"`).join('; '));
}

/** A running {@link startListenSession}; `stop()` ends the session and any pending reconnect. */
export interface ListenSession {
  /** Resolves once the first `LISTEN` is active (or the session was stopped). */
  ready: Promise<void>;
  stop(): Promise<void>;
}

/** Options of {@link startListenSession}. */
export interface ListenSessionOptions {
  /** The database URL (the session is a connection of its own, never a pooled one). */
  url: string;
  channels: readonly string[];
  /** `application_name` of the session (seen in `pg_stat_activity`). */
  applicationName: string;
  onNotification(msg: pg.Notification): void;
  /** After every (re)connect: notifications sent while the session was down are lost, so catch up here. */
  onConnected?(): void;
  logger?: Logger;
}

/** First and longest wait before a lost `LISTEN` session is opened again, ms. */
const LISTEN_BACKOFF_MS = { min: 100, max: 5_000 };

/**
 * Keeps one `LISTEN` session on `channels` (docs/database.md "Database faults"): a dedicated connection outside
 * the pools, so a pool that is exhausted or recycles its sessions never takes it along; with TCP keep-alive, so
 * a silently dropped connection is noticed. When it fails — or cannot be opened, e.g. while the database
 * refuses connections (53300) — it is opened again with exponential backoff (100 ms doubling to 5 s), and
 * `onConnected` runs after each success.
 */
export function startListenSession(opts: ListenSessionOptions): ListenSession {
  let stopped = false;
  let client: pg.Client | null = null;
  let timer: NodeJS.Timeout | null = null;
  let backoff = LISTEN_BACKOFF_MS.min;
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((r) => (markReady = r));

  const scheduleReconnect = () => {
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = null;
      void connect();
    }, backoff);
    backoff = Math.min(LISTEN_BACKOFF_MS.max, backoff * 2);
  };

  const connect = async () => {
    if (stopped) return;
    const c = new pg.Client({ connectionString: opts.url, application_name: opts.applicationName, keepAlive: true });
    client = c;
    let failed = false;
    const onFailure = (err?: Error) => {
      if (failed) return;
      failed = true;
      if (client === c) client = null;
      if (!stopped) opts.logger?.warn({ err: err ? { message: err.message } : undefined, channels: opts.channels }, 'LISTEN session lost, reconnecting');
      c.end().catch(() => undefined);
      scheduleReconnect();
    };
    c.on('error', onFailure);
    c.on('end', () => onFailure());
    c.on('notification', (msg) => opts.onNotification(msg));
    try {
      await c.connect();
      await listenOn(c, opts.channels);
      if (stopped) {
        await c.end().catch(() => undefined);
        return;
      }
      backoff = LISTEN_BACKOFF_MS.min;
      opts.onConnected?.();
      markReady();
    } catch (err) {
      onFailure(err instanceof Error ? err : new Error(String(err)));
    }
  };

  void connect();
  return {
    ready,
    async stop() {
      stopped = true;
      markReady();
      if (timer) clearTimeout(timer);
      timer = null;
      const c = client;
      client = null;
      await c?.end().catch(() => undefined);
    },
  };
}
