/**
 * The one dedicated `LISTEN punches` session of a service instance (also `timing_events`, event changes, and
 * `timing_keys`, key revocations). Every upload, on any
 * instance, ends with `NOTIFY punches '<maxId>'` (punches.service.ts); PostgreSQL delivers it to every
 * listening session of the database, so each instance's hub learns of punches stored elsewhere.
 *
 * The session is the shared `startListenSession` (outside the pool, reconnected with backoff); after each
 * (re)connect the hub wakes every waiter, because notifications sent while the session was down are lost.
 */
import type { Logger } from 'pino';
import { startListenSession, type ListenSession } from '@sports-timing/shared';
import { PUNCH_CHANNEL } from '../punches/punch-upload.repository';
import { EVENT_CHANNEL, type EventCache } from '../events/event-cache';
import { KEY_CHANNEL } from '../users/users.service';
import type { LiveHub } from './hub';

/** A running listener; `stop()` ends the session and any pending reconnect. */
export type PunchListener = ListenSession;

/**
 * Starts listening on `url` (the service's database) and forwards notifications to one app's objects (its
 * composition, composition.ts): new punches and key revocations to its hub `live`, event changes to its
 * `eventCache`.
 */
export function startPunchListener(url: string, app: { live: LiveHub; eventCache: EventCache }, logger?: Logger): PunchListener {
  const { live: hub, eventCache } = app;
  return startListenSession({
    url,
    channels: [PUNCH_CHANNEL, EVENT_CHANNEL, KEY_CHANNEL],
    applicationName: 'timing-listen',
    logger,
    onNotification(msg) {
      if (msg.channel === PUNCH_CHANNEL) hub.notify(Number(msg.payload));
      else if (msg.channel === EVENT_CHANNEL) eventCache.onPayload(msg.payload);
      else if (msg.channel === KEY_CHANNEL) hub.keysChanged();
    },
    onConnected() {
      // Event changes and key revocations announced while the session was down are lost too.
      eventCache.invalidate(null);
      hub.keysChanged();
      hub.wakeAll();
    },
  });
}
