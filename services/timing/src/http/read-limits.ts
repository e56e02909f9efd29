/**
 * The rate limits of punch reads (timing spec "Limits"): per API key, and the per-address budgets of anonymous
 * reads that cost real work. Each call builds limiters with their own counters (in memory unless `redis` is
 * given): the composition root (composition.ts) builds them once per app.
 */
import type { Request, RequestHandler, Response } from 'express';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { clientIp, principalOf, rateLimits } from '@sports-timing/shared';
import type { Principal } from '../auth/principal';

/**
 * Per-key limit of key-bearing punch reads (`getPunches`, `getPunchStream`) per minute, and the per-address
 * budgets of anonymous ROC reads and whole downloads per minute ({@link anonymousReadBudgets}), counted in
 * `redis` when given (shared by all instances) else in memory; absent or 0 → no limit.
 */
export interface ReadRateLimits {
  keyReadsPerMinute: number;
  anonymousRocReadsPerMinute?: number;
  anonymousDownloadsPerMinute?: number;
  redis?: Redis;
  prefix?: string;
}

/** Rate limit of key-bearing punch reads, charged to the API key (anonymous public reads are not limited). */
export function keyReadLimits(limits: ReadRateLimits | undefined, logger: Logger): RequestHandler {
  const points = limits?.keyReadsPerMinute ?? 0;
  const key = (_req: Request, res: Response) => {
    const p = principalOf<Principal>(res);
    return p && p.keyId > 0 ? `key:${p.keyId}` : undefined;
  };
  const limit = (operationId: string) => ({ operationId, points, durationSeconds: 60, key, message: 'Too many reads with this key; retry later.' });
  return rateLimits([limit('getPunches'), limit('getPunchStream'), limit('getPublicEventPunches')], {
    redis: limits?.redis,
    prefix: limits?.prefix ?? 'timing',
    logger,
  });
}

/** Whether a read starts from the beginning: no `afterId` (or 0) and, for streams, no `Last-Event-ID`. */
function isWholeDownload(req: Request): boolean {
  const afterId = req.query.afterId;
  return (afterId === undefined || (typeof afterId === 'string' && /^0*$/.test(afterId))) && !req.get('Last-Event-ID');
}

/**
 * Budgets of anonymous reads that cost real work, charged to the client's address (`req.ip`, which honours
 * `TRUSTED_PROXIES`): ROC reads (`getRocPunches`, up to ten pages each) and whole downloads ({@link
 * isWholeDownload}) of `getPunches`, `getPublicEventPunches` and `getPunchStream`; timing spec "Limits". A
 * request with a key is charged to the key instead ({@link keyReadLimits}).
 */
export function anonymousReadBudgets(limits: ReadRateLimits | undefined, logger: Logger): RequestHandler {
  const anonymous = (res: Response) => principalOf<Principal>(res) === null;
  const roc = (req: Request, res: Response) => (anonymous(res) ? `ip:${clientIp(req)}` : undefined);
  const download = (req: Request, res: Response) => (anonymous(res) && isWholeDownload(req) ? `ip:${clientIp(req)}` : undefined);
  const points = limits?.anonymousDownloadsPerMinute ?? 0;
  const downloads = (operationId: string) => ({
    operationId,
    points,
    durationSeconds: 60,
    key: download,
    message: 'Too many whole downloads from this address; poll with afterId, or retry later.',
  });
  const budgets = [
    {
      operationId: 'getRocPunches',
      points: limits?.anonymousRocReadsPerMinute ?? 0,
      durationSeconds: 60,
      key: roc,
      message: 'Too many ROC reads from this address; retry later.',
    },
    downloads('getPunches'),
    downloads('getPublicEventPunches'),
    downloads('getPunchStream'),
  ];
  return rateLimits(budgets, { redis: limits?.redis, prefix: `${limits?.prefix ?? 'timing'}:anon`, logger });
}
