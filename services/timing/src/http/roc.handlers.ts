/**
 * Handlers of the ROC operations (`getRocPunches`, `getRocPunchesWithKey`, `postRocPunches`; docs/roc.md):
 * the text answers here, everything else in punches/roc.service.ts.
 */
import type { Handlers } from '@sports-timing/shared';
import type { operations } from '../generated/openapi';
import { countIngested, type TimingMetrics } from '../metrics';
import { readRocPunches, uploadRocPunch } from '../punches/roc.service';
import type { HandlerDeps } from './deps';
import { sendSharedAnswer } from './encoded-body';
import { callerOf, requireCaller, sendText } from './respond';

/** Content type of every ROC answer. */
const ROC_CONTENT_TYPE = 'text/plain; charset=utf-8';

/** The answer of a stored (or re-sent) ROC punch. */
const ROC_STORED = 'OK\r\n';

/** The ROC handlers; uploads count stored punches in `timingMetrics`, reads the answers they render. */
export function rocHandlers(deps: HandlerDeps, timingMetrics: TimingMetrics): Handlers<operations> {
  const svc = {
    db: deps.database.db,
    pool: deps.database.pool,
    logger: deps.logger,
    historyPool: deps.historyPool,
    readCacheBytes: deps.readCacheBytes,
    dailyPunchQuota: deps.quotas.punchesPerDay,
    backlog: deps.backlog,
  };
  const rendered = () => timingMetrics.rocAnswersRendered.inc();
  return {
    async getRocPunches(req, res) {
      await sendSharedAnswer(req, res, ROC_CONTENT_TYPE, await readRocPunches(svc, callerOf(res), req.query, rendered));
    },
    async getRocPunchesWithKey(req, res) {
      await sendSharedAnswer(req, res, ROC_CONTENT_TYPE, await readRocPunches(svc, callerOf(res), req.query, rendered));
    },
    async postRocPunches(req, res) {
      const receivedAtUtc = Number(res.locals.receivedAtUtc ?? Date.now());
      const result = await uploadRocPunch(svc, requireCaller(res), req.body, receivedAtUtc);
      countIngested(timingMetrics, result.stored);
      sendText(res, ROC_CONTENT_TYPE, ROC_STORED);
    },
  };
}
