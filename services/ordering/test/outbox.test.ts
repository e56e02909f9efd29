/**
 * The transactional outbox against a real SMTP server: one message per committed business event, none for a
 * rolled-back one, retried while SMTP is down, never duplicated, with a stable Message-ID.
 */
import { createLogger } from '@sports-timing/shared';
import { smtpMailer } from '../src/mail/mailer';
import { enqueueMail, messageIdFor, OutboxDispatcher } from '../src/outbox/outbox.service';
import { countPending } from '../src/outbox/outbox.repository';
import { createOrderingDatabase } from './helpers';
import { startTestSmtp, type TestSmtp } from './support/smtp';

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

function dispatcher() {
  return new OutboxDispatcher({
    database: ctx.database,
    mailer: smtpMailer(smtp.url),
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
    await new Promise((r) => setTimeout(r, 300));
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
    await new Promise((r) => setTimeout(r, 400));
    expect(smtp.received).toHaveLength(0);
    expect(await countPending(ctx.database.db)).toBe(10);
    await smtp.start();
    await smtp.waitFor(10);
    await new Promise((r) => setTimeout(r, 300));
    const ids = smtp.received.map((m) => m.parsed.messageId);
    expect(new Set(ids).size).toBe(10);
    expect(smtp.received).toHaveLength(10);
    expect(await countPending(ctx.database.db)).toBe(0);
  } finally {
    await d1.stop();
    await d2.stop();
  }
});
