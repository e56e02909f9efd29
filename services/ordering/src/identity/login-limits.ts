/**
 * Limits of password attempts (`issueToken`; `info.description` "Authentication and roles"; docs/decisions.md "Login
 * throttling"), shared by the token endpoint and the current-password check of `users/update-profile`.
 * Following OWASP's authentication cheat sheet, guessing is slowed per account *and source* instead of
 * locking the account for everyone, so an attacker cannot keep its owner out:
 * - per account and client IP address: `maxFailuresPerAccount` attempts free, then growing delays (1 s,
 *   2 s, 4 s, … at most 15 minutes) between attempts, each answered 429 with `Retry-After` before any
 *   password work (1-hour window);
 * - per client IP address: `maxFailuresPerIp` failures an hour across accounts (the guesser trying many
 *   accounts from one address);
 * - per account across all sources: after `maxFailuresPerAccountAllSources` failures in an hour (a guesser
 *   with many addresses) every source gets the delays after its first attempt. A source that has not failed
 *   on the account — its owner elsewhere — is still let try.
 * A successful attempt clears the pair's failures and delay and gives its IP attempt back (one known account
 * cannot reset an IP's budget beyond its own attempt).
 * Counters live in Redis when `REDIS_URL` is set, with an in-memory insurance limiter while Redis is away.
 */
import type { Redis } from 'ioredis';
import { ApiError, createLimiter, createRedis, RateLimiterRes, retryAfterSeconds, type RateLimiterAbstract } from '@sports-timing/shared';

// Kept here for existing imports; the implementations live in the shared rate-limit module.
export { createLimiter, createRedis };

/** Longest delay between attempts of one account from one source, in seconds. */
const MAX_DELAY_SECONDS = 900;
/** Window of the per-pair and account-wide counters, in seconds. */
const HOUR = 3600;
/** A budget no window reaches: limiters used as counters (their `consumedPoints`), never as limits. */
const COUNTER_POINTS = 1_000_000_000;

/** Limits of {@link LoginLimiter}. */
export interface LoginLimits {
  /** Attempts per account and source before the delays start (`LOGIN_MAX_FAILURES_PER_ACCOUNT`). */
  maxFailuresPerAccount: number;
  /** Failures per IP address within `ipWindowSeconds` (`LOGIN_MAX_FAILURES_PER_IP`). */
  maxFailuresPerIp: number;
  /** Failures of one account from all sources in an hour before every source is delayed after one attempt. */
  maxFailuresPerAccountAllSources: number;
  ipWindowSeconds?: number;
  /** Shared counters; in memory when undefined. */
  redis?: Redis;
  /** Counter key prefix (default `ordering`; `RATE_LIMIT_KEY_PREFIX`). */
  prefix?: string;
}

/**
 * One reserved password attempt (see {@link LoginLimiter.reserve}): settle it exactly once, with
 * `succeeded` (the pair's failures and delay are cleared and the IP's attempt given back), `failed` (the
 * attempt stays counted and the next one from the source waits) or `release` (the password was never
 * checked, e.g. hashing was busy: everything is given back).
 */
export interface LoginAttempt {
  succeeded(): Promise<void>;
  failed(): void;
  release(): Promise<void>;
}

/** Delay in seconds after the `beyond`-th attempt past the free ones (1 → 1 s, 2 → 2 s, 3 → 4 s, …). */
function delaySeconds(beyond: number): number {
  return Math.min(MAX_DELAY_SECONDS, 2 ** Math.max(0, beyond - 1));
}

/**
 * Counts password attempts per account and source, per source and per account, and refuses attempts as the
 * module comment says. Atomic: {@link reserve} counts the attempt (one Redis INCR per counter, or the
 * in-memory equivalent) before any password is hashed, and from the last free attempt on it also takes the
 * pair's *gate* (a limiter of one point), which stays held until the attempt is settled and then for the
 * delay: N parallel attempts can never get past a check made before the first failure is recorded.
 */
export class LoginLimiter {
  private readonly byPair: RateLimiterAbstract;
  private readonly gate: RateLimiterAbstract;
  private readonly byIp: RateLimiterAbstract;
  private readonly byAccount: RateLimiterAbstract;

  constructor(private readonly limits: LoginLimits) {
    const prefix = limits.prefix ?? 'ordering';
    this.byPair = createLimiter(limits.redis, { keyPrefix: `${prefix}:login:pair`, points: COUNTER_POINTS, duration: HOUR });
    this.gate = createLimiter(limits.redis, { keyPrefix: `${prefix}:login:gate`, points: 1, duration: MAX_DELAY_SECONDS });
    this.byIp = createLimiter(limits.redis, { keyPrefix: `${prefix}:login:ip`, points: limits.maxFailuresPerIp, duration: limits.ipWindowSeconds ?? HOUR });
    this.byAccount = createLimiter(limits.redis, { keyPrefix: `${prefix}:login:account`, points: COUNTER_POINTS, duration: HOUR });
  }

  /**
   * Reserves one attempt of `account` (a stable key of the account, see {@link accountKeyOf}) from `ip`.
   * Throws ApiError 429 with `Retry-After` (seconds) when the source's budget is spent or the pair must
   * wait; nothing stays reserved then.
   */
  async reserve(account: string, ip: string): Promise<LoginAttempt> {
    const key = account.trim().toLowerCase();
    const pair = `${key}|${ip}`;
    await this.byIp.consume(ip).catch(tooMany);
    const giveBack = () => Promise.all([this.byIp.reward(ip).catch(() => undefined), this.byPair.reward(pair).catch(() => undefined)]);
    let n: number;
    let gated: boolean;
    let free: number;
    try {
      n = (await this.byPair.consume(pair)).consumedPoints;
      const accountFailures = (await this.byAccount.get(key))?.consumedPoints ?? 0;
      free = accountFailures >= this.limits.maxFailuresPerAccountAllSources ? 1 : this.limits.maxFailuresPerAccount;
      gated = n >= free;
      if (gated) await this.gate.consume(pair);
    } catch (err) {
      await giveBack();
      return tooMany(err);
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
        await Promise.all([
          this.byPair.delete(pair).catch(() => undefined),
          this.gate.delete(pair).catch(() => undefined),
          this.byIp.reward(ip).catch(() => undefined),
        ]);
      },
      failed: () => {
        if (!once()) return;
        void this.byAccount.penalty(key).catch(() => undefined);
        // The gate (taken at the last free attempt and after) now holds for the delay; before that, the next
        // attempts are free.
        if (gated) void this.gate.block(pair, delaySeconds(Math.max(1, n - free + 1))).catch(() => undefined);
      },
      release: async () => {
        if (!once()) return;
        await Promise.all([giveBack(), gated ? this.gate.delete(pair).catch(() => undefined) : undefined]);
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
  if (err instanceof RateLimiterRes)
    throw new ApiError(429, 'Too many failed login attempts; retry later.', { headers: { 'Retry-After': retryAfterSeconds(err.msBeforeNext) } });
  throw err;
}
