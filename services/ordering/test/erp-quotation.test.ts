/**
 * `center/create-quotation-for-subscription` against the ERP simulator over real HTTP and a real
 * PostgreSQL: only subscription articles are accepted (400 otherwise, nothing recorded); the request is
 * recorded as an outbox job and the quotation appears in the ERP exactly once, also when the ERP was down
 * at first (retried) — idempotent by the request's reference. The job runs only in a dispatcher given the
 * app's jobs (`composeOrdering(deps).services.outboxJobs`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { ARTICLE_NUMBERS, createErpSimulator, type ErpSimulator } from '@sports-timing/erp-simulator';
import { createLogger } from '@sports-timing/shared';
import { importArticles } from '../src/catalog/catalog.import';
import { ERP_QUOTATION_JOB, type QuotationJobPayload } from '../src/quotations/center-quotation.service';
import { fileMailer } from '../src/mail/mailer';
import { OutboxDispatcher } from '../src/outbox/outbox.service';
import { startOrdering, type OrderingTestContext } from './support/app';
import { testTime } from '@sports-timing/shared/src/test-time';

let sim: ErpSimulator;
let ctx: OrderingTestContext;
let customer: string;
let dispatcher: OutboxDispatcher | undefined;
const mailDir = mkdtempSync(path.join(tmpdir(), 'erp-quotation-test-mail-'));

beforeAll(async () => {
  sim = await createErpSimulator().start();
  ctx = await startOrdering({ ERP_BASE_URL_WECLAPP: sim.baseUrl('main'), ERP_TIMEOUT_MS: String(testTime(1_000)) });
  customer = await ctx.bearer({ roles: ['customer'], id: 42 });
  await importArticles({ db: ctx.database.db, erp: ctx.services.erpClients.client, logger: ctx.deps.logger, caches: ctx.services.caches }, 'weclapp');
});
afterAll(async () => {
  await dispatcher?.stop();
  await ctx.close();
  await sim.stop();
  rmSync(mailDir, { recursive: true, force: true });
});

const body = (articleNumber: string) => ({
  subscriptionArticleNumber: articleNumber,
  quantity: 3,
  startDate: '2027-01-01',
  address: { firstName: 'Eva', lastName: 'Läufer', club: 'OLG Nord', address1: 'Weg 1', zip: '20457', city: 'Hamburg', country: 'DE' },
  email: 'eva@example.com',
});
const post = (b: object, auth = customer) => request(ctx.app).post('/api/rest/v1/center/create-quotation-for-subscription').set('authorization', auth).send(b);
const jobs = () => ctx.database.db.selectFrom('outbox_messages').selectAll().where('kind', '=', ERP_QUOTATION_JOB).execute();
async function eventually(check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const until = Date.now() + testTime(ms);
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

it('rejects non-subscription articles and anonymous callers, recording nothing', async () => {
  await post(body(ARTICLE_NUMBERS.siac)).expect(400);
  await post(body('NO-SUCH-ARTICLE')).expect(400);
  await request(ctx.app).post('/api/rest/v1/center/create-quotation-for-subscription').send(body(ARTICLE_NUMBERS.centerSubscription)).expect(401);
  expect(await jobs()).toEqual([]);
});

it('a dispatcher runs only the job kinds it was given: no process-wide handler registry', async () => {
  expect(Object.keys(ctx.services.outboxJobs.handlers).sort()).toEqual([
    'erp-quotation',
    'erp-sales-order',
    'payment-paylink',
    'payment-paylink-delete',
    'payment-status',
  ]);
  await post(body(ARTICLE_NUMBERS.centerSubscription)).expect(200);
  // The app is composed (startOrdering ran composeOrdering), yet a dispatcher without its jobs has no handler.
  const bare = new OutboxDispatcher({ database: ctx.database, mailer: fileMailer(mailDir), logger: createLogger('erp-quotation-bare'), pollIntervalMs: 50 });
  await bare.drain();
  expect((await jobs()).map((j) => j.attempts)).toEqual([0]);
  await ctx.database.db.deleteFrom('outbox_messages').where('kind', '=', ERP_QUOTATION_JOB).execute();
});

it('creates the quotation in the ERP once, retrying while the ERP is down', async () => {
  await sim.server.down('reset');
  await post(body(ARTICLE_NUMBERS.centerSubscription)).expect(200);
  const [job] = await jobs();
  const payload = job.payload as QuotationJobPayload;
  expect(payload).toMatchObject({ articleNumber: ARTICLE_NUMBERS.centerSubscription, quantity: 3, email: 'eva@example.com', requestedBy: 'user:42:test' });
  dispatcher = new OutboxDispatcher({
    database: ctx.database,
    mailer: fileMailer(mailDir),
    logger: createLogger('erp-quotation-test'),
    from: 'Shop <shop@example.com>',
    // The app's job kinds, as server.ts gives them to its dispatcher.
    ...ctx.services.outboxJobs,
    pollIntervalMs: 50,
    baseBackoffMs: 50,
    maxBackoffMs: 200,
  });
  dispatcher.start();
  await eventually(async () => ((await jobs())[0]?.attempts ?? 0) >= 1);
  await sim.server.up();
  await eventually(async () => (await jobs())[0]?.sent_at !== null);
  const erp = ctx.services.erpClients.client;
  const quotation = await erp.findQuotationByReference('weclapp', payload.reference);
  expect(quotation).toMatchObject({
    customerId: await erp.customerIdByNumber('weclapp', 'C-9000'),
    quotationItems: [{ articleNumber: ARTICLE_NUMBERS.centerSubscription, quantity: '3' }],
  });
  expect(quotation!.commission).toContain('eva@example.com');
  const all = (sim.state() as { tenants: { main: { quotation: unknown[] } } }).tenants.main.quotation;
  expect(all).toHaveLength(1);
});
