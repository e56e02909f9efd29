/**
 * The ROC protocol beside the SPORTident Center API (docs/roc.md): reads and radio-unit uploads through the
 * same store and the same rules as every other read and upload. Nothing here touches SQL or the polling
 * rule itself: a ROC read is the pages of `readPunches` by event (access, window, the gap-free visible head) rendered as
 * ROC lines, and a ROC upload is `uploadPunches` of one punch (modem ownership, idempotent re-sends, NOTIFY).
 */
import { validationError } from '@sports-timing/shared';
import type { Principal } from '../auth/principal';
import { cardNumberProblem } from './punches.csv';
import { uploadPunches, type PunchService, type PunchReadResult, type UploadResult } from './punches.service';
import { readRenderedPages } from './rendered-pages';
import type { components } from '../generated/openapi';
import { punchOfRocForm, rocLowerBound, rocPunchLines } from './roc-format';

/** Query of a ROC read after spec validation (`getRocPunches`): `lastId` coerced to a number. */
export interface RocQuery {
  unitId: string;
  lastId: number;
  date?: string;
  time?: string;
}

/** `unitId` as a `getPunches` filter: digits alone name an event, anything else one unit (modem serial). */
function rocScope(unitId: string): { eventId: string } | { modem: string } {
  return /^[0-9]+$/.test(unitId) ? { eventId: unitId } : { modem: unitId };
}

/**
 * The ROC text of the punches of event `unitId` (or of the unit with that serial when it is not all digits,
 * `rocScope`) after `lastId`: **every** readable one, ascending id, each line `punchId;controlCode;cardNumber;
 * YYYY-MM-DD HH:MM:SS` + CRLF, from `date`/`time` on (local wall clock, inclusive) when given. ROC readers take
 * the first answer as the whole history (fartOLa skips everything in it as before the race; docs/roc.md
 * "What readers do with an answer"), so no answer is cut. Access, the event window and the polling guarantee
 * are those of `readPunches` (404 for an unknown event or a private one the caller may not read); 400 for
 * `time` without `date`. The text is a shared answer (`readRenderedPages`): identical polls under the same
 * visible head are rendered once, `onRender` is called for each rendering.
 */
export async function readRocPunches(deps: PunchService, caller: Principal | null, q: RocQuery, onRender?: () => void): Promise<PunchReadResult> {
  const after = rocLowerBound(q.date, q.time);
  return readRenderedPages(deps, caller, { ...rocScope(q.unitId), afterId: q.lastId, after }, { name: 'roc', page: rocPunchLines, onRender });
}

/**
 * Stores the punch of a radio unit's post (`postRocPunches`) for the caller: the unit (`macaddr`) is a modem,
 * registered to the caller on its first upload and 403 when another user's; a re-sent punch is stored once.
 * 400 keyed by form field for an invalid punch (`punchOfRocForm`, the card's range as `sinumber1`).
 * `receivedAtUtc` (UTC ms) becomes the punch's `receptionTimeUtc`.
 */
export async function uploadRocPunch(
  deps: PunchService,
  caller: Principal,
  form: components['schemas']['RocPunchForm'],
  receivedAtUtc: number,
): Promise<UploadResult> {
  const punch = punchOfRocForm(form);
  const problem = cardNumberProblem(punch.card, deps.limits.maxCardNumber);
  if (problem !== undefined) throw validationError({ sinumber1: [problem] }, 'The punch was not stored.');
  return uploadPunches(deps, caller, [punch], receivedAtUtc);
}
