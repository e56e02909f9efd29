/**
 * Modem ownership (DESIGN §5): a modem belongs to the user that first uploads for it (or whose event
 * first names it). Another user's modem may not be uploaded for or put into an event, except by admins.
 */
import type { Kysely } from 'kysely';
import { ApiError } from '@sports-timing/shared';
import type { DB } from '../db/schema';
import type { components } from '../generated/openapi';
import type { Principal } from '../auth/principal';
import * as repo from './modems.repository';

/** API `Modem`. */
export type ModemDto = components['schemas']['Modem'];

function foreignModems(detail: string, serials: string[]): ApiError {
  return new ApiError(403, detail, { extensions: { modems: serials.sort() } });
}

/** The 403 for serials that belong to another user (`extensions.modems` lists them). */
export function foreignModemsError(foreign: string[]): ApiError {
  return foreignModems(`Modem${foreign.length > 1 ? 's' : ''} ${foreign.join(', ')} belong${foreign.length > 1 ? '' : 's'} to another user.`, [...foreign]);
}

/**
 * Makes sure every serial exists, registering missing ones to `ownerId`. Unless `allowForeign`, a serial
 * belonging to a user other than `ownerId` → 403 listing them; nothing is registered in that case (the
 * check runs before the registration, and again after it to catch a concurrent registration).
 *
 * Registration is an autocommitted statement of its own, so the upload transaction that follows does no
 * write before its punch-id allocation (see punches.repository.ts).
 */
export async function claimModems(db: Kysely<DB>, serials: readonly string[], ownerId: number, allowForeign: boolean): Promise<void> {
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
  await repo.registerModems(db, missing, ownerId);
  check(await repo.findModemOwners(db, missing));
}

/** The caller's modems; admins see all. */
export async function listModems(db: Kysely<DB>, caller: Principal): Promise<ModemDto[]> {
  const rows = await repo.listModems(db, caller.role === 'admin' ? null : caller.userId);
  return rows.map((r) => ({ serial: r.serial, user: r.user_name, createdAt: r.created_at.toISOString() }));
}
