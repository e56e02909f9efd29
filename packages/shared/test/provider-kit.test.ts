/**
 * The third-party kit (provider-kit.ts): status classification, the error base's `retryable`, `Retry-After`
 * reading, the retry loop's attempts, waits and final outcome, and the abortable sleep.
 */
import { ProviderError, backoffDelayMs, providerCodeOf, retryAfterMs, sleep, withRetry, type RetryPolicy } from '../src/provider-kit';

const fast: RetryPolicy = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 4 };

describe('status classification and the error base', () => {
  it('names 401, 403, 404, 409, 429; 5xx is server; any other status badRequest', () => {
    expect([401, 403, 404, 409, 429, 500, 503, 400, 422].map(providerCodeOf)).toEqual([
      'unauthorized',
      'forbidden',
      'notFound',
      'conflict',
      'rateLimited',
      'server',
      'server',
      'badRequest',
      'badRequest',
    ]);
  });

  it('is retryable for 5xx, 429, timeout and connection failures only, unless the client says otherwise', () => {
    const retryable = (code: ReturnType<typeof providerCodeOf> | 'timeout' | 'network' | 'invalidResponse') =>
      new ProviderError({ provider: 'P', operation: 'GET x', status: null, code }).retryable;
    expect(['server', 'rateLimited', 'timeout', 'network'].map((c) => retryable(c as 'server'))).toEqual([true, true, true, true]);
    expect(['badRequest', 'notFound', 'conflict', 'unauthorized', 'forbidden', 'invalidResponse'].map((c) => retryable(c as 'server'))).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(new ProviderError({ provider: 'P', operation: 'send', status: 550, code: 'refused', retryable: false }).retryable).toBe(false);
  });

  it('says provider, operation, status and the provider text — or the detail when no answer came', () => {
    expect(
      new ProviderError({ provider: 'Payment provider', operation: 'DELETE Invoice/4', status: 400, code: 'badRequest', providerMessage: 'paid' }).message,
    ).toBe('Payment provider: DELETE Invoice/4 answered 400 (paid)');
    expect(
      new ProviderError({ provider: 'ERP weclapp', operation: 'GET article', status: null, code: 'timeout', detail: 'no answer within 5 ms' }).message,
    ).toBe('ERP weclapp: GET article no answer within 5 ms');
  });
});

describe('Retry-After and backoff', () => {
  it('reads whole seconds only', () => {
    expect(retryAfterMs(new Headers({ 'retry-after': '3' }))).toBe(3000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' }))).toBeNull();
    expect(retryAfterMs(new Headers())).toBeNull();
  });

  it('doubles from the base delay, capped, with 50–100 % jitter', () => {
    const p: RetryPolicy = { maxAttempts: 9, baseDelayMs: 100, maxDelayMs: 300 };
    expect([1, 2, 3].map((n) => backoffDelayMs(p, n, () => 1))).toEqual([100, 200, 300]);
    expect(backoffDelayMs(p, 2, () => 0)).toBe(100);
  });
});

describe('withRetry', () => {
  it('repeats while the decision says so, up to maxAttempts, and throws the last error', async () => {
    let calls = 0;
    await expect(
      withRetry(
        fast,
        async (n) => {
          calls++;
          throw new Error(`attempt ${n}`);
        },
        () => true,
      ),
    ).rejects.toThrow('attempt 3');
    expect(calls).toBe(3);
  });

  it('stops at once when the decision is false (negative control), returning the value or throwing', async () => {
    let calls = 0;
    await expect(
      withRetry(
        fast,
        async () => ++calls,
        () => false,
      ),
    ).resolves.toBe(1);
    await expect(
      withRetry(
        fast,
        async () => {
          calls++;
          throw new Error('no');
        },
        () => false,
      ),
    ).rejects.toThrow('no');
    expect(calls).toBe(2);
  });

  it('waits the number of ms the decision gives (a Retry-After) before the next attempt', async () => {
    const at: number[] = [];
    const value = await withRetry(
      fast,
      async (n) => {
        at.push(performance.now());
        return n;
      },
      (outcome) => outcome.ok && outcome.value < 2 && 120,
    );
    expect(value).toBe(2);
    expect(at[1] - at[0]).toBeGreaterThanOrEqual(110);
  });
});

describe('sleep', () => {
  it('waits the given ms, and a negative wait not at all', async () => {
    const t = performance.now();
    await sleep(80);
    expect(performance.now() - t).toBeGreaterThanOrEqual(75);
    // Timers fire in the order they fall due: a wait of 0 before the 1 s sentinel, whatever the machine's load.
    const sentinel = new Promise<string>((r) => setTimeout(() => r('sentinel'), 1_000));
    expect(await Promise.race([sleep(-5_000).then(() => 'slept'), sentinel])).toBe('slept');
  });

  it('resolves (never rejects) as soon as its signal aborts, also when it was aborted before', async () => {
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 30);
    // The abort's timer falls due long before the sentinel's, so the sleep must have ended on the abort.
    const sentinel = new Promise<string>((r) => setTimeout(() => r('sentinel'), 5_000));
    expect(await Promise.race([sleep(10_000, ctl.signal).then(() => 'aborted'), sentinel])).toBe('aborted');
    expect(await Promise.race([sleep(10_000, ctl.signal).then(() => 'aborted'), sentinel])).toBe('aborted');
  });
});
