/**
 * The public payment webhook under a flood of forged deliveries (docs/payrexx.md, Flood bounds): per
 * source address at most `RATE_LIMIT_PAYMENT_WEBHOOKS_PER_MINUTE` deliveries are recorded (the rest get
 * 429 with Retry-After, before the body is read) while another source still gets through; repeats of a
 * transaction id and status whose re-fetch has not started merge into one delivery and one provider call;
 * deliveries older than `PAYMENT_DELIVERY_RETENTION_DAYS` are purged. Negative control: with the limit
 * off, the same flood is stored in full.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { createLogger } from '@sports-timing/shared';
import { createErpSimulator, type ErpSimulator } from '@sports-timing/erp-simulator';
import { createPaymentSimulator, type PaymentSimulator } from '@sports-timing/payment-simulator';
import { createApp } from '../src/app';
import type { OrderingConfig } from '../src/config';
import { composeOrdering, orderFlowHandlers, type OrderFlowParts } from '../src/composition';
import { ErpHandOff } from '../src/orders/flow/erp-hand-off';
import { PaylinkJobs } from '../src/orders/flow/paylink-jobs';
import { PaymentStatusProcessor } from '../src/orders/flow/payment-status.service';
import { createPaymentClient } from '../src/payment/payment.client';
import { OutboxDispatcher } from '../src/outbox/outbox.service';
import { startOrdering, type OrderingTestContext } from './support/app';
import { testTime } from '@sports-timing/shared/src/test-time';

const WEBHOOK_PATH = '/api/rest/v1/payment-provider/status';
const LIMIT = 40;
const FLOOD = 1_000;

let erp: ErpSimulator;
let pay: PaymentSimulator;
let ctx: OrderingTestContext;
const servers: http.Server[] = [];

beforeAll(async () => {
  erp = await createErpSimulator().start();
  pay = await createPaymentSimulator().start();
  ctx = await startOrdering({
    PAYMENT_BASE_URL: pay.baseUrl,
    ERP_BASE_URL_WECLAPP: erp.baseUrl('main'),
    RATE_LIMIT_PAYMENT_WEBHOOKS_PER_MINUTE: String(LIMIT),
    PAYMENT_DELIVERY_RETENTION_DAYS: '7',
    // Sources are told apart by X-Forwarded-For from the (loopback) proxy.
    TRUSTED_PROXIES: '127.0.0.1',
    RATE_LIMIT_KEY_PREFIX: `flood-${process.pid}-${Date.now()}`,
  });
});
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  await pay.stop();
  await erp.stop();
  await ctx.close();
});

async function listen(app: http.RequestListener): Promise<string> {
  const server = http.createServer(app);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}${WEBHOOK_PATH}`;
}

/** Order-flow parts of their own (a fresh unknown-transaction budget) on the test app's database, with `config`. */
function freshFlow(config: OrderingConfig, level?: 'silent'): OrderFlowParts {
  const logger = level ? createLogger('flood-test', level) : createLogger('flood-test');
  const payment = createPaymentClient(config);
  return {
    paylinks: new PaylinkJobs({ database: ctx.database, logger, config, payment }),
    paymentStatus: new PaymentStatusProcessor({ database: ctx.database, logger, config, payment }),
    erpHandOff: new ErpHandOff({ database: ctx.database, config, erpClients: ctx.services.erpClients }),
  };
}

/** Posts `n` deliveries from source `ip`, `parallel` at a time; `body(i)` is the i-th form body. Returns the answer statuses. */
async function flood(url: string, ip: string, n: number, body: (i: number) => string, parallel = 50): Promise<number[]> {
  const statuses: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < n) {
        const i = next++;
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': ip },
          body: body(i),
        });
        if (res.status === 429) expect(res.headers.get('retry-after')).not.toBeNull();
        await res.arrayBuffer();
        statuses.push(res.status);
      }
    }),
  );
  return statuses;
}
const count = (xs: number[], s: number) => xs.filter((x) => x === s).length;
const deliveries = async (): Promise<number> =>
  Number((await sql<{ n: string }>`select count(*) as n from payment_deliveries`.execute(ctx.database.db)).rows[0].n);
