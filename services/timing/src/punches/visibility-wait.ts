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

/** Readings of {@link VisibilityWait} on one pool. */
export interface VisibilityWaitReader {
  /** A reading at most a second old (concurrent calls share one query); rejects with the driver's error. */
  read(): Promise<VisibilityWait>;
  /**
   * The last reading at once, undefined before the first one ended; starts a new reading in the background
   * when it is older than a second. For `/readyz`, which must answer even while every pooled connection is busy.
   */
  recent(): VisibilityWait | undefined;
}

/** A {@link VisibilityWaitReader} on `pool`. */
export function visibilityWaitReader(pool: pg.Pool): VisibilityWaitReader {
  let last: { wait: VisibilityWait; at: number } | undefined;
  let inFlight: Promise<VisibilityWait> | undefined;
  const read = (): Promise<VisibilityWait> => {
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
  return {
    read,
    recent() {
      read().catch(() => undefined);
      return last?.wait;
    },
  };
}
