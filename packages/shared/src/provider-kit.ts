/**
 * The kit of the third-party clients (ERP, payment provider, mail relay; docs/architecture.md "Third-party
 * clients"): one error base with the HTTP status classification, one retry schedule with backoff and jitter,
 * one reading of `Retry-After`, and one retry loop. The rules are docs/decisions.md §6 (third parties):
 * 5xx, 429, timeouts and connection errors are worth repeating, other 4xx answers never are.
 */
import { setTimeout as delay } from 'node:timers/promises';

/**
 * Waits `ms` milliseconds (a negative wait counts as 0), or less when `signal` aborts: resolves either way and
 * never rejects, so a loop stopped by its signal simply checks `signal.aborted` after the wait.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return delay(Math.max(0, ms), undefined, { signal }).catch(() => undefined);
}

/** Kind of a third party's failure, as far as the HTTP status (or its absence) tells it. */
export type ProviderErrorCode =
  'unauthorized' | 'forbidden' | 'notFound' | 'conflict' | 'badRequest' | 'rateLimited' | 'server' | 'timeout' | 'network' | 'invalidResponse';

/** The codes worth repeating later (5xx, 429, no answer in time, connection failed). */
const RETRYABLE_CODES: ReadonlySet<string> = new Set<ProviderErrorCode>(['server', 'rateLimited', 'timeout', 'network']);

/** The code of a non-2xx HTTP status: 401, 403, 404, 409 and 429 by name, 5xx `server`, any other `badRequest`. */
export function providerCodeOf(status: number): ProviderErrorCode {
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'notFound';
  if (status === 409) return 'conflict';
  if (status === 429) return 'rateLimited';
  if (status >= 500) return 'server';
  return 'badRequest';
}

/** What a {@link ProviderError} is made of. */
export interface ProviderErrorInit<C extends string> {
  /** Who failed, the message's prefix (`Payment provider`, `ERP weclapp`). */
  provider: string;
  /** E.g. `DELETE Invoice/42`: method and path with ids, never a query (it may carry credentials). */
  operation: string;
  /** Status of the answer; null when none arrived. */
  status: number | null;
  code: C;
  /** The third party's own error text, already trimmed and free of credentials. */
  providerMessage?: string | null;
  /** Said instead of the status when no answer arrived (`no answer within 60000 ms after 4 attempt(s)`). */
  detail?: string;
  /** Default: whether `code` is one of the retryable codes (5xx, 429, timeout, connection). */
  retryable?: boolean;
  /** The whole message, for failures that are no HTTP answer (the mail relay's); default composed of the above. */
  message?: string;
}

/**
 * A failed third-party call. The message names provider, operation and status (or `detail`) and the
 * provider's own text — never a credential: callers pass neither headers nor queries into it.
 */
export class ProviderError<C extends string = ProviderErrorCode> extends Error {
  readonly operation: string;
  /** Status of the answer; null when none arrived. */
  readonly status: number | null;
  readonly code: C;
  /** Worth repeating later (e.g. from the outbox): 5xx, 429, timeout, connection, unless the client says otherwise. */
  readonly retryable: boolean;
  /** The provider's own error text (trimmed, credential-free), when it sent one. */
  readonly providerMessage: string | null;
  constructor(init: ProviderErrorInit<C>) {
    const what = init.status !== null ? `answered ${init.status}` : (init.detail ?? init.code);
    super(init.message ?? `${init.provider}: ${init.operation} ${what}${init.providerMessage ? ` (${init.providerMessage})` : ''}`);
    this.name = 'ProviderError';
    this.operation = init.operation;
    this.status = init.status;
    this.code = init.code;
    this.retryable = init.retryable ?? RETRYABLE_CODES.has(init.code);
    this.providerMessage = init.providerMessage ?? null;
  }
}

/** Retry schedule. Delays are in milliseconds. */
export interface RetryPolicy {
  /** Attempts in total, including the first (1 = no retry). */
  maxAttempts: number;
  /** Delay before the first retry; doubled for each further one. */
  baseDelayMs: number;
  /** Upper bound of a single delay. */
  maxDelayMs: number;
}

/** The default schedule: 4 attempts, 200 ms → 400 ms → 800 ms (each with jitter), at most 5 s. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 4, baseDelayMs: 200, maxDelayMs: 5_000 };

/** Delay before retry number `retry` (1-based): exponential, capped, with "equal jitter" (50–100 %). @internal */
export function backoffDelayMs(policy: RetryPolicy, retry: number, random: () => number = Math.random): number {
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.round(exp / 2 + (random() * exp) / 2);
}

/**
 * The wait an answer asks for in `Retry-After`, ms; null when absent or not in seconds (an HTTP date is not
 * honoured: the clocks of two parties need not agree). How long a wait is acceptable is the caller's rule.
 */
export function retryAfterMs(headers: Headers): number | null {
  const v = headers.get('retry-after');
  if (!v || !/^\d{1,6}$/.test(v)) return null;
  return Number(v) * 1000;
}

/** An attempt's outcome, as {@link withRetry} hands it to the caller's decision. */
export type AttemptOutcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * Runs `attempt` (1-based number) at most `policy.maxAttempts` times. After each attempt but the last,
 * `again` decides: `false` stops (the value is returned, the error thrown), `true` waits the policy's backoff,
 * a number waits that many ms (a `Retry-After`) before the next attempt. After the last attempt its outcome
 * stands. Waits with {@link sleep}.
 */
export async function withRetry<T>(
  policy: RetryPolicy,
  attempt: (n: number) => Promise<T>,
  again: (outcome: AttemptOutcome<T>, n: number) => boolean | number,
): Promise<T> {
  const maxAttempts = Math.max(1, policy.maxAttempts);
  for (let n = 1; ; n++) {
    let outcome: AttemptOutcome<T>;
    try {
      outcome = { ok: true, value: await attempt(n) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    const decision = n >= maxAttempts ? false : again(outcome, n);
    if (decision === false) {
      if (outcome.ok) return outcome.value;
      throw outcome.error;
    }
    await sleep(decision === true ? backoffDelayMs(policy, n) : decision);
  }
}
