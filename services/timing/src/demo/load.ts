/**
 * Demo data on start (DEMO_DATA, default true): user `demo` and the public event "VeNotte 2020" with its
 * modems, window and 7,759 real punches, uploaded in time order through the normal upload service.
 *
 * Idempotent: the event is created last, so a start that finds it skips everything; a start interrupted
 * before that uploads again (re-sent punches are duplicates, stored once) and then creates the event.
 * A session advisory lock keeps two instances starting together from loading twice.
 */
import type { Logger } from 'pino';
import { withAdvisoryLock } from '@sports-timing/shared';
import { internalPrincipal } from '../auth/principal';
import { createEvent, type EventDeps } from '../events/events.service';
import { findEventIdByName } from '../events/events.repository';
import { uploadPunches, type PunchService } from '../punches/punches.service';
import { ensureUser } from '../users/users.service';
import { readVenottePunches, VENOTTE_FILE, VENOTTE_WINDOW } from './venotte';

/** Name of the demo event. @internal */
export const DEMO_EVENT_NAME = 'VeNotte 2020';
/** Owner of the demo event and its modems. */
const DEMO_USER = 'demo';
/** Punches per upload while loading (the service limit is 10,000). */
const BATCH = 1000;

/** Outcome of {@link loadDemoData}. */
export interface DemoLoadResult {
  eventId: number;
  /** False when the event already existed. */
  created: boolean;
  stored: number;
}

/**
 * Loads the demo event unless present, through the app's punch service (its notifier announces the punches)
 * and its event writes (which drop the app's cached copy).
 */
export async function loadDemoData(deps: { punches: PunchService; events: EventDeps }, logger: Logger, file = VENOTTE_FILE): Promise<DemoLoadResult> {
  const { db, pool } = deps.punches;
  return withAdvisoryLock(pool, 'timing:demo-data', async () => {
    const user = await ensureUser(db, DEMO_USER, 'user');
    const existing = await findEventIdByName(db, DEMO_EVENT_NAME, user.id);
    if (existing !== undefined) return { eventId: existing, created: false, stored: 0 };

    const caller = internalPrincipal(user.id, user.userName, 'user');
    const punches = readVenottePunches(file);
    let stored = 0;
    for (let i = 0; i < punches.length; i += BATCH) {
      stored += (await uploadPunches(deps.punches, caller, punches.slice(i, i + BATCH), Date.now())).stored;
    }
    const modems = [...new Set(punches.map((p) => p.modem))].sort();
    // The demo owner is not held to the event quota (it loads one event, once).
    const ev = await createEvent(
      deps.events,
      caller,
      { name: DEMO_EVENT_NAME, public: true, modems, from: VENOTTE_WINDOW.from, to: VENOTTE_WINDOW.to },
      Infinity,
    );
    logger.info({ eventId: ev.id, punches: punches.length, stored, modems: modems.length }, 'demo event VeNotte 2020 loaded');
    return { eventId: ev.id, created: true, stored };
  });
}
