/**
 * Long-poll and Server-Sent Events delivery of punches (timing spec `getPunches` `wait` and
 * `getPunchStream`). Both are loops of the normal gap-free read (punches.service.ts `readPunches`) from the
 * client's own `afterId`, parked on the {@link LiveHub} between reads; see hub.ts for why that never skips
 * or repeats a punch.
 */
import type { Response } from 'express';
import { normalizeError, problemBody } from '@sports-timing/shared';
import type { Principal } from '../auth/principal';
import type { PunchReadResult } from '../punches/punches.service';
import { unknownKey } from '../users/users.service';
import type { BacklogGate } from '../punches/backlog-gate';
import type { LiveHub } from './hub';
import { writeBounded, type SendBound } from './send-bound';

/** Interval of `: keep-alive` comments on an idle stream (ms). */
export const SSE_HEARTBEAT_MS = 15_000;

/** A read of the client's filter from `afterId` (exclusive). */
type ReadFrom = (afterId: number) => Promise<PunchReadResult>;

/**
 * Whether the key of a held live request is still active; true at once for anonymous callers and internal
 * ones (key id 0). With `delivery` (punches are about to be sent) the key is looked up (`isActive`, one
 * primary-key lookup) every time: the page was read after the revocation of a key it is checked after, so no
 * punch committed after a revocation reaches its key (timing spec, "Authentication": a revoked key stops
 * working immediately). Without (a wake-up), it is looked up only when the hub's revocation generation moved
 * since the last check (a revocation on any instance, live/listener.ts) or the last check is
 * `hub.safetyPollMs` old (a lost notification), so an idle stream or held long-poll ends as soon as its key is
 * revoked, at the cost of a lookup only when something may have changed.
 */
export type KeyGuard = (delivery?: boolean) => Promise<boolean>;

/** The {@link KeyGuard} of `caller`'s key on `hub`; `isActive` looks a key id up (users.service.ts `isKeyActive`). */
export function keyGuard(hub: LiveHub, caller: Principal | null, isActive: (keyId: number) => Promise<boolean>): KeyGuard {
  if (!caller || caller.keyId <= 0) return () => Promise.resolve(true);
  const keyId = caller.keyId;
  let checkedGen = hub.keyGeneration;
  let checkedAt = Date.now();
  let active = true;
  return async (delivery = false) => {
    if (!active) return false;
    if (!delivery && hub.keyGeneration === checkedGen && Date.now() - checkedAt < hub.safetyPollMs) return true;
    checkedGen = hub.keyGeneration;
    checkedAt = Date.now();
    active = await isActive(keyId);
    return active;
  };
}

/**
 * Holds a long-poll: re-reads after each wake-up (and at least every `hub.safetyPollMs`) until the read
 * finds punches or `waitMs` has passed. `first` is the read already done with generation `seen` taken
 * before it. Returns the last read (empty on timeout, abort or shutdown). Throws the 401 of a revoked key
 * when `keyActive` fails after a wake-up (the key was revoked while the request was held).
 */
export async function holdLongPoll(
  hub: LiveHub,
  read: () => Promise<PunchReadResult>,
  first: PunchReadResult,
  seen: number,
  waitMs: number,
  signal: AbortSignal,
  keyActive: KeyGuard,
): Promise<PunchReadResult> {
  const deadline = Date.now() + waitMs;
  let page = first;
  let generation = seen;
  while (page.total === 0) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    const reason = await hub.wait(generation, Math.min(left, hub.safetyPollMs), signal);
    if (reason === 'aborted' || reason === 'closing') break;
    if (!(await keyActive())) throw unknownKey();
    generation = hub.current;
    page = await read();
    if (page.total > 0 && !(await keyActive(true))) throw unknownKey();
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
  /** Re-check of the caller's key before each delivery ({@link keyGuard}); a revoked key ends the stream. */
  keyActive: KeyGuard;
  /** Most time (ms) one stream stays open (`TIMING_STREAM_MAX_SECONDS`); the client reconnects with `Last-Event-ID`. */
  maxLifetimeMs: number;
  heartbeatMs?: number;
  /** The instance's pacing of backlog pages (every page after a full one is read through it). */
  backlog: BacklogGate;
  /** Send timeout: the stream is closed when its unsent bytes stay above the bound too long (send-bound.ts). */
  bound: SendBound;
  onError?: (err: unknown) => void;
}

/** The `error` event that ends a stream whose key was revoked: the ProblemDetails of the 401 a request would get. */
function revokedEvent(): string {
  const problem = problemBody(normalizeError(unknownKey()));
  return `event: error\ndata: ${JSON.stringify(problem)}\n\n`;
}

/**
 * Runs an SSE stream on a response whose headers are sent: one `event: punch` per punch (`id:` its id,
 * `data:` its JSON), full pages back to back (each after the first through `backlog`), then waits for a wake-up;
 * `: keep-alive` comments keep idle connections open. Before each page is delivered the key is re-checked
 * (`keyActive`): when it was revoked the stream sends an `event: error` with the 401's ProblemDetails and ends.
 * Ends the response when the client goes away, the hub closes, a read fails, the send timeout closed the
 * connection (`bound`) or `maxLifetimeMs` has passed (after the page under way).
 */
export async function runStream(res: Response, o: StreamOptions): Promise<void> {
  const heartbeat = setInterval(() => {
    if (!o.signal.aborted) res.write(': keep-alive\n\n');
  }, o.heartbeatMs ?? SSE_HEARTBEAT_MS);
  const endAt = Date.now() + o.maxLifetimeMs;
  let afterId = o.afterId;
  let page = o.first;
  let generation = o.seen;
  try {
    for (;;) {
      const punches = JSON.parse(page.body.toString()) as StreamPunch[];
      if (!(await o.keyActive(punches.length > 0))) return void res.write(revokedEvent());
      for (const p of punches) {
        if (!(await writeBounded(res, `id: ${p.id}\nevent: punch\ndata: ${JSON.stringify(p)}\n\n`, o.signal, o.bound))) return;
        afterId = p.id;
      }
      if (o.signal.aborted || o.hub.isClosing) return;
      const left = endAt - Date.now();
      if (left <= 0) return;
      // A full page means more may be waiting: read on at once, paced as a backlog.
      if (page.total <= punches.length) {
        const reason = await o.hub.wait(generation, Math.min(o.hub.safetyPollMs, left), o.signal);
        if (reason === 'aborted' || reason === 'closing') return;
        if (!(await o.keyActive())) return void res.write(revokedEvent());
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
