/**
 * The one dedicated `LISTEN punches` session of a service instance (also `timing_events`, event changes, and
 * `timing_keys`, key revocations). Every upload, on any
 * instance, ends with `NOTIFY punches '<maxId>'` (punches.service.ts); PostgreSQL delivers it to every
 * listening session of the database, so each instance's hub learns of punches stored elsewhere.
 *
 * The session lives outside the pool (a pooled client would be returned and lose its LISTEN). When it
 * fails it is reconnected with exponential backoff (100 ms doubling to 5 s); after each (re)connect the
 * hub wakes every waiter, because notifications sent while the session was down are lost.
 */
import pg from 'pg';
import type { Logger } from 'pino';
import { listenOn } from '@sports-timing/shared';
import { PUNCH_CHANNEL } from '../punches/punch-upload.repository';
import { EVENT_CHANNEL, invalidateCachedEvent } from '../events/event-cache';
import { KEY_CHANNEL } from '../users/users.service';
import type { LiveHub } from './hub';

/** A running listener; `stop()` ends the session and any pending reconnect. */
export interface PunchListener {
  /** Resolves once the first LISTEN is active (or the listener was stopped). */
  ready: Promise<void>;
  stop(): Promise<void>;
}

const MIN_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5_000;

/** Starts listening on `url` (the service's database) and forwards notifications to `hub`. */
export function startPunchListener(url: string, hub: LiveHub, logger?: Logger): PunchListener {
  let stopped = false;
  let client: pg.Client | null = null;
  let timer: NodeJS.Timeout | null = null;
  let backoff = MIN_BACKOFF_MS;
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((r) => (markReady = r));

  const scheduleReconnect = () => {
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = null;
      void connect();
    }, backoff);
    backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
  };

  const connect = async () => {
    if (stopped) return;
    const c = new pg.Client({ connectionString: url, application_name: 'timing-listen' });
    client = c;
    let failed = false;
    const onFailure = (err?: Error) => {
      if (failed) return;
      failed = true;
      if (client === c) client = null;
      if (!stopped) logger?.warn({ err: err ? { message: err.message } : undefined }, 'live: LISTEN session lost, reconnecting');
      c.end().catch(() => undefined);
      scheduleReconnect();
    };
    c.on('error', onFailure);
    c.on('end', () => onFailure());
    c.on('notification', (msg) => {
      if (msg.channel === PUNCH_CHANNEL) hub.notify(Number(msg.payload));
      else if (msg.channel === EVENT_CHANNEL) invalidateCachedEvent(Number(msg.payload));
      else if (msg.channel === KEY_CHANNEL) hub.keysChanged();
    });
    try {
      await c.connect();
      await listenOn(c, [PUNCH_CHANNEL, EVENT_CHANNEL, KEY_CHANNEL]);
      if (stopped) {
        await c.end().catch(() => undefined);
        return;
      }
      backoff = MIN_BACKOFF_MS;
      // Event changes and key revocations announced while the session was down are lost too.
      invalidateCachedEvent(null);
      hub.keysChanged();
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
