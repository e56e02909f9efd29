/**
 * The job outbox (docs/outbox.md): each job of a kind runs once across dispatchers, failures are retried with
 * backoff until the job is dead, a permanent error kills it at once, stored errors carry no secret, and a
 * kind's own attempt limit wins over the dispatcher's, a new job's notification wakes its kind's lane, and a
 * lane's claim reads its own kind's due jobs only. The mail side is in outbox.test.ts.
 */
import { Kysely, PostgresDialect, type CompiledQuery } from 'kysely';
import { createLogger } from '@sports-timing/shared';
import type { DB } from '../src/db/schema';
import { enqueue, OutboxDispatcher, PermanentJobError, safeErrorText, type OutboxHandler } from '../src/outbox/outbox.service';
import { claimDue, countPending, insertMessages, markFailed, markSentMany, renewLeases } from '../src/outbox/outbox.repository';
import { createOrderingDatabase } from './support/app';
import { countDead, findMessage } from './support/outbox';
import { testTime } from '@sports-timing/shared/src/test-time';

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
    const end = Date.now() + testTime(ms);
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
    const end = Date.now() + testTime(5_000);
    while ((await findMessage(ctx.database.db, 'test-kind-limit', 'k1'))?.dead_at == null) {
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    await d.stop();
  }
  expect(calls).toBe(2);
});

test('a new job wakes its own lane at once and no other (the notification names its kind), a reserved one none: with the fallback poll an hour away it runs, so the notification woke it', async () => {
  let ran: (() => void) | undefined;
  const done = new Promise<void>((r) => (ran = r));
  // The dispatcher's statements, observed as they run: which lanes the notification made claim.
  let seen: CompiledQuery[] = [];
  const logging = new Kysely<DB>({ dialect: new PostgresDialect({ pool: ctx.database.pool }), log: (e) => void (e.level === 'query' && seen.push(e.query)) });
  const d = new OutboxDispatcher({
    database: { ...ctx.database, db: logging },
    logger: createLogger('outbox-notified'),
    // Longer than the test may last: only the notification can make this lane claim the job.
    pollIntervalMs: 3_600_000,
    handlers: { 'test-notified': async () => ran?.(), 'test-other-lane': async () => undefined },
  });
  d.start();
  try {
    // The listener connects in the background; the start's own round found nothing.
    await new Promise((r) => setTimeout(r, 300));
    seen = [];
    await ctx.database.db.transaction().execute(async (trx) => {
      await enqueue(trx, 'test-notified', 'n1', {});
      // A job reserved to its enqueuer wakes no lane: none may claim it before the reservation ends.
      await insertMessages(trx, [{ kind: 'test-other-lane', dedupeKey: 'r1', payload: {}, lockedUntil: new Date(Date.now() + 60_000) }]);
    });
    await done;
    await new Promise((r) => setTimeout(r, 100));
    expect((await findMessage(ctx.database.db, 'test-notified', 'n1'))?.sent_at).not.toBeNull();
    const claimedKinds = seen.filter((q) => q.sql.includes('for update skip locked')).map((q) => q.parameters[1]);
    expect(new Set(claimedKinds)).toEqual(new Set(['test-notified']));
  } finally {
    await d.stop();
  }
});

test("a lane's claim reads its own kind's due jobs only: a backlog of 3,000 jobs of another kind is not read", async () => {
  const backlog = Array.from({ length: 3_000 }, (_, i) => ({ kind: 'test-backlog', dedupeKey: `b${i}`, payload: {} }));
  expect(await insertMessages(ctx.database.db, backlog)).toBe(3_000);
  await ctx.database.pool.query('analyze outbox_messages');
  // claimDue's own statement (it claims nothing: no job of its kind is due).
  const plan = await executedPlan((db) => claimDue(db, 'test-idle-lane', 5, 10));
  expect(plan.some((n) => n['Index Name'] === 'outbox_messages_due_idx')).toBe(true);
  // Through the older index on (next_attempt_at, id) every one of the 3,000 was read and filtered out.
  expect(plan.reduce((sum, n) => sum + (n['Rows Removed by Filter'] ?? 0), 0)).toBeLessThan(10);
  expect(plan[0]['Shared Hit Blocks'] + plan[0]['Shared Read Blocks']).toBeLessThan(20);
  await ctx.database.pool.query("delete from outbox_messages where kind = 'test-backlog'");
});

test('marking jobs done finds them by id, also under a backlog the statistics have not seen', async () => {
  // Statistics taken while no job was open (every one done), then 3,000 open ones: PostgreSQL reckons the due
  // index nearly empty, and a statement it could answer from that index would read all 3,000.
  const first = Array.from({ length: 3_000 }, (_, i) => ({ kind: 'test-backlog', dedupeKey: `done${i}`, payload: {} }));
  await insertMessages(ctx.database.db, first);
  await ctx.database.pool.query("update outbox_messages set sent_at = now() where kind = 'test-backlog'");
  await ctx.database.pool.query('analyze outbox_messages');
  await insertMessages(
    ctx.database.db,
    Array.from({ length: 3_000 }, (_, i) => ({ kind: 'test-backlog', dedupeKey: `open${i}`, payload: {} })),
  );
  const { rows } = await ctx.database.pool.query<{ id: string }>(
    "select id from outbox_messages where kind = 'test-backlog' and sent_at is null order by id desc limit 4",
  );
  const claims = rows.map((r) => ({ id: Number(r.id), attempts: 0 }));
  for (const plan of [
    await executedPlan((db) => markSentMany(db, claims)),
    await executedPlan((db) => renewLeases(db, claims, 10)),
    await executedPlan((db) => markFailed(db, claims[0], 'x', new Date())),
  ]) {
    expect(plan.some((n) => n['Index Name'] === 'outbox_messages_pkey')).toBe(true);
    expect(plan.some((n) => n['Index Name'] === 'outbox_messages_due_idx')).toBe(false);
    expect(plan[0]['Shared Hit Blocks'] + plan[0]['Shared Read Blocks']).toBeLessThan(40);
  }
  await ctx.database.pool.query("delete from outbox_messages where kind = 'test-backlog'");
});

/**
 * The executed plan (EXPLAIN ANALYZE, in a transaction rolled back) of the first statement `run` makes: the
 * repository's own SQL, captured as it runs on a logging Kysely over the test pool (it runs once for real).
 */
async function executedPlan(run: (db: Kysely<DB>) => Promise<unknown>): Promise<PlanNode[]> {
  const seen: CompiledQuery[] = [];
  const logging = new Kysely<DB>({ dialect: new PostgresDialect({ pool: ctx.database.pool }), log: (e) => void (e.level === 'query' && seen.push(e.query)) });
  const client = await ctx.database.pool.connect();
  try {
    await run(logging);
    await client.query('begin');
    const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
      `explain (analyze, buffers, format json) ${seen[0].sql}`,
      seen[0].parameters as unknown[],
    );
    return planNodes(rows[0]['QUERY PLAN'][0].Plan);
  } finally {
    await client.query('rollback');
    client.release();
  }
}

interface PlanNode {
  'Index Name'?: string;
  'Rows Removed by Filter'?: number;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  Plans?: PlanNode[];
}

function planNodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(planNodes)];
}