const jobs = async (): Promise<number> =>
  Number((await sql<{ n: string }>`select count(*) as n from outbox_messages where kind = 'payment-status'`.execute(ctx.database.db)).rows[0].n);
const providerTransactionCalls = () => pay.server.requests.filter((r) => r.path.startsWith('/api/v1/Transaction/')).length;

test('a flood of forged deliveries from one source is bounded; another source still gets through; repeats merge into one provider call', async () => {
  const url = await listen(createApp(composeOrdering(ctx.deps)));
  const forged = (i: number) => `transaction[id]=${5_000_000 + i}&transaction[status]=confirmed&transaction[invoice][referenceId]=ORD-X`;
  const a = await flood(url, '203.0.113.7', FLOOD, forged);
  expect(count(a, 200)).toBe(LIMIT);
  expect(count(a, 429)).toBe(FLOOD - LIMIT);
  expect(await deliveries()).toBe(LIMIT);
  expect(await jobs()).toBe(LIMIT);

  // Another source is not affected by the first one's flood.
  const b = await flood(url, '198.51.100.9', 5, (i) => `transaction[id]=${6_000_000 + i}&transaction[status]=waiting`);
  expect(b).toEqual([200, 200, 200, 200, 200]);

  // A third source repeats one transaction and status: one delivery (the rest merged), one job.
  const c = await flood(url, '192.0.2.44', LIMIT, () => 'transaction[id]=7000001&transaction[status]=confirmed');
  expect(count(c, 200)).toBe(LIMIT);
  const merged = await ctx.database.db.selectFrom('payment_deliveries').select(['outcome', 'repeats']).where('transaction_id', '=', 7_000_001).execute();
  expect(merged).toEqual([{ outcome: 'queued', repeats: LIMIT - 1 }]);
  expect(await jobs()).toBe(LIMIT + 5 + 1);

  // Processing: one provider call per recorded delivery, not per request.
  const before = providerTransactionCalls();
  const flow = freshFlow(ctx.deps.config);
  const dispatcher = new OutboxDispatcher({
    database: ctx.database,
    mailer: ctx.deps.mailer,
    logger: createLogger('flood-test'),
    from: 'shop@example.com',
    handlers: orderFlowHandlers(flow),
    pollIntervalMs: 20,
    baseBackoffMs: 20,
    maxBackoffMs: 100,
  });
  dispatcher.start();
  try {
    const end = Date.now() + testTime(30_000);
    while ((await ctx.database.db.selectFrom('payment_deliveries').select('id').where('outcome', 'in', ['queued', 'fetching']).execute()).length > 0) {
      if (Date.now() > end) throw new Error('deliveries not processed');
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await dispatcher.stop();
  }
  expect(providerTransactionCalls() - before).toBe(LIMIT + 5 + 1);
  const outcomes = await ctx.database.db.selectFrom('payment_deliveries').select('outcome').distinct().execute();
  expect(outcomes).toEqual([{ outcome: 'unknownTransaction' }]);
});

test('deliveries older than the retention are purged as new ones arrive, with their finished jobs', async () => {
  const url = await listen(createApp(composeOrdering(ctx.deps)));
  await sql`update payment_deliveries set received_at = now() - interval '8 days'`.execute(ctx.database.db);
  await sql`update outbox_messages set sent_at = now() - interval '8 days' where kind = 'payment-status'`.execute(ctx.database.db);
  const old = await deliveries();
  expect(old).toBeGreaterThan(40);
  // A delivery still waiting for its re-fetch is kept however old.
  await sql`insert into payment_deliveries (received_at, transaction_id, claimed_status, outcome) values (now() - interval '30 days', 42, 'waiting', 'queued')`.execute(
    ctx.database.db,
  );
  const statuses = await flood(url, '203.0.113.200', 5, (i) => `transaction[id]=${8_000_000 + i}&transaction[status]=waiting`, 1);
  expect(statuses).toEqual([200, 200, 200, 200, 200]);
  const left = await ctx.database.db
    .selectFrom('payment_deliveries')
    .select(['transaction_id', 'outcome'])
    .where('received_at', '<', new Date(Date.now() - 7 * 86_400_000))
    .execute();
  expect(left).toEqual([{ transaction_id: 42, outcome: 'queued' }]);
  const oldJobs = await sql<{
    n: string;
  }>`select count(*) as n from outbox_messages where kind = 'payment-status' and sent_at < now() - interval '7 days'`.execute(ctx.database.db);
  expect(Number(oldJobs.rows[0].n)).toBe(0);
});

test('negative control: with the limit off the same flood is recorded in full', async () => {
  const url = await listen(createApp(composeOrdering({ ...ctx.deps, config: { ...ctx.deps.config, rateLimitPaymentWebhooksPerMinute: 0 } })));
  const before = await deliveries();
  const n = 300;
  const statuses = await flood(url, '203.0.113.99', n, (i) => `transaction[id]=${9_000_000 + i}&transaction[status]=confirmed`);
  expect(count(statuses, 200)).toBe(n);
  expect((await deliveries()) - before).toBe(n);
});

test('forged deliveries of one transaction with ever new status strings merge into one delivery and one job', async () => {
  const url = await listen(createApp(composeOrdering(ctx.deps)));
  const before = await jobs();
  // Sources are many (each under its own limit); the claimed status is free text.
  for (let s = 0; s < 3; s++) {
    const statuses = await flood(url, `198.18.0.${s + 1}`, 10, (i) => `transaction[id]=7100001&transaction[status]=forged-${s}-${i}`, 5);
    expect(statuses).toEqual(Array(10).fill(200));
  }
  const rows = await ctx.database.db.selectFrom('payment_deliveries').select(['outcome', 'repeats']).where('transaction_id', '=', 7_100_001).execute();
  expect(rows).toEqual([{ outcome: 'queued', repeats: 29 }]);
  expect((await jobs()) - before).toBe(1);
  // Once its re-fetch started a new delivery gets its own job (a genuine one after a forged one is not
  // swallowed), due only after the spacing, and the next ones merge into it.
  await ctx.database.db.updateTable('payment_deliveries').set({ outcome: 'fetching' }).where('transaction_id', '=', 7_100_001).execute();
  expect(await flood(url, '198.18.0.9', 5, (i) => `transaction[id]=7100001&transaction[status]=confirmed-${i}`, 1)).toEqual(Array(5).fill(200));
  expect((await jobs()) - before).toBe(2);
  const spaced = await sql<{ wait_ms: number }>`
    select (extract(epoch from next_attempt_at - created_at) * 1000)::int as wait_ms from outbox_messages
     where kind = 'payment-status' order by id desc limit 1`.execute(ctx.database.db);
  expect(spaced.rows[0].wait_ms).toBeGreaterThanOrEqual(9_000);
});

test('re-fetches of unknown transactions share one budget: fresh forged ids cost at most that many provider calls, the rest wait', async () => {
  const url = await listen(createApp(composeOrdering(ctx.deps)));
  const n = 12;
  for (let s = 0; s < 3; s++)
    expect(await flood(url, `198.19.0.${s + 1}`, n / 3, (i) => `transaction[id]=${7_200_000 + s * 100 + i}&transaction[status]=confirmed`, 2)).toEqual(
      Array(n / 3).fill(200),
    );
  const queued = await ctx.database.db
    .selectFrom('payment_deliveries')
    .select(['id', 'transaction_id'])
    .where('transaction_id', '>=', 7_200_000)
    .where('transaction_id', '<', 7_300_000)
    .execute();
  expect(queued).toHaveLength(n);
  const run = async (budget: number) => {
    const flow = freshFlow({ ...ctx.deps.config, paymentUnknownRefetchesPerMinute: budget }, 'silent');
    const before = providerTransactionCalls();
    const results = await Promise.allSettled(queued.map((d) => flow.paymentStatus.process(d.id, Number(d.transaction_id))));
    return { calls: providerTransactionCalls() - before, refused: results.filter((r) => r.status === 'rejected').length };
  };
  expect(await run(5)).toEqual({ calls: 5, refused: n - 5 });
  // Negative control: without the budget every fresh id costs a call.
  expect(await run(0)).toEqual({ calls: n, refused: 0 });
});
