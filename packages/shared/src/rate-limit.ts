/**
 * Rate limits shared by all instances of a service (docs/decisions.md §7 scale-out): counters live in Redis
 * when `REDIS_URL` is configured, in memory otherwise (one instance). Built on rate-limiter-flexible.
 *
 * Redis outage policy — fail open to per-instance limits: every Redis limiter carries an in-memory
 * "insurance" limiter with the same budget that takes over while Redis is unreachable, so a Redis outage
 * neither blocks logins and orders (fail closed would turn a cache outage into a shop outage) nor removes
 * the limits (each instance then enforces the full budget on its own). Should even that fail, the request
 * passes and a warning is logged.
 */
import type { Request, RequestHandler, Response } from 'express';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError } from './errors';
import { operationOf, reachedHandler } from './openapi';

export { RateLimiterRes, type RateLimiterAbstract };

/** A Redis client for shared limits: no offline queue, so commands fail at once while Redis is away. */
export function createRedis(url: string): Redis {
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, commandTimeout: 1000 });
  // Connection errors are expected during an outage; the insurance limiter covers them (see module doc).
  redis.on('error', () => undefined);
  return redis;
}

/** Budget of one limiter: `points` per `duration` seconds, counters under `keyPrefix`. */
export interface LimiterOptions {
  keyPrefix: string;
  points: number;
  /** Window length in seconds. */
  duration: number;
}

/**
 * A limiter of `points` per `duration` seconds under `keyPrefix`: in Redis when a client is given (with an
 * in-memory insurance limiter used while Redis is unreachable), else in memory.
 */
export function createLimiter(redis: Redis | undefined, opts: LimiterOptions): RateLimiterAbstract {
  return redis ? new RateLimiterRedis({ ...opts, storeClient: redis, insuranceLimiter: new RateLimiterMemory(opts) }) : new RateLimiterMemory(opts);
}

/** `Retry-After` value (whole seconds, at least 1) for a wait in milliseconds. */
export function retryAfterSeconds(msBeforeNext: number): string {
  return String(Math.max(1, Math.ceil(msBeforeNext / 1000)));
}

/**
 * Consumes one point of `key`; throws ApiError 429 with `Retry-After` when the budget is spent. Store
 * failures beyond the insurance limiter are logged and let through (fail open, see module doc).
 */
export async function consumeOrThrow(limiter: RateLimiterAbstract, key: string, message: string, logger?: Logger): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (err) {
    if (err instanceof RateLimiterRes) throw new ApiError(429, message, { headers: { 'Retry-After': retryAfterSeconds(err.msBeforeNext) } });
    logger?.warn({ err }, 'rate-limit store failed; request let through');
  }
}

/**
 * Gives `key` its point of `limiter` back when the request ends as a 400 without reaching its handler: it was
 * refused by validation (a malformed body, NUL in a name, a lenient number) and did no work, so it costs the
 * caller nothing (RELIABILITY.md, "input rules"). Charged before the body is read, a request cannot know this
 * earlier.
 */
function refundIfRefusedByValidation(req: Request, res: Response, limiter: RateLimiterAbstract, key: string, logger?: Logger): void {
  res.once('finish', () => {
    if (res.statusCode !== 400 || reachedHandler(req)) return;
    limiter.reward(key, 1).catch((err: unknown) => logger?.warn({ err }, 'rate-limit refund failed'));
  });
}

/** The limit of one operation (by operationId). */
export interface OperationLimit {
  operationId: string;
  /** Requests per window per key; 0 disables the limit. */
  points: number;
  /** Window length in seconds. */
  durationSeconds: number;
  /** The counter a request is charged to (e.g. principal, client id or IP address); undefined → not limited. */
  key(req: Request, res: Response): string | undefined;
  /** 429 detail text. */
  message?: string;
}

/** Options of {@link rateLimits}. */
export interface RateLimitsOptions {
  /** Shared store; in memory when undefined. */
  redis?: Redis;
  /** Prefix of every counter key (e.g. `ordering`; tests use a unique one). */
  prefix: string;
  logger?: Logger;
}

/**
 * Middleware (run after access control, before body parsing) that charges each request of a limited
 * operation to its key and answers 429 with `Retry-After` once the budget is spent.
 */
export function rateLimits(limits: OperationLimit[], opts: RateLimitsOptions): RequestHandler {
  const byOperation = new Map<string, { limit: OperationLimit; limiter: RateLimiterAbstract }>();
  for (const limit of limits) {
    if (limit.points <= 0) continue;
    byOperation.set(limit.operationId, {
      limit,
      limiter: createLimiter(opts.redis, { keyPrefix: `${opts.prefix}:rl:${limit.operationId}`, points: limit.points, duration: limit.durationSeconds }),
    });
  }
  return async (req, res, next) => {
    const opId = operationOf(req)?.operationId;
    const entry = opId ? byOperation.get(opId) : undefined;
    const key = entry?.limit.key(req, res);
    if (!entry || key === undefined) return next();
    try {
      await consumeOrThrow(entry.limiter, key, entry.limit.message ?? 'Too many requests; retry later.', opts.logger);
      refundIfRefusedByValidation(req, res, entry.limiter, key, opts.logger);
      next();
    } catch (err) {
      next(err);
    }
  };
}

/** The caller's address as Express resolved it (honours `trust proxy`), for per-IP counters. */
export function clientIp(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}
