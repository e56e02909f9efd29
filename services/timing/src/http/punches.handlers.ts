/**
 * Handlers of the punch operations (tag `punches`): content negotiation and headers here, everything
 * else in punches.service.ts.
 */
import { ApiError, preferredType, specFilled, type Handlers, type OpenApiDocument } from '@sports-timing/shared';
import type { operations } from '../generated/openapi';
import { clientGone, holdLongPoll, keyGuard } from '../live/live.service';
import { punchCsvReader, readPunches, readSimpleEventPunches, uploadPunches } from '../punches/punches.service';
import { countIngested } from '../metrics';
import { isKeyActive } from '../users/users.service';
import { compileJsonPunchCheck } from '../punches/punches.csv';
import type { HandlerDeps } from './deps';
import { DEFAULT_PUNCH_MAX_AGE_SECONDS, readCaching } from './read-caching';
import { callerOf, liveClientOf, requireCaller, sendRead } from './respond';

/** Response content types of punch reads by format. */
export const PUNCH_CONTENT_TYPES = { json: 'application/json; charset=utf-8', csv: 'text/csv; charset=utf-8' } as const;

/** The response format an `Accept` header asks for among JSON and CSV (no header or a wildcard: JSON); 406 otherwise. */
function punchFormat(req: Parameters<typeof preferredType>[0]): 'json' | 'csv' {
  // q-values are honoured, other parameters ignored.
  const accepted = preferredType(req, ['application/json', 'text/csv']);
  if (!accepted) throw new ApiError(406, 'Acceptable formats: application/json, text/csv.');
  return accepted === 'text/csv' ? 'csv' : 'json';
}

/**
 * `getPunches` (with the `wait` long-poll on the app's hub), `getPublicEventPunches` (the Center's simple
 * format), `postPunches` (counting stored punches in the app's timing metrics; CSV bodies read by the rules of
 * `spec`, the app's loaded timing spec, compiled here once), all through the app's punch service.
 */
export function punchHandlers(deps: HandlerDeps, spec: OpenApiDocument): Handlers<operations> {
  const { punches: svc, live, timingMetrics } = deps;
  const maxAgeSeconds = deps.punchMaxAgeSeconds ?? DEFAULT_PUNCH_MAX_AGE_SECONDS;
  const punchesFromCsv = punchCsvReader(spec);
  const checkJsonPunches = compileJsonPunchCheck(spec);
  return {
    async getPunches(req, res) {
      const format = punchFormat(req);
      const caller = callerOf(res);
      const waitMs = specFilled(req.query.wait, 'getPunches wait') * 1000;
      const read = () => readPunches(svc, caller, req.query, format, { live: waitMs > 0 });
      const seen = live.current;
      let page = await read();
      if (page.total === 0 && waitMs > 0 && !live.isClosing) {
        const release = live.acquire(liveClientOf(req, res));
        const gone = clientGone(res);
        try {
          const keyActive = keyGuard(live, caller, (id) => isKeyActive(svc.db, id));
          page = await holdLongPoll(live, read, page, seen, waitMs, gone.signal, keyActive);
        } finally {
          release();
          gone.dispose();
        }
        if (gone.signal.aborted) return;
      }
      const caching = readCaching({ keyed: caller !== null, live: waitMs > 0, view: 'getPunches', version: page.version, maxAgeSeconds });
      sendRead(req, res, PUNCH_CONTENT_TYPES[format], page.body, { 'X-Total-Count': String(page.total) }, caching);
    },
    async getPublicEventPunches(req, res) {
      const format = punchFormat(req);
      const q = { eventId: req.params.eventId, afterId: req.query.afterId, limit: specFilled(req.query.limit, 'getPublicEventPunches limit') };
      const caller = callerOf(res);
      const page = await readSimpleEventPunches(svc, caller, q, format);
      const caching = readCaching({ keyed: caller !== null, view: `getPublicEventPunches|${String(q.limit)}`, version: page.version, maxAgeSeconds });
      sendRead(req, res, PUNCH_CONTENT_TYPES[format], page.body, { 'X-Total-Count': String(page.total) }, caching);
    },
    async postPunches(req, res) {
      const receivedAtUtc = Number(res.locals.receivedAtUtc ?? Date.now());
      const caller = requireCaller(res);
      // The validator checked the JSON body as an array only (`x-items-checked-alone`): its elements are
      // checked here, one by one.
      const batch = req.is('text/csv') ? punchesFromCsv(req.body as unknown as string) : checkJsonPunches(req.body);
      const result = await uploadPunches(svc, caller, batch.punches, receivedAtUtc, batch.rejected);
      countIngested(timingMetrics, result.stored);
      res.json(result);
    },
  };
}
