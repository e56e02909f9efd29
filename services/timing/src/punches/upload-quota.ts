/**
 * The daily upload quota's answer (`TIMING_QUOTA_PUNCHES_PER_DAY`; spec `postPunches` 429): the count itself is
 * charged by the upload's own statement (punch-upload.repository.ts `uploadPunchBatch`, `upload_punches`).
 */
import { ApiError } from '@sports-timing/shared';

/** Seconds until the next midnight UTC, when the daily upload quota starts again. */
function secondsToUtcMidnight(now = Date.now()): number {
  const next = new Date(now);
  next.setUTCHours(24, 0, 0, 0);
  return Math.max(1, Math.ceil((next.getTime() - now) / 1000));
}

/** The 429 of an upload beyond the caller's daily quota, with `Retry-After` until midnight UTC. */
export function dailyQuotaReached(quota: number): ApiError {
  return new ApiError(
    429,
    `Daily upload quota reached: a user stores at most ${quota} punches per UTC day; nothing of this batch was stored. Retry after midnight UTC or ask an administrator.`,
    {
      headers: { 'Retry-After': String(secondsToUtcMidnight()) },
    },
  );
}
