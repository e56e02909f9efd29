/**
 * Handler of `getPunchStream`: the punches of a filter as Server-Sent Events. Access, filters
 * and errors before the stream starts are those of `getPunches` (the first read runs before any header is
 * sent); the stream itself is live.service.ts `runStream`.
 */
import { ApiError, isHeadRequest, preferredType, type Handlers } from '@sports-timing/shared';
import type { operations } from '../generated/openapi';
import type { StreamFanout } from '../live/fanout';
import type { SendBound } from '../live/send-bound';
import type { BacklogGate } from '../punches/backlog-gate';
import { clientGone, keyGuard, runStream } from '../live/live.service';
import { readPunches } from '../punches/punches.service';
import { isKeyActive } from '../users/users.service';
import type { HandlerDeps } from './deps';
import { LIVE_CACHE_CONTROL } from './read-caching';
import { callerOf, liveClientOf } from './respond';

/** Default most lifetime of one stream (ms): `TIMING_STREAM_MAX_SECONDS`' default. */
const DEFAULT_STREAM_MAX_MS = 3_600_000;

/**
 * Options of {@link liveHandlers}; `heartbeatMs` shortens the keep-alive interval in tests, `maxLifetimeMs` bounds
 * how long one stream stays open (default one hour).
 */
export interface LiveHandlerOptions {
  heartbeatMs?: number;
  maxLifetimeMs?: number;
  /** The app's shared feeds of anonymous streams. */
  fanout: StreamFanout;
  /** The app's pacing of backlog pages. */
  backlog: BacklogGate;
  /** The send timeout of streams. */
  bound: SendBound;
}

/** The filter of an anonymous stream as a feed key: equal keys read the same punches (the caller is the same, anonymous). */
function feedKey(q: { modem?: string; eventId?: string; after?: number }): string {
  return JSON.stringify([q.eventId ?? null, q.modem ?? null, q.after ?? null]);
}

/**
 * `getPunchStream`. Anonymous streams (public filters) follow the shared feed of their filter and count toward
 * the instance's limit only; streams with a key run their own read loop under the per-client limit too
 * (docs/architecture.md "Stream fan-out").
 */
export function liveHandlers(deps: HandlerDeps, opts: LiveHandlerOptions): Handlers<operations> {
  const { punches: svc, live } = deps;
  return {
    async getPunchStream(req, res) {
      if (preferredType(req, ['text/event-stream']) !== 'text/event-stream') throw new ApiError(406, 'Acceptable format: text/event-stream.');
      const caller = callerOf(res);
      // Last-Event-ID (the browser's automatic resume) overrides afterId; the spec restricts it to digits.
      const lastEventId = req.get('Last-Event-ID');
      const afterId = lastEventId ? Math.min(Number(lastEventId), Number.MAX_SAFE_INTEGER) : (req.query.afterId ?? 0);
      // `live`: a stream reads the primary only, never the replica (punches.service.ts `readPunches`).
      const read = (from: number) => readPunches(svc, caller, { ...req.query, afterId: from }, 'json', { live: true });
      const seen = live.current;
      const first = await read(afterId);
      const shared = caller === null;
      const release = live.acquire(liveClientOf(req, res), { shared });
      const gone = clientGone(res);
      try {
        res.status(200);
        res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
        // A stream is an answer to a moment: no cache keeps or replays it (read-caching.ts).
        res.setHeader('Cache-Control', LIVE_CACHE_CONTROL);
        // Reverse proxies (nginx) would otherwise buffer the stream.
        res.setHeader('X-Accel-Buffering', 'no');
        res.flushHeaders();
        // HEAD: the stream's headers only (Node sends no body for HEAD); nothing to hold open.
        if (isHeadRequest(req)) return void res.end();
        res.write('retry: 1000\n\n');
        const onError = (err: unknown) =>
          deps.logger.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'punch stream ended by an error');
        if (shared) {
          await opts.fanout.follow(res, { key: feedKey(req.query), read, afterId, first, seen, signal: gone.signal }).catch(onError);
          if (!res.writableEnded) res.end();
          return;
        }
        await runStream(res, {
          hub: live,
          read,
          afterId,
          first,
          seen,
          signal: gone.signal,
          keyActive: keyGuard(live, caller, (id) => isKeyActive(svc.db, id)),
          maxLifetimeMs: opts.maxLifetimeMs ?? DEFAULT_STREAM_MAX_MS,
          heartbeatMs: opts.heartbeatMs,
          backlog: opts.backlog,
          bound: opts.bound,
          onError,
        });
      } finally {
        release();
        gone.dispose();
      }
    },
  };
}
