/**
 * The transactional outbox against a real SMTP server: one message per committed business event, none for a
 * rolled-back one, retried while SMTP is down, never duplicated, with a stable Message-ID; batch writes,
 * reserved jobs, slow kinds and stopping. The job rules (once, retries, dead jobs) are in outbox-jobs.test.ts.
 */
import { sql } from 'kysely';
import { createLogger } from '@sports-timing/shared';
import { smtpMailer } from '../src/mail/mailer';
import { enqueue, enqueueMail, failReservedJob, mailEntry, messageIdFor, outboxRows, OutboxDispatcher } from '../src/outbox/outbox.service';
import { completeJobSql, countPending, insertMessages } from '../src/outbox/outbox.repository';
import { createOrderingDatabase } from './support/app';
import { findMessage } from './support/outbox';
import { startTestSmtp, type TestSmtp } from './support/smtp';
import { testTime } from '@sports-timing/shared/src/test-time';

let ctx: Awaited<ReturnType<typeof createOrderingDatabase>>;
let smtp: TestSmtp;
beforeAll(async () => {
  ctx = await createOrderingDatabase();
  smtp = await startTestSmtp();
});
afterAll(async () => {
  await smtp.stop();
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

/** Until every stored message is sent or dead. */
function untilNoPending(): Promise<void> {
  return untilTrue(async () => (await countPending(ctx.database.db)) === 0);
}

/** Mailers of the tests' dispatchers: closed after each test, so no pooled connection outlives it. */
const mailers: ReturnType<typeof smtpMailer>[] = [];
afterEach(() => {
  for (const m of mailers.splice(0)) m.close();
});

function dispatcher() {
  const mailer = smtpMailer(smtp.url);
  mailers.push(mailer);
  return new OutboxDispatcher({
    database: ctx.database,
    mailer,
    logger: createLogger('outbox-test'),
    from: 'Shop <shop@example.com>',
    pollIntervalMs: 50,
    baseBackoffMs: 50,
    maxBackoffMs: 200,
  });
}

test('sends a committed message once, never a rolled-back one, and a re-enqueue adds nothing', async () => {
  const d = dispatcher();
  d.start();
  try {
    await ctx.database.db.transaction().execute(async (trx) => {
      await enqueueMail(trx, 'test:committed', { to: 'anna@example.com', subject: 'Committed', text: 'hello' });
    });
    await ctx.database.db
      .transaction()
      .execute(async (trx) => {
        await enqueueMail(trx, 'test:rolled-back', { to: 'bob@example.com', subject: 'Rolled back', text: 'no' });
        throw new Error('business rule failed');
      })
      .catch(() => undefined);
    await ctx.database.db.transaction().execute(async (trx) => {
      await enqueueMail(trx, 'test:committed', { to: 'anna@example.com', subject: 'Committed again', text: 'hello' });
    });
    const [mail] = await smtp.waitFor(1);
    // Nothing else can follow: every stored message is marked sent (a message is marked only after SMTP
    // accepted it) and a full round of the dispatcher finds nothing due.
    await untilNoPending();
    expect(await d.drain()).toBe(0);
    expect(smtp.received).toHaveLength(1);
    expect(mail.envelopeTo).toEqual(['anna@example.com']);
    expect(mail.parsed.subject).toBe('Committed');
    expect(mail.parsed.messageId).toBe(messageIdFor('test:committed'));
    expect(await countPending(ctx.database.db)).toBe(0);
  } finally {
    await d.stop();
  }
});

test('retries while SMTP is down and delivers each message exactly once when it returns', async () => {
  smtp.received.length = 0;
  await smtp.stop();
  const d1 = dispatcher();
  const d2 = dispatcher(); // two instances share the outbox
  d1.start();
  d2.start();
  try {
    for (let i = 0; i < 10; i++) {
      await ctx.database.db.transaction().execute((trx) => enqueueMail(trx, `test:outage:${i}`, { to: `c${i}@example.com`, subject: `Order ${i}`, text: 'x' }));
    }
    // Every message was tried (and failed) at least once while SMTP was down.
    await untilTrue(
      async () =>
        (
          await sql<{ n: number }>`select count(*)::int as n from outbox_messages where dedupe_key like 'test:outage:%' and attempts >= 1`.execute(
            ctx.database.db,
          )
        ).rows[0].n === 10,
    );
    expect(smtp.received).toHaveLength(0);
    expect(await countPending(ctx.database.db)).toBe(10);
    await smtp.start();
    await smtp.waitFor(10);
    // Sent messages are marked per batch, after the batch: once all are marked and a round finds nothing
    // due, no late duplicate can follow.
    await untilNoPending();
    expect(await d1.drain()).toBe(0);
    const ids = smtp.received.map((m) => m.parsed.messageId);
    expect(new Set(ids).size).toBe(10);
    expect(smtp.received).toHaveLength(10);
    expect(await countPending(ctx.database.db)).toBe(0);
  } finally {
    await d1.stop();
    await d2.stop();
  }
});

test('outboxRows + insertMessages write e-mails and jobs in one go: delays kept, existing dedupe keys skipped', async () => {
  const db = ctx.database.db;
  const before = Date.now();
  const n = await db
    .transaction()
    .execute((trx) =>
      insertMessages(
        trx,
        outboxRows([
          mailEntry('test:all-mail', { to: 'eve@example.com', subject: 'All', text: 'x' }),
          { kind: 'test-all-job', dedupeKey: 'k1', payload: { a: 1 }, delayMs: 60_000 },
        ]),
      ),
    );
  expect(n).toBe(2);
  const mail = await findMessage(db, 'mail', 'test:all-mail');
  expect(mail?.message_id).toBe(messageIdFor('test:all-mail'));
  const job = await findMessage(db, 'test-all-job', 'k1');
  expect(job?.payload).toEqual({ a: 1 });
  expect(job!.next_attempt_at.getTime()).toBeGreaterThanOrEqual(before + 59_000);
  const again = await db.transaction().execute((trx) =>
    insertMessages(
      trx,
      outboxRows([
        { kind: 'test-all-job', dedupeKey: 'k1', payload: { a: 2 } },
        { kind: 'test-all-job', dedupeKey: 'k2', payload: { a: 3 } },
      ]),
    ),
  );
  expect(again).toBe(1);
  expect((await findMessage(db, 'test-all-job', 'k1'))?.payload).toEqual({ a: 1 });
  await db.deleteFrom('outbox_messages').where('kind', '=', 'test-all-job').execute();
  await db.deleteFrom('outbox_messages').where('dedupe_key', '=', 'test:all-mail').execute();
});

test('a reserved job is left to its enqueuer: done in its own statement, or given back, or taken once the reservation ends', async () => {
  const db = ctx.database.db;
  const runs: string[] = [];
  const d = dispatcher().register('test-reserved', async (job: { dedupeKey: string }) => {
    runs.push(job.dedupeKey);
  });
  const reserve = (key: string, reserveMs: number) =>
    db.transaction().execute((trx) => insertMessages(trx, outboxRows([{ kind: 'test-reserved', dedupeKey: key, payload: {}, reserveMs }])));
  d.start();
  try {
    await reserve('done', 60_000);
    await reserve('given-back', 60_000);
    await reserve('abandoned', 1_000);
    // Due, but reserved: a full round of the dispatcher runs none of them.
    expect(await d.drain()).toBe(0);
    expect(runs).toEqual([]);
    // The enqueuer's effect and the job's completion in one statement.
    await sql`with done as (${completeJobSql('test-reserved', 'done')}) select 1`.execute(db);
    // The enqueuer failed: the job goes back to the dispatchers with the attempt counted.
    await failReservedJob({ database: ctx.database, logger: createLogger('outbox-test') }, 'test-reserved', 'given-back', new Error('provider down'), 0);
    const end = Date.now() + testTime(5_000);
    while (runs.length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    // The completed job stays done: a full round after the two others ran finds nothing due.
    await untilTrue(async () => (await countPending(db, 'test-reserved')) === 0);
    expect(await d.drain()).toBe(0);
  } finally {
    await d.stop();
  }
  expect(runs.sort()).toEqual(['abandoned', 'given-back']);
  const done = await findMessage(db, 'test-reserved', 'done');
  expect(done).toMatchObject({ attempts: 1, locked_until: null });
  expect(done?.sent_at).not.toBeNull();
  const givenBack = await findMessage(db, 'test-reserved', 'given-back');
  // One attempt by the enqueuer, one by the dispatcher that then did it.
  expect(givenBack).toMatchObject({ attempts: 2 });
  expect(givenBack?.sent_at).not.toBeNull();
  expect((await findMessage(db, 'test-reserved', 'abandoned'))?.attempts).toBe(1);
  await db.deleteFrom('outbox_messages').where('kind', '=', 'test-reserved').execute();
});

test('a kind whose jobs are slow does not hold up the others (e-mails flow while a provider hangs)', async () => {
  const db = ctx.database.db;
  let release!: () => void;
  const hanging = new Promise<void>((r) => (release = r));
  const sent: string[] = [];
  // More slow jobs than a batch, all older than the fast ones: the first batch holds only slow jobs.
  await db
    .transaction()
    .execute((trx) => insertMessages(trx, outboxRows(Array.from({ length: 25 }, (_, i) => ({ kind: 'test-slow', dedupeKey: `s${i}`, payload: {} })))));
  await db
    .transaction()
    .execute((trx) => insertMessages(trx, outboxRows(Array.from({ length: 45 }, (_, i) => ({ kind: 'test-fast', dedupeKey: `f${i}`, payload: { i } })))));
  const d = new OutboxDispatcher({ database: ctx.database, logger: createLogger('outbox-slow'), pollIntervalMs: 30, concurrency: 20 });
  d.register('test-slow', async () => {
    await hanging;
  });
  d.register('test-fast', async (job) => {
    sent.push(job.dedupeKey);
  });
  d.start();
  try {
    const end = Date.now() + testTime(10_000);
    // All 45 fast jobs (three batches of their kind) complete — handled and marked done, which follows each
    // batch — while the slow ones still hang.
    while (sent.length < 45 || (await countPending(db, 'test-fast')) > 0) {
      if (Date.now() > end) throw new Error(`timed out with ${sent.length} fast jobs handled`);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(sent).toHaveLength(45);
    expect(await countPending(db, 'test-slow')).toBe(25);
  } finally {
    release();
    await d.stop();
  }
  // The slow jobs in hand finished at stop; the ones not yet claimed are left for the next dispatcher, which takes them.
  expect(await countPending(db, 'test-slow')).toBeLessThanOrEqual(5);
  const next = new OutboxDispatcher({ database: ctx.database, logger: createLogger('outbox-slow-2'), pollIntervalMs: 30, concurrency: 20 });
  next.register('test-slow', async () => undefined);
  await next.drain();
  expect(await countPending(db, 'test-slow')).toBe(0);
  await db.deleteFrom('outbox_messages').where('kind', 'in', ['test-slow', 'test-fast']).execute();
});

test('stop() returns while new jobs keep arriving: the jobs in hand finish, no new batch is claimed', async () => {
  let ran = 0;
  let next = 0;
  // Every job enqueues the next one, as orders placed through another instance would: the backlog never empties.
  const d = dispatcher().register('test-stream', async () => {
    ran++;
    await new Promise((r) => setTimeout(r, 5));
    await ctx.database.db.transaction().execute(async (trx) => {
      await enqueue(trx, 'test-stream', `s${++next}`, {});
    });
  });
  await ctx.database.db.transaction().execute(async (trx) => {
    await enqueue(trx, 'test-stream', `s${++next}`, {});
  });
  d.start();
  await untilTrue(async () => ran >= 20);
  // stop() returning at all is the point: were it to wait for the backlog to empty, it never would.
  await d.stop();
  const ranAtStop = ran;
  await new Promise((r) => setTimeout(r, 200));
  expect(ran).toBe(ranAtStop);
  // Left for another instance, not lost.
  expect(await countPending(ctx.database.db, 'test-stream')).toBeGreaterThanOrEqual(1);
  await ctx.database.db.deleteFrom('outbox_messages').where('kind', '=', 'test-stream').execute();
});
