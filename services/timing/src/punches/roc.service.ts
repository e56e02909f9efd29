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
 * Most `readPunches` pages in one ROC answer (10 × 1000 punches). ROC readers expect the whole backlog in one
 * answer: fartOLa takes its first answer as the history it skips, and MeOS polls every 10 s by default, so
 * 1000 punches per answer would take minutes to catch up with a big event.
 */
const ROC_MAX_PAGES = 10;

/**
 * The ROC text of the punches of event `unitId` (or of the unit with that serial when it is not all digits,
 * `rocScope`) after `lastId` (at most {@link ROC_MAX_PAGES} × 1000, ascending id,
 * each line `punchId;controlCode;cardNumber;YYYY-MM-DD HH:MM:SS` + CRLF), from `date`/`time` on (local wall
 * clock, inclusive) when given. Pages of `readPunches` by `eventId`, each after the last id of the one before,
 * exactly as a client would poll them, so access, the event window and the polling guarantee are that read's
 * (404 for an unknown event or a private one the caller may not read); 400 for `time` without `date`.
 * `version`: the pages' versions (`PunchReadResult.version`) joined, so equal versions mean equal texts.
 */
export async function readRocPunches(deps: PunchDeps, caller: Principal | null, q: RocQuery): Promise<{ text: string; version: string }> {
  const after = rocLowerBound(q.date, q.time);
  let text = '';
  const versions: string[] = [];
  let afterId = q.lastId;
  for (let page = 0; page < ROC_MAX_PAGES; page++) {
    const read = await readPunches(deps, caller, { ...rocScope(q.unitId), afterId, after }, 'csv');
    const lines = rocPunchLines(read.body.toString());
    text += lines.text;
    versions.push(read.version);
    // `total` counts every punch after afterId: more than this page means another page is waiting.
    if (lines.count === 0 || read.total <= lines.count) break;
    afterId = lines.lastId;
  }
  return { text, version: versions.join(' ') };
}

/**
 * Stores the punch of a radio unit's post (`postRocPunches`) for the caller: the unit (`macaddr`) is a modem,
 * registered to the caller on its first upload and 403 when another user's; a re-sent punch is stored once.
 * 400 keyed by form field for an invalid punch (`punchOfRocForm`, the card's range as `sinumber1`).
 * `receivedAtUtc` (UTC ms) becomes the punch's `receptionTimeUtc`.
 */
export async function uploadRocPunch(
  deps: PunchDeps,
  caller: Principal,
  form: components['schemas']['RocPunchForm'],
  receivedAtUtc: number,
): Promise<UploadResult> {
  const punch = punchOfRocForm(form);
  const problem = cardNumberProblem(punch.card);
  if (problem !== undefined) throw validationError({ sinumber1: [problem] }, 'The punch was not stored.');
  return uploadPunches(deps, caller, [punch], receivedAtUtc);
}
