/**
 * Modem ownership (docs/decisions.md §5): a modem belongs to the user that first uploads for it. Another
 * user's modem may not be uploaded for, except by admins. An event may name any serial (naming claims
 * nothing); its reads cover the named modems registered to its owner.
 */
import type { Kysely } from 'kysely';
import { ApiError, validationError } from '@sports-timing/shared';
import type { DB } from '../db/schema';
import type { components } from '../generated/openapi';
import type { Principal } from '../auth/principal';
import type { ModemLimits } from './modem-spec';
import * as repo from './modems.repository';

/** API `Modem`. */
export type ModemDto = components['schemas']['Modem'];

/**
 * Called with the ids of the events whose covered modems a registration or release changed, after its commit
 * (the caller drops them from its app's event cache: events/event-cache.ts `EventCache.changed`; handed in because
 * events sit above modems).
 */
export type EventsChanged = (eventIds: number[]) => Promise<void>;

function foreignModems(detail: string, serials: string[]): ApiError {
  return new ApiError(403, detail, { extensions: { modems: serials.sort() } });
}

/**
 * The 403 of an upload for serials the caller may not use (another user's; `extensions.modems` lists them,
 * the caller's own input). It says no more than that — not that they are registered, nor to whom (reads hide
 * both).
 */
export function foreignModemsError(foreign: string[]): ApiError {
  return foreignModems(`Nothing stored: this key may not use modem${foreign.length > 1 ? 's' : ''} ${foreign.join(', ')}.`, [...foreign]);
}

/**
 * Makes sure every serial exists, registering missing ones to `ownerId`. Unless `allowForeign` (admins), a
 * serial belonging to a user other than `ownerId` → 403 listing them; more than `maxNew` missing serials, or
 * more than `limits.maxModemsPerUser` (the app's spec, modem-spec.ts) modems for the owner afterwards → 400
 * naming the limit. Nothing is
 * registered in those cases (the checks run before the registration, and the ownership check again after it
 * to catch a concurrent registration).
 *
 * Registration is an autocommitted statement of its own, so the upload transaction that follows does no
 * write before its punch-id allocation (see punches.repository.ts). `changed` gets the events naming a newly
 * registered modem before this returns, so an event of the owner covers it from its first punch on
 * (events.repository.ts `CoveredEventRow`).
 */
export async function claimModems(
  db: Kysely<DB>,
  limits: ModemLimits,
  serials: readonly string[],
  ownerId: number,
  allowForeign: boolean,
  maxNew: number,
  changed: EventsChanged,
): Promise<void> {
  const maxPerUser = limits.maxModemsPerUser;
  const unique = [...new Set(serials)];
  if (unique.length === 0) return;
  const check = (owners: { serial: string; user_id: number }[]) => {
    if (allowForeign) return;
    const foreign = owners.filter((o) => o.user_id !== ownerId).map((o) => o.serial);
    if (foreign.length > 0) throw foreignModemsError(foreign);
  };
  const owners = await repo.findModemOwners(db, unique);
  check(owners);
  if (owners.length === unique.length) return;
  const known = new Set(owners.map((o) => o.serial));
  const missing = unique.filter((s) => !known.has(s));
  if (!allowForeign && missing.length > maxNew) {
    throw validationError(
      { modem: [`one upload may register at most ${maxNew} new modems (this one names ${missing.length})`] },
      `Too many new modems in one upload (at most ${maxNew}).`,
    );
  }
  const { registered, held, fresh } = await registerModems(db, missing, ownerId, allowForeign ? null : maxPerUser);
  if (fresh.length > 0) await changed(await repo.eventsNaming(db, fresh));
  if (!registered) {
    throw validationError(
      { modem: [`a user holds at most ${maxPerUser} modems (${held} registered, ${missing.length} new)`] },
      `Modem limit reached (at most ${maxPerUser} per user).`,
    );
  }
  check(await repo.findModemOwners(db, missing));
}

/**
 * Registers the serials to `userId` where not registered yet (existing ones keep their user), unless the
 * user would then hold more than `maxPerUser` modems: then nothing is registered and the user's current
 * count is returned. `fresh`: the serials this call registered. The count and the insert run in one
 * transaction under the per-user cap lock. Commits on its own: callers on the upload path rely on it
 * committing before the punch statement runs.
 */
async function registerModems(
  db: Kysely<DB>,
  serials: readonly string[],
  userId: number,
  maxPerUser: number | null,
): Promise<{ registered: boolean; held: number; fresh: string[] }> {
  if (serials.length === 0) return { registered: true, held: 0, fresh: [] };
  return db.transaction().execute(async (trx) => {
    let held = 0;
    if (maxPerUser !== null) {
      await repo.lockModemCap(trx, userId);
      const counts = await repo.countModemsForCap(trx, userId, serials);
      held = counts.held;
      if (held + counts.fresh > maxPerUser) return { registered: false, held, fresh: [] };
    }
    return { registered: true, held, fresh: await repo.insertModems(trx, serials, userId) };
  });
}

/**
 * Releases a modem (admin): its registration and event memberships go, and `changed` gets the events that
 * named it; 404 when the serial is unknown.
 */
export async function releaseModem(db: Kysely<DB>, serial: string, changed: EventsChanged): Promise<void> {
  const events = await db.transaction().execute((trx) => repo.deleteModemRows(trx, serial));
  if (events === null) throw new ApiError(404, `No modem ${serial}.`);
  await changed(events);
}

/** The caller's modems; admins see all. */
export async function listModems(db: Kysely<DB>, caller: Principal): Promise<ModemDto[]> {
  const rows = await repo.listModems(db, caller.role === 'admin' ? null : caller.userId);
  return rows.map((r) => ({ serial: r.serial, user: r.user_name, createdAt: r.created_at.toISOString() }));
}
