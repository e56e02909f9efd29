/**
 * Leases that follow the worker, with two dispatchers ("instances") on their own connection pools against a
 * real PostgreSQL: a live instance keeps a job longer than its lease (the heartbeat renews it), and a dead
 * instance's job is taken over once its lease ends (within 15 s at the default 10 s lease) and run once more
 * by the survivor (docs/outbox.md, "Leases that follow the worker").
 */
import { createDatabase, createLogger } from '@sports-timing/shared';
import type { DB } from '../src/db/schema';
import { outboxRows, OutboxDispatcher } from '../src/outbox/outbox.service';
import { insertMessages } from '../src/outbox/outbox.repository';
import { createOrderingDatabase } from './support/app';
import { findMessage } from './support/outbox';
import { testNote } from '@sports-timing/shared/src/testing';
import { testTime, testConnectTimeoutMs } from '@sports-timing/shared/src/test-time';

let ctx: Awaited<ReturnType<typeof createOrderingDatabase>>;
beforeAll(async () => {
  ctx = await createOrderingDatabase();
});
afterAll(async () => {
  await ctx.close();
});

/** Polls `cond` every 20 ms until it holds (at most 10 s). */
async function untilTrue(cond: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + testTime(10_000);
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

test(
  'leases follow the worker: a live instance keeps its long job; a dead instance’s job is taken over within 15 s, once',
  async () => {
    const db = ctx.database.db;
    const logger = createLogger('outbox-lease');
    const runs = { aLong: 0, bLong: 0, aTakeover: 0, bTakeover: 0 };
    // Instance A has a pool of its own, so it can die (its pool ends: no heartbeat, no bookkeeping) while B lives.
    const aDatabase = createDatabase<DB>({ connectTimeoutMs: testConnectTimeoutMs(), url: ctx.database.url, schema: ctx.database.schema, max: 4 });
    let aHasIt!: () => void;
    const aHasTakeoverJob = new Promise<void>((r) => (aHasIt = r));
    const a = new OutboxDispatcher({ database: aDatabase, logger, pollIntervalMs: 100 }) // the default lease, 10 s
      .register('test-longrun', async () => {
        runs.aLong++;
        await new Promise((r) => setTimeout(r, 25_000)); // more than two leases
      })
      .register(
        'test-takeover',
        async () => {
          runs.aTakeover++;
          aHasIt();
          await new Promise(() => undefined); // the instance dies mid-job: this never settles
        },
        { deadlineMs: 20_000 }, // only so that the dead instance's stop() returns by the end of the test
      );
    await db.transaction().execute((trx) => insertMessages(trx, outboxRows([{ kind: 'test-longrun', dedupeKey: 'l1', payload: {} }])));
    a.start();
    await untilTrue(async () => runs.aLong === 1);
    const b = new OutboxDispatcher({ database: ctx.database, logger, pollIntervalMs: 100 }).register('test-longrun', async () => {
      runs.bLong++;
    });
    b.start();
    // The long job outlives its lease on live A: B never takes it (A's heartbeat renews it), A finishes it once.
    const end = Date.now() + testTime(40_000);
    while ((await findMessage(db, 'test-longrun', 'l1'))?.sent_at == null) {
      if (Date.now() > end) throw new Error('long job not done');
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(runs).toMatchObject({ aLong: 1, bLong: 0 });
    expect((await findMessage(db, 'test-longrun', 'l1'))?.attempts).toBe(1);

    // A takes a job and dies with it; B (which has the kind now) takes it over once A's lease has run out.
    await db.transaction().execute((trx) => insertMessages(trx, outboxRows([{ kind: 'test-takeover', dedupeKey: 't1', payload: {} }])));
    await aHasTakeoverJob;
    const killedAt = Date.now();
    const aStopped = a.stop(); // stops claiming; returns once the hanging job's deadline has passed
    await aDatabase.close(); // … and the instance is gone: no more lease renewals
    let takenOverAt = 0;
    b.register('test-takeover', async () => {
      runs.bTakeover++;
      takenOverAt = Date.now();
    });
    try {
      const until = Date.now() + testTime(20_000);
      while ((await findMessage(db, 'test-takeover', 't1'))?.sent_at == null) {
        if (Date.now() > until) throw new Error('job of the dead instance not taken over');
        await new Promise((r) => setTimeout(r, 100));
      }
      testNote(`lease figures: a dead instance's job taken over after ${takenOverAt - killedAt} ms`);
      await new Promise((r) => setTimeout(r, 500));
      expect(runs).toMatchObject({ aTakeover: 1, bTakeover: 1 });
      expect((await findMessage(db, 'test-takeover', 't1'))?.attempts).toBe(2);
    } finally {
      await b.stop();
      await aStopped;
      await db.deleteFrom('outbox_messages').where('kind', 'in', ['test-longrun', 'test-takeover']).execute();
    }
  },
  testTime(90_000),
);
