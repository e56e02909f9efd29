/**
 * Handlers of the ROC operations (`getRocPunches`, `getRocPunchesWithKey`, `postRocPunches`; docs/roc.md):
 * the text answers here, everything else in punches/roc.service.ts.
 */
import type { Request, Response } from 'express';
import type { Handlers } from '@sports-timing/shared';
import type { operations } from '../generated/openapi';
import { countIngested } from '../metrics';
import { readRocPunches, uploadRocPunch, type RocQuery } from '../punches/roc.service';
import type { HandlerDeps } from './deps';
import { sendSharedAnswer } from './encoded-body';
import { DEFAULT_PUNCH_MAX_AGE_SECONDS, readCaching } from './read-caching';
import { callerOf, requireCaller, sendNotModified, sendText } from './respond';

/** Content type of every ROC answer. */
export const ROC_CONTENT_TYPE = 'text/plain; charset=utf-8';

/** The answer of a stored (or re-sent) ROC punch. */
const ROC_STORED = 'OK\r\n';

/**
 * The ROC handlers, through the app's punch service; uploads count stored punches in the app's timing metrics,
 * reads the answers they render.
 */
export function rocHandlers(deps: HandlerDeps): Handlers<operations> {
  const { punches: svc, timingMetrics } = deps;
  const maxAgeSeconds = deps.punchMaxAgeSeconds ?? DEFAULT_PUNCH_MAX_AGE_SECONDS;
  const rendered = () => timingMetrics.rocAnswersRendered.inc();
  // Both reads answer alike; the path key makes a caller, so the keyed one is always private.
  const read = async (req: Request, res: Response, query: RocQuery) => {
    const caller = callerOf(res);
    const answer = await readRocPunches(svc, caller, query, rendered);
    const caching = readCaching({ keyed: caller !== null, view: 'getRocPunches', version: answer.version, maxAgeSeconds });
    if (sendNotModified(req, res, caching)) return;
    await sendSharedAnswer(req, res, ROC_CONTENT_TYPE, answer, caching.headers);
  };
  return {
    async getRocPunches(req, res) {
      await read(req as unknown as Request, res as Response, req.query);
    },
    async getRocPunchesWithKey(req, res) {
      await read(req as unknown as Request, res as Response, req.query);
    },
    async postRocPunches(req, res) {
      const receivedAtUtc = Number(res.locals.receivedAtUtc ?? Date.now());
      const result = await uploadRocPunch(svc, requireCaller(res), req.body, receivedAtUtc);
      countIngested(timingMetrics, result.stored);
      sendText(res, ROC_CONTENT_TYPE, ROC_STORED);
    },
  };
}
