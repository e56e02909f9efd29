/**
 * Login rate limits of the token endpoint (ordering spec §4.1, issue 9 "rate limits shared by all
 * instances"): failed logins are counted per account (user name or client id, lower case; 15-minute window)
 * and per client IP address (1-hour window). While either counter is at its limit the endpoint answers 429
 * with `Retry-After` before doing any password work. A successful login clears the account counter (not the
 * IP counter, so one known account cannot be used to reset an IP's guessing budget).
 * Counters live in Redis when `REDIS_URL` is set, with an in-memory insurance limiter while Redis is away.
 */
import type { Redis } from 'ioredis';
import { ApiError, createLimiter, createRedis, RateLimiterRes, retryAfterSeconds, type RateLimiterAbstract } from '@sports-timing/shared';

// Kept here for existing imports; the implementations live in the shared rate-limit module.
export { createLimiter, createRedis };

/** Limits of {@link LoginLimiter}. */
export interface LoginLimits {
  /** Failures per account within `accountWindowSeconds`. */
  maxFailuresPerAccount: number;
  /** Failures per IP address within `ipWindowSeconds`. */
  maxFailuresPerIp: number;
  accountWindowSeconds?: number;
  ipWindowSeconds?: number;
  /** Shared counters; in memory when undefined. */
  redis?: Redis;
  /** Counter key prefix (default `ordering`; `RATE_LIMIT_KEY_PREFIX`). */
  prefix?: string;
}

/** Counts failed logins and refuses attempts over the limits. */
export class LoginLimiter {
  private readonly byAccount: RateLimiterAbstract;
  private readonly byIp: RateLimiterAbstract;

  constructor(private readonly limits: LoginLimits) {
    this.byAccount = createLimiter(limits.redis, { keyPrefix: `${limits.prefix ?? 'ordering'}:login:account`, points: limits.maxFailuresPerAccount, duration: limits.accountWindowSeconds ?? 900 });
    this.byIp = createLimiter(limits.redis, { keyPrefix: `${limits.prefix ?? 'ordering'}:login:ip`, points: limits.maxFailuresPerIp, duration: limits.ipWindowSeconds ?? 3600 });
  }

  /** Throws ApiError 429 (with `Retry-After`, seconds) when the account or the IP address is at its limit. */
  async check(account: string, ip: string): Promise<void> {
    const [a, i] = await Promise.all([this.byAccount.get(accountKey(account)), this.byIp.get(ip)]);
    const waits: number[] = [];
    if (a && a.consumedPoints >= this.limits.maxFailuresPerAccount) waits.push(a.msBeforeNext);
    if (i && i.consumedPoints >= this.limits.maxFailuresPerIp) waits.push(i.msBeforeNext);
    if (waits.length === 0) return;
    throw new ApiError(429, 'Too many failed login attempts; retry later.', { headers: { 'Retry-After': retryAfterSeconds(Math.max(...waits)) } });
  }

  /** Records one failed attempt for the account and the IP address. */
  async fail(account: string, ip: string): Promise<void> {
    // consume() rejects with a RateLimiterRes once over the limit: the failure is counted all the same.
    await Promise.all([this.byAccount.consume(accountKey(account)).catch(ignoreLimit), this.byIp.consume(ip).catch(ignoreLimit)]);
  }

  /** Clears the account's failures after a successful login. */
  async succeed(account: string): Promise<void> {
    await this.byAccount.delete(accountKey(account)).catch(() => undefined);
  }
}

function accountKey(account: string): string {
  return account.trim().toLowerCase();
}

function ignoreLimit(err: unknown): void {
  if (err instanceof RateLimiterRes) return;
  throw err;
}
