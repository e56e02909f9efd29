/**
 * The job outbox (docs/outbox.md): each job of a kind runs once across dispatchers, failures are retried with
 * backoff until the job is dead, a permanent error kills it at once, stored errors carry no secret, and a
 * kind's own attempt limit wins over the dispatcher's. The mail side is in outbox.test.ts.
 */
import { createLogger } from '@sports-timing/shared';
import { enqueue, OutboxDispatcher, PermanentJobError, safeErrorText, type OutboxHandler } from '../src/outbox/outbox.service';
import { countPending } from '../src/outbox/outbox.repository';
import { createOrderingDatabase } from './support/app';
import { countDead, findMessage } from './support/outbox';

let ctx: Awaited<ReturnType<typeof createOrderingDatabase>>;
beforeAll(async () => {
  ctx = await createOrderingDatabase();
});
afterAll(async () => {
  await ctx.close();
});

describe('job outbox', () => {
  const quiet = createLogger('outbox-jobs-test');
  function jobDispatcher(handlers: Record<string, OutboxHandler<never>>, extra: Partial<ConstructorParameters<typeof OutboxDispatcher>[0]> = {}) {
    return new OutboxDispatcher({ database: ctx.database, logger: quiet, handlers, pollIntervalMs: 30, baseBackoffMs: 20, maxBackoffMs: 50, ...extra });
  }
  async function until(cond: () => Promise<boolean>, ms = 5_000): Promise<void> {
    const end = Date.now() + ms;
    while (!(await cond())) {
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  test('runs each job of a kind once with two dispatchers; the dedupe key is unique per kind', async () => {
    const seen: string[] = [];
    const handler: OutboxHandler<{ n: number }> = async (job) => {
      await new Promise((r) => setTimeout(r, 5));
      seen.push(`${job.dedupeKey}:${job.payload.n}`);
    };
    await ctx.database.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 30; i++) expect(await enqueue(trx, 'test-job', `k${i}`, { n: i })).toBe(true);
      expect(await enqueue(trx, 'test-job', 'k0', { n: 99 })).toBe(false);
      // Same dedupe key under another kind is another job (a mail with that key does not block the job).
      expect(await enqueue(trx, 'test-other', 'k0', { n: 0 })).toBe(true);
    });
    const d1 = jobDispatcher({ 'test-job': handler });
    const d2 = jobDispatcher({ 'test-job': handler });
    d1.start();
    d2.start();
    try {
      await until(async () => (await countPending(ctx.database.db, 'test-job')) === 0);
    } finally {
      await d1.stop();
      await d2.stop();
    }
    expect(seen.sort()).toEqual(Array.from({ length: 30 }, (_, i) => `k${i}:${i}`).sort());
    // No dispatcher has a handler for `test-other`: it waits, unclaimed, for one that has.
    const other = await findMessage(ctx.database.db, 'test-other', 'k0');
    expect(other?.attempts).toBe(0);
  });

  test('retries with backoff, then the job is dead after maxAttempts; stored errors carry no secret', async () => {
    let calls = 0;
    await ctx.database.db.transaction().execute((trx) => enqueue(trx, 'test-fail', 'f1', {}));
    const d = jobDispatcher(
      {
        'test-fail': async () => {
          calls++;
          throw new Error('ERP refused: AuthenticationToken: s3cr3t-token at http://admin:hunter2@erp.local/x?token=abc123');
        },
      },
      { maxAttempts: 3 },
    );
    d.start();
    try {
      await until(async () => (await findMessage(ctx.database.db, 'test-fail', 'f1'))?.dead_at != null);
      // A dead job is never claimed again: a full round runs nothing.
      expect(await d.drain()).toBe(0);
    } finally {
      await d.stop();
    }
    const m = (await findMessage(ctx.database.db, 'test-fail', 'f1'))!;
    expect(calls).toBe(3);
    expect(m.attempts).toBe(3);
    expect(m.sent_at).toBeNull();
    expect(m.last_error).toContain('ERP refused');
    expect(m.last_error).not.toMatch(/s3cr3t|hunter2|abc123/);
    expect(await countDead(ctx.database.db)).toBeGreaterThanOrEqual(1);
  });

  test('a permanent error makes the job dead at once; a flaky handler succeeds on a retry', async () => {
    let flaky = 0;
    await ctx.database.db.transaction().execute(async (trx) => {
      await enqueue(trx, 'test-perm', 'p1', {});
      await enqueue(trx, 'test-flaky', 'f1', {});
    });
    const d = jobDispatcher({
      'test-perm': async () => {
        throw new PermanentJobError('order 42 does not exist');
      },
      'test-flaky': async () => {
        if (++flaky < 3) throw new Error('503 from ERP');
      },
    });
    d.start();
    try {
      await until(
        async () =>
          (await findMessage(ctx.database.db, 'test-flaky', 'f1'))?.sent_at != null && (await findMessage(ctx.database.db, 'test-perm', 'p1'))?.dead_at != null,
      );
    } finally {
      await d.stop();
    }
    expect((await findMessage(ctx.database.db, 'test-perm', 'p1'))!.attempts).toBe(1);
    expect(flaky).toBe(3);
  });

  test('safeErrorText masks credentials', () => {
    expect(safeErrorText(new Error('X-API-KEY: abc Authorization: Bearer eyJhbGciOi.x.y password=pw1'))).not.toMatch(/abc|eyJ|pw1/);
  });
});

test('a per-kind attempt limit given at register() overrides the dispatcher default', async () => {
  let calls = 0;
  await ctx.database.db.transaction().execute((trx) => enqueue(trx, 'test-kind-limit', 'k1', {}));
  const d = new OutboxDispatcher({
    database: ctx.database,
    logger: createLogger('outbox-kind-limit'),
    pollIntervalMs: 30,
    baseBackoffMs: 10,
    maxBackoffMs: 20,
    maxAttempts: 50,
  });
  d.register(
    'test-kind-limit',
    async () => {
      calls++;
      throw new Error('still down');
    },
    { maxAttempts: 2 },
  );
  d.start();
  try {
    const end = Date.now() + 5_000;
    while ((await findMessage(ctx.database.db, 'test-kind-limit', 'k1'))?.dead_at == null) {
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    await d.stop();
  }
  expect(calls).toBe(2);
});
