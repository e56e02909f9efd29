/**
 * Background work under a slow and refusing mail relay, against real servers: an SMTP relay (`smtp-server`)
 * that answers the end of DATA for one recipient only after a minute, refuses another with 550 and
 * greylists a third with 451 once; the ordering app with its order flow against the payment and ERP
 * simulators. Other customers' mail arrives within seconds, a confirmed payment makes its order paid while
 * the relay still stalls, the stalled messages arrive exactly once when the relay answers, the refused ones
 * are tried once, dead, listed for the operator (admin API) and written to their order's history.
 */
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { SMTPServer } from 'smtp-server';
import { smtpMailer } from '../src/mail/mailer';
import { recordOrderMailFailure } from '../src/orders/mail/order-mail.service';
import { orderBody } from './support/orders';
import { startOrderFlowStack, until, WEBHOOK_PATH, type OrderFlowStack } from './support/order-flow-stack';
import { testNote } from '@sports-timing/shared/src/testing';

/** How long the relay sits on the end of DATA for `stalled@` (realistic scale: a content filter or tarpit). */
const STALL_MS = 60_000;

/** A relay with per-recipient behaviour; records every RCPT and every accepted message. */
function startRelay() {
  const rcpts: string[] = [];
  const delivered: { to: string; messageId: string; at: number }[] = [];
  let greylistedOnce = false;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    socketTimeout: STALL_MS * 2,
    onRcptTo(address, session, callback) {
      rcpts.push(address.address);
      if (address.address.startsWith('refused@')) return callback(Object.assign(new Error('5.1.1 mailbox unavailable'), { responseCode: 550 }));
      // Greylisting: the first try of a greylisted recipient is deferred, later ones pass.
      if (address.address.startsWith('greylisted@') && !greylistedOnce) {
        greylistedOnce = true;
        return callback(Object.assign(new Error('4.7.1 greylisted, try again later'), { responseCode: 451 }));
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const to = session.envelope.rcptTo.map((r) => r.address).join(',');
        const messageId = /^Message-ID:\s*(\S+)/im.exec(Buffer.concat(chunks).toString('utf8'))?.[1] ?? '';
        const accept = () => {
          delivered.push({ to, messageId, at: Date.now() });
          callback();
        };
        if (to.startsWith('stalled@')) setTimeout(accept, STALL_MS);
        else accept();
      });
    },
  });
  return new Promise<{ url: string; rcpts: string[]; delivered: typeof delivered; close(): Promise<void> }>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`,
        rcpts,
        delivered,
        close: () => new Promise<void>((r) => server.close(() => r())),
      }),
    ),
  );
}

let relay: Awaited<ReturnType<typeof startRelay>>;
let stack: OrderFlowStack;
let mailer: ReturnType<typeof smtpMailer>;

beforeAll(async () => {
  relay = await startRelay();
  mailer = smtpMailer(relay.url);
  stack = await startOrderFlowStack('slow-relay-test', {
    mailer,
    onDead: (job, err) => (job.kind === 'mail' ? recordOrderMailFailure(stack.ctx.database.db, job.dedupeKey, err.message) : Promise.resolve()),
  });
  await stack.control('subscribe', { url: `${stack.url}${WEBHOOK_PATH}`, format: 'json' });
});

afterAll(async () => {
  await stack.close();
  mailer.close();
  await relay.close();
});

let cardNumber = 8400000;
async function placeOrder(email: string): Promise<{ id: number; orderNumber: string }> {
  const body = orderBody({
    contact: { firstName: 'Kim', lastName: 'Muster', email, culture: 'en' },
    orderItems: [{ articleNumber: 'SIAC1', quantity: 1, configuration: { cardNumber: String(cardNumber++) } }],
  });
  const res = await request(stack.url).post('/api/grpc-json/v1/shop/orders').send(body);
  expect(res.status).toBe(200);
  return { id: (res.body as { oid: number }).oid, orderNumber: (res.body as { orderNumber: string }).orderNumber };
}

const deliveredTo = (who: string) => relay.delivered.filter((d) => d.to === who);

test(
  'one recipient stalled for a minute, one refused (550), one greylisted (451): the rest flows, payments complete, every message at most once',
  async () => {
    const db = stack.ctx.database.db;
    // The stalled customer first: its two messages (confirmation, payment link) take two of the mail slots.
    const stalled = await placeOrder('stalled@example.com');
    const refused = await placeOrder('refused@example.com');
    const greylisted = await placeOrder('greylisted@example.com');
    const start = Date.now();
    const others: { id: number; orderNumber: string; placedAt: number }[] = [];
    for (let i = 0; i < 4; i++) others.push({ ...(await placeOrder(`customer${i}@example.com`)), placedAt: Date.now() });

    // Other customers: confirmation and payment link each, while the relay still sits on stalled@ (its minute
    // has not run out: nothing of it was delivered), so no customer's mail queued behind the stalled one.
    await until('the other customers’ mail', async () => others.every((_, i) => deliveredTo(`customer${i}@example.com`).length === 2), 15_000);
    const othersMs = Math.max(...others.flatMap((o, i) => deliveredTo(`customer${i}@example.com`).map((d) => d.at - o.placedAt)));
    expect(deliveredTo('stalled@example.com')).toHaveLength(0);

    // A payment confirmed meanwhile makes its order paid within 10 s (the webhook's job does not queue behind mail).
    const paidOrder = others[0];
    const row = await db.selectFrom('orders').select(['paylink_id']).where('id', '=', paidOrder.id).executeTakeFirstOrThrow();
    const payAt = Date.now();
    await stack.control('pay', { invoiceId: row.paylink_id });
    await until(
      'paid',
      async () =>
        ['paid', 'transferred'].includes((await db.selectFrom('orders').select('state').where('id', '=', paidOrder.id).executeTakeFirstOrThrow()).state),
      10_000,
    );
    const paidMs = Date.now() - payAt;
    expect(deliveredTo('stalled@example.com')).toHaveLength(0);

    // Greylisted: deferred once, then delivered (both of its messages), each once.
    await until('greylisted mail', async () => deliveredTo('greylisted@example.com').length === 2, 10_000);

    // Refused: each message tried once (one RCPT), dead with the relay's answer, written to the order's history.
    await until(
      'refused mail dead',
      async () =>
        (await db.selectFrom('outbox_messages').select('id').where('dedupe_key', 'like', `order-%:${refused.id}`).where('dead_at', 'is not', null).execute())
          .length === 2,
      10_000,
    );
    const refusedRows = await db
      .selectFrom('outbox_messages')
      .select(['attempts', 'last_error'])
      .where('dedupe_key', 'like', `order-%:${refused.id}`)
      .execute();
    for (const r of refusedRows) {
      expect(r.attempts).toBe(1);
      expect(r.last_error).toMatch(/550/);
    }
    const history = await db
      .selectFrom('order_state_changes')
      .select(['actor', 'reason', 'from_state', 'to_state'])
      .where('order_id', '=', refused.id)
      .where('actor', '=', 'system:mail')
      .execute();
    expect(history).toHaveLength(2);
    for (const h of history) {
      expect(h.reason).toMatch(/not delivered: .*550 5\.1\.1 mailbox unavailable/);
      expect(h.from_state).toBe(h.to_state);
    }

    // The operator sees the dead letters (admin only) with their order.
    const admin = await stack.ctx.bearer({ roles: ['admin'] });
    expect((await request(stack.url).get('/api/rest/v1/maintenance/dead-jobs')).status).toBe(401);
    expect(
      (
        await request(stack.url)
          .get('/api/rest/v1/maintenance/dead-jobs')
          .set('Authorization', await stack.ctx.bearer({ roles: ['support'] }))
      ).status,
    ).toBe(403);
    const listed = await request(stack.url).get('/api/rest/v1/maintenance/dead-jobs?kind=mail').set('Authorization', admin);
    expect(listed.status).toBe(200);
    const dead = listed.body as { id: number; orderId?: number; lastError: string; dedupeKey: string }[];
    expect(dead.map((d) => d.orderId)).toEqual([refused.id, refused.id]);
    // Queue metrics show them too.
    const metrics = await request(stack.url).get('/metrics');
    expect(metrics.text).toMatch(/outbox_dead_messages\{[^}]*kind="mail"[^}]*\} 2/);
    expect(metrics.text).toMatch(/outbox_running_messages\{[^}]*kind="mail"[^}]*\} 2/);

    // Retrying a dead letter runs it once more (the relay refuses again: one more RCPT, dead again); a job
    // that is not dead answers 404 and changes nothing.
    const rcptsBefore = relay.rcpts.filter((a) => a === 'refused@example.com').length;
    expect(rcptsBefore).toBe(2);
    const retried = await request(stack.url).post(`/api/rest/v1/maintenance/dead-jobs/${dead[0].id}/retry`).set('Authorization', admin);
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ id: dead[0].id, attempts: 0, deadAt: null });
    await until(
      'retried job dead again',
      async () => (await db.selectFrom('outbox_messages').select('dead_at').where('id', '=', dead[0].id).executeTakeFirstOrThrow()).dead_at !== null,
      10_000,
    );
    expect(relay.rcpts.filter((a) => a === 'refused@example.com')).toHaveLength(3);
    const sentJob = await db
      .selectFrom('outbox_messages')
      .select('id')
      .where('dedupe_key', '=', `order-confirmation:${others[1].id}`)
      .executeTakeFirstOrThrow();
    expect((await request(stack.url).post(`/api/rest/v1/maintenance/dead-jobs/${sentJob.id}/retry`).set('Authorization', admin)).status).toBe(404);

    // The stalled messages arrive when the relay answers, each exactly once, on their first attempt.
    await until('stalled mail', async () => deliveredTo('stalled@example.com').length === 2, STALL_MS + 20_000);
    await until(
      'stalled jobs done',
      async () =>
        (await db.selectFrom('outbox_messages').select('id').where('dedupe_key', 'like', `order-%:${stalled.id}`).where('sent_at', 'is not', null).execute())
          .length === 2,
    );
    await new Promise((r) => setTimeout(r, 1_000));
    expect(deliveredTo('stalled@example.com')).toHaveLength(2);
    expect(new Set(deliveredTo('stalled@example.com').map((d) => d.messageId)).size).toBe(2);
    const stalledRows = await db.selectFrom('outbox_messages').select('attempts').where('dedupe_key', 'like', `order-%:${stalled.id}`).execute();
    expect(stalledRows.map((r) => r.attempts)).toEqual([1, 1]);
    testNote(
      `slow-relay figures: other customers' 8 messages delivered at most ${othersMs} ms after their order; paid ${paidMs} ms after the payment; ` +
        `stalled messages delivered ${Math.max(...deliveredTo('stalled@example.com').map((d) => d.at)) - start} ms after the orders (stall ${STALL_MS} ms)`,
    );
    // Every other message exactly once.
    const ids = relay.delivered.map((d) => d.messageId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(greylisted.id).toBeGreaterThan(0);
  },
  STALL_MS + 60_000,
);
