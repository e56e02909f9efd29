/**
 * Limits of password attempts (ordering spec §4.1, "Authentication and roles"), shared by the token
 * endpoint and the current-password check of `users/update-profile`: attempts are counted per account
 * (the user whatever alias names it, or the client id; 15-minute window) and per client IP address (1-hour
 * window). Over either limit the answer is 429 with `Retry-After`, before any password work. A successful
 * attempt clears the account's failures and gives its IP attempt back (one known account cannot reset an
 * IP's budget beyond its own attempt).
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

/**
 * One reserved password attempt (see {@link LoginLimiter.reserve}): settle it exactly once, with
 * `succeeded` (the account's failures are cleared and the IP's attempt given back), `failed` (the attempt
 * stays counted) or `release` (the password was never checked, e.g. hashing was busy: both are given back).
 */
export interface LoginAttempt {
  succeeded(): Promise<void>;
  failed(): void;
  release(): Promise<void>;
}

/**
 * Counts password attempts per account and per IP address and refuses attempts over the limits. The
 * limit is atomic: {@link reserve} takes one attempt from both counters (one Redis INCR each, or the
 * in-memory equivalent) before any password is hashed, so N parallel attempts can never all pass a check
 * made before the first failure is recorded.
 */
export class LoginLimiter {
  private readonly byAccount: RateLimiterAbstract;
  private readonly byIp: RateLimiterAbstract;

  constructor(limits: LoginLimits) {
    this.byAccount = createLimiter(limits.redis, { keyPrefix: `${limits.prefix ?? 'ordering'}:login:account`, points: limits.maxFailuresPerAccount, duration: limits.accountWindowSeconds ?? 900 });
    this.byIp = createLimiter(limits.redis, { keyPrefix: `${limits.prefix ?? 'ordering'}:login:ip`, points: limits.maxFailuresPerIp, duration: limits.ipWindowSeconds ?? 3600 });
  }

  /**
   * Reserves one attempt of `account` (a stable key of the account, see {@link accountKeyOf}) from `ip`.
   * Throws ApiError 429 with `Retry-After` (seconds) when either budget is spent; nothing stays reserved then.
   */
  async reserve(account: string, ip: string): Promise<LoginAttempt> {
    const key = account.trim().toLowerCase();
    await this.byIp.consume(ip).catch(tooMany);
    try {
      await this.byAccount.consume(key);
    } catch (err) {
      await this.byIp.reward(ip).catch(() => undefined);
      tooMany(err);
    }
    let settled = false;
    const once = () => {
      if (settled) return false;
      settled = true;
      return true;
    };
    return {
      succeeded: async () => {
        if (!once()) return;
        await Promise.all([this.byAccount.delete(key).catch(() => undefined), this.byIp.reward(ip).catch(() => undefined)]);
      },
      failed: () => void once(),
      release: async () => {
        if (!once()) return;
        await Promise.all([this.byAccount.reward(key).catch(() => undefined), this.byIp.reward(ip).catch(() => undefined)]);
      },
    };
  }
}

/**
 * The counter key of a login: the user's id when the login (user name or e-mail address, any case)
 * designates a user, so that every alias shares one budget; else the login itself, lower case.
 */
export function accountKeyOf(userId: number | undefined, login: string): string {
  return userId !== undefined ? `user:${userId}` : `login:${login.trim().toLowerCase()}`;
}

function tooMany(err: unknown): never {
  if (err instanceof RateLimiterRes) throw new ApiError(429, 'Too many failed login attempts; retry later.', { headers: { 'Retry-After': retryAfterSeconds(err.msBeforeNext) } });
  throw err;
}
