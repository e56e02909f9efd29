/**
 * The ROC protocol beside the SPORTident Center API (docs/roc.md): reads and radio-unit uploads through the
 * same store and the same rules as every other read and upload. Nothing here touches SQL or the polling
 * rule itself: a ROC read is `readPunches` by event (access, window, the gap-free visible head) rendered as
 * ROC lines, and a ROC upload is `uploadPunches` of one punch (modem ownership, idempotent re-sends, NOTIFY).
 */
import { validationError } from '@sports-timing/shared';
import type { Principal } from '../auth/principal';
import { cardNumberProblem } from './punches.csv';
import { readPunches, uploadPunches, type PunchDeps, type UploadResult } from './punches.service';
import { punchOfRocForm, rocLowerBound, rocPunchLines, type RocPunchForm } from './roc-format';

/** Query of a ROC read after spec validation (`getRocPunches`): `lastId` coerced to a number. */
export interface RocQuery {
  unitId: string;
  lastId: number;
  date?: string;
  time?: string;
}

/**
 * The ROC text of event `unitId`'s punches after `lastId` (at most 1000, ascending id, each line
 * `punchId;controlCode;cardNumber;YYYY-MM-DD HH:MM:SS` + CRLF), from `date`/`time` on (local wall clock,
 * inclusive) when given. Access, the event window and the polling guarantee are those of `readPunches` by
 * `eventId` (404 for an unknown event or a private one the caller may not read); 400 for `time` without `date`.
 */
export async function readRocPunches(deps: PunchDeps, caller: Principal | null, q: RocQuery): Promise<string> {
  const after = rocLowerBound(q.date, q.time);
  const page = await readPunches(deps, caller, { eventId: q.unitId, afterId: q.lastId, after }, 'csv');
  return rocPunchLines(page.body.toString());
}

/**
 * Stores the punch of a radio unit's post (`postRocPunches`) for the caller: the unit (`macaddr`) is a modem,
 * registered to the caller on its first upload and 403 when another user's; a re-sent punch is stored once.
 * 400 keyed by form field for an invalid punch (`punchOfRocForm`, the card's range as `sinumber1`).
 * `receivedAtUtc` (UTC ms) becomes the punch's `receptionTimeUtc`.
 */
export async function uploadRocPunch(deps: PunchDeps, caller: Principal, form: RocPunchForm, receivedAtUtc: number): Promise<UploadResult> {
  const punch = punchOfRocForm(form);
  const problem = cardNumberProblem(punch.card);
  if (problem !== undefined) throw validationError({ sinumber1: [problem] }, 'The punch was not stored.');
  return uploadPunches(deps, caller, [punch], receivedAtUtc);
}
