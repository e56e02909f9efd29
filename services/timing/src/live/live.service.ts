/**
 * Long-poll and Server-Sent Events delivery of punches (timing spec `getPunches` `wait` and
 * `getPunchStream`). Both are loops of the normal gap-free read (punches.service.ts `readPunches`) from the
 * client's own `afterId`, parked on the {@link LiveHub} between reads; see hub.ts for why that never skips
 * or repeats a punch.
 */
import type { Response } from 'express';
import type { PunchReadResult } from '../punches/punches.service';
import type { BacklogGate } from '../punches/backlog-gate';
import type { LiveHub } from './hub';
import { writeBounded, type SendBound } from './send-bound';

/** Interval of `: keep-alive` comments on an idle stream (ms). */
export const SSE_HEARTBEAT_MS = 15_000;

/** A read of the client's filter from `afterId` (exclusive). */
type ReadFrom = (afterId: number) => Promise<PunchReadResult>;

/**
 * Holds a long-poll: re-reads after each wake-up (and at least every `hub.safetyPollMs`) until the read
 * finds punches or `waitMs` has passed. `first` is the read already done with generation `seen` taken
 * before it. Returns the last read (empty on timeout, abort or shutdown).
 */
export async function holdLongPoll(
  hub: LiveHub,
  read: () => Promise<PunchReadResult>,
  first: PunchReadResult,
  seen: number,
  waitMs: number,
  signal: AbortSignal,
): Promise<PunchReadResult> {
  const deadline = Date.now() + waitMs;
  let page = first;
  let generation = seen;
  while (page.total === 0) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    const reason = await hub.wait(generation, Math.min(left, hub.safetyPollMs), signal);
    if (reason === 'aborted' || reason === 'closing') break;
    generation = hub.current;
    page = await read();
  }
  return page;
}

/** A punch as sent in an SSE `data:` line (the API `Punch`). */
interface StreamPunch {
  id: number;
}

/** Options of {@link runStream}. */
export interface StreamOptions {
  hub: LiveHub;
  /** JSON read of the client's filter from an `afterId`; throws ApiError when access or the event goes away. */
  read: ReadFrom;
  /** Last id the client has (Last-Event-ID, else `afterId`, else 0). */
  afterId: number;
  /** The first read (from `afterId`) and the generation taken before it. */
  first: PunchReadResult;
  seen: number;
  signal: AbortSignal;
  heartbeatMs?: number;
  /** The instance's pacing of backlog pages (every page after a full one is read through it). */
  backlog: BacklogGate;
  /** Send timeout: the stream is closed when its unsent bytes stay above the bound too long (send-bound.ts). */
  bound: SendBound;
  onError?: (err: unknown) => void;
}

/**
 * Runs an SSE stream on a response whose headers are sent: one `event: punch` per punch (`id:` its id,
 * `data:` its JSON), full pages back to back (each after the first through `backlog`), then waits for a wake-up;
 * `: keep-alive` comments keep idle connections open. Ends the response when the client goes away, the hub
 * closes, a read fails or the send timeout closed the connection (`bound`).
 */
export async function runStream(res: Response, o: StreamOptions): Promise<void> {
  const heartbeat = setInterval(() => {
    if (!o.signal.aborted) res.write(': keep-alive\n\n');
  }, o.heartbeatMs ?? SSE_HEARTBEAT_MS);
  let afterId = o.afterId;
  let page = o.first;
  let generation = o.seen;
  try {
    for (;;) {
      const punches = JSON.parse(page.body.toString()) as StreamPunch[];
      for (const p of punches) {
        if (!(await writeBounded(res, `id: ${p.id}\nevent: punch\ndata: ${JSON.stringify(p)}\n\n`, o.signal, o.bound))) return;
        afterId = p.id;
      }
      if (o.signal.aborted || o.hub.isClosing) return;
      // A full page means more may be waiting: read on at once, paced as a backlog.
      if (page.total <= punches.length) {
        const reason = await o.hub.wait(generation, o.hub.safetyPollMs, o.signal);
        if (reason === 'aborted' || reason === 'closing') return;
        generation = o.hub.current;
        page = await o.read(afterId);
      } else {
        generation = o.hub.current;
        page = await o.backlog.page(() => o.read(afterId));
      }
    }
  } catch (err) {
    o.onError?.(err);
  } finally {
    clearInterval(heartbeat);
    if (!res.writableEnded) res.end();
  }
}

/**
 * An AbortSignal that fires when the client closes the connection before the response ended (held
 * long-polls and streams stop waiting); `dispose()` detaches the listener.
 */
export function clientGone<T>(res: Response<T>): { signal: AbortSignal; dispose(): void } {
  const ac = new AbortController();
  const onClose = () => {
    if (!res.writableEnded) ac.abort();
  };
  res.on('close', onClose);
  return { signal: ac.signal, dispose: () => res.off('close', onClose) };
}
