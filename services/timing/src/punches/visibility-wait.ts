/**
 * What the visible punch head waits on (docs/decisions.md §5, "Own writers' horizon"), read for the
 * `punch_visibility_wait_seconds` gauge and the `punchVisibility` detail of `/readyz` (spec `Readiness`):
 * one reading serves both and is reused for {@link VISIBILITY_WAIT_REUSE_MS}, so scrapes and probes from many
 * places cost one query per second.
 */
import type pg from 'pg';
import { readVisibilityWait, type VisibilityWait } from './punch-visibility.repository';

/** How long a reading answers further callers (ms). */
const VISIBILITY_WAIT_REUSE_MS = 1_000;

/** A reader of {@link VisibilityWait} on `pool`, coalescing concurrent calls and reusing a reading for a second; rejects with the driver's error. */
export function visibilityWaitReader(pool: pg.Pool): () => Promise<VisibilityWait> {
  let last: { wait: VisibilityWait; at: number } | undefined;
  let inFlight: Promise<VisibilityWait> | undefined;
  return () => {
    if (last && Date.now() - last.at < VISIBILITY_WAIT_REUSE_MS) return Promise.resolve(last.wait);
    inFlight ??= readVisibilityWait(pool).then(
      (wait) => {
        last = { wait, at: Date.now() };
        inFlight = undefined;
        return wait;
      },
      (err: unknown) => {
        inFlight = undefined;
        throw err;
      },
    );
    return inFlight;
  };
}
