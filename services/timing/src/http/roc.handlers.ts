/**
 * Handlers of the ROC operations (`getRocPunches`, `getRocPunchesWithKey`, `postRocPunches`; docs/roc.md):
 * the text answers here, everything else in punches/roc.service.ts.
 */
import type { Request, Response } from 'express';
import type { Handlers } from '@sports-timing/shared';
import type { operations } from '../generated/openapi';
import { countIngested, type TimingMetrics } from '../metrics';
import { readRocPunches, uploadRocPunch, type RocQuery } from '../punches/roc.service';
import type { HandlerDeps } from './deps';
import { DEFAULT_PUNCH_MAX_AGE_SECONDS, readCaching } from './read-caching';
import { callerOf, requireCaller, sendRead, sendText } from './respond';

/** Content type of every ROC answer. */
const ROC_CONTENT_TYPE = 'text/plain; charset=utf-8';

/** The answer of a stored (or re-sent) ROC punch. */
const ROC_STORED = 'OK\r\n';

/** The ROC handlers; uploads count stored punches in `timingMetrics`. */
export function rocHandlers(deps: HandlerDeps, timingMetrics: TimingMetrics): Handlers<operations> {
  const svc = {
    db: deps.database.db,
    pool: deps.database.pool,
    logger: deps.logger,
    historyPool: deps.historyPool,
    readCacheBytes: deps.readCacheBytes,
    dailyPunchQuota: deps.quotas.punchesPerDay,
  };
  const maxAgeSeconds = deps.punchMaxAgeSeconds ?? DEFAULT_PUNCH_MAX_AGE_SECONDS;
  // Both reads answer alike; the path key makes a caller, so the keyed one is always private.
  const read = async (req: Pick<Request, 'headers'>, res: Response, query: RocQuery) => {
    const caller = callerOf(res);
    const answer = await readRocPunches(svc, caller, query);
    sendRead(
      req,
      res,
      ROC_CONTENT_TYPE,
      answer.text,
      {},
      readCaching({ keyed: caller !== null, view: 'getRocPunches', version: answer.version, maxAgeSeconds }),
    );
  };
  return {
    async getRocPunches(req, res) {
      await read(req, res as Response, req.query);
    },
    async getRocPunchesWithKey(req, res) {
      await read(req, res as Response, req.query);
    },
    async postRocPunches(req, res) {
      const receivedAtUtc = Number(res.locals.receivedAtUtc ?? Date.now());
      const result = await uploadRocPunch(svc, requireCaller(res), req.body, receivedAtUtc);
      countIngested(timingMetrics, result.stored);
      sendText(res, ROC_CONTENT_TYPE, ROC_STORED);
    },
  };
}
