/**
 * The live status of an event (`getEventStatus`, specs/timing.yaml), read by the organiser's live page
 * (`/events/{id}/live`, live-page.ts): access as `getEvent`, counts by the read rules of `getPunches`.
 */
import type { Kysely } from 'kysely';
import type pg from 'pg';
import type { components } from '../generated/openapi';
import type { DB } from '../db/schema';
import type { Principal } from '../auth/principal';
import { findEvent } from './events.repository';
import { assertCanRead, noSuchEvent, toEventDto } from './events.service';
import { readEventStatus } from './event-status.repository';

/** API `EventStatus`. */
export type EventStatus = components['schemas']['EventStatus'];

/** Window of `lastMinute` (ms). */
const LAST_MINUTE_MS = 60_000;

/**
 * The status of event `id` for `caller` (404 for an unknown event and for one the caller may not read, alike): every modem of the event
 * gets a row, those without punches with zero punches and null times; `recent` newest punches. Counts cover the modems the event's
 * reads cover (`EventRow.covered`, docs/decisions.md §5): a named modem of another user shows as one without punches.
 */
export async function getEventStatus(deps: { db: Kysely<DB>; pool: pg.Pool }, caller: Principal | null, id: number, recent: number): Promise<EventStatus> {
  const row = await findEvent(deps.db, id);
  if (!row) throw noSuchEvent(id, caller);
  assertCanRead(caller, row);
  const serverTimeUtc = Date.now();
  const status = await readEventStatus(deps.pool, { modems: row.covered, timeFrom: row.from_ms, timeTo: row.to_ms }, serverTimeUtc - LAST_MINUTE_MS, recent);
  const bySerial = new Map(status.modems.map((m) => [m.serial, m]));
  return {
    event: toEventDto(row),
    total: status.total,
    lastId: status.lastId,
    lastMinute: status.lastMinute,
    serverTimeUtc,
    modems: row.modems.map((serial) => bySerial.get(serial) ?? { serial, codes: [], punches: 0, lastPunchTime: null, lastUploadUtc: null }),
    perMinute: status.perMinute,
    recent: status.recent as EventStatus['recent'],
  };
}
