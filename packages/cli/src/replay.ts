/**
 * `punches replay FILE`: uploads a punch file as the modems of a radio set-up would, for rehearsing a
 * live-results installation. Punches go out in time order at `speed` × real time (the first punch at once),
 * each modem uploading the punches due at a moment as one batch; progress goes to stderr.
 */
import { sleep } from '@sports-timing/shared/src/provider-kit';
import type { NewPunch, TimingClient } from '@sports-timing/timing-client';

/** Options of {@link replay}. */
export interface ReplayOptions {
  /** Event time runs this many times faster than real time (60: an hour in a minute). */
  speed: number;
  /**
   * Longest pause between consecutive punches in event ms (longer quiet stretches, such as test punches
   * hours before the start, are shortened to it); default: no limit.
   */
  maxGapMs?: number;
  signal?: AbortSignal;
  /** Progress line sink (stderr in the CLI). */
  progress?: (line: string) => void;
  /** Progress at most this often (ms); default 1000. */
  progressEveryMs?: number;
  /**
   * When given, each punch is sent with `time` = the moment it was due on this clock (a rehearsal happening now:
   * local wall-clock ms as the API counts them) instead of the file's time. A batch sent late (a busy machine)
   * keeps its punches' spacing, so two punches of one card at one control stay two punches.
   */
  timeAtSend?: () => number;
  /**
   * Called when the service acknowledged a batch with the punches it accepted (stored or already stored; the
   * rejected ones are left out) (`ackAtMs`: Unix ms when the answer arrived).
   */
  onAck?: (batch: readonly NewPunch[], ackAtMs: number) => void;
  /** Called for each punch the service rejected as invalid (it stores the rest of the batch), with its reason. */
  onRejected?: (punch: NewPunch, reason: string) => void;
}

/** Totals of a replay. */
export interface ReplayResult {
  sent: number;
  stored: number;
  duplicates: number;
  /** Punches the service refused as invalid (not stored; a re-send would be refused again). */
  rejected: number;
}

/** Local ms → `HH:MM:SS` of the event's wall clock. */
function clock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19);
}

/** Replays `punches` (sorted by time) through `client`; resolves with the totals (stops early on abort). */
export async function replay(client: TimingClient, punches: readonly NewPunch[], o: ReplayOptions): Promise<ReplayResult> {
  const result: ReplayResult = { sent: 0, stored: 0, duplicates: 0, rejected: 0 };
  if (punches.length === 0) return result;
  // Replay clock per punch (event ms from the first punch), with long gaps shortened to maxGapMs.
  const at: number[] = [0];
  for (let k = 1; k < punches.length; k++) at.push(at[k - 1] + Math.min(punches[k].time - punches[k - 1].time, o.maxGapMs ?? Infinity));
  const started = Date.now();
  let lastProgress = 0;
  let i = 0;
  while (i < punches.length && !o.signal?.aborted) {
    await sleep(started + at[i] / o.speed - Date.now(), o.signal);
    if (o.signal?.aborted) break;
    // Everything due by now, one batch per modem, modems in parallel.
    const clockNow = (Date.now() - started) * o.speed;
    const byModem = new Map<string, NewPunch[]>();
    const sentAt = o.timeAtSend?.();
    while (i < punches.length && at[i] <= clockNow) {
      // (clockNow - at[i]) / speed: wall ms since this punch was due.
      const p = sentAt === undefined ? punches[i] : { ...punches[i], time: Math.round(sentAt - (clockNow - at[i]) / o.speed) };
      i++;
      byModem.set(p.modem, [...(byModem.get(p.modem) ?? []), p]);
    }
    const results = await Promise.all(
      [...byModem.values()].map(async (batch) => {
        const r = await client.uploadPunches(batch);
        const refused = new Set(r.rejected.map((x) => x.index));
        o.onAck?.(
          batch.filter((_, k) => !refused.has(k)),
          Date.now(),
        );
        for (const x of r.rejected) o.onRejected?.(batch[x.index], x.reason);
        return r;
      }),
    );
    for (const r of results) {
      result.sent += r.received;
      result.stored += r.stored;
      result.duplicates += r.duplicates;
      result.rejected += r.rejected.length;
    }
    if (Date.now() - lastProgress >= (o.progressEveryMs ?? 1_000) || i === punches.length) {
      lastProgress = Date.now();
      const pct = ((100 * result.sent) / punches.length).toFixed(1);
      o.progress?.(
        `replay: ${result.sent}/${punches.length} (${pct}%) file time ${clock(punches[i - 1].time)}, stored ${result.stored}, duplicates ${result.duplicates}, rejected ${result.rejected}`,
      );
    }
  }
  return result;
}
