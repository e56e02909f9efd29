/**
 * The order flow over real HTTP for tests: the ordering app with its demo catalogue and inline paylinks, its
 * order flow (`ctx.services`: `paylinks`, `paymentStatus`, `erpHandOff`, `salesOrders`) against the payment simulator (and the ERP simulator unless left out), served on a free port,
 * with an outbox dispatcher running the flow's jobs. `close()` stops everything it started.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@sports-timing/shared';
import { createErpSimulator, type ErpSimulator } from '@sports-timing/erp-simulator';
import { createPaymentSimulator, type PaymentSimulator } from '@sports-timing/payment-simulator';
import { loadDemoCatalog } from '../../src/demo/catalog';
import { orderFlowHandlers } from '../../src/composition';
import type { Mailer } from '../../src/mail/mailer';
import { OutboxDispatcher, type OutboxDispatcherOptions } from '../../src/outbox/outbox.service';
import { startOrdering, type OrderingTestContext } from './app';
import { testTime } from '@sports-timing/shared/src/test-time';

/** Path of the payment provider's webhook on the ordering service. */
export const WEBHOOK_PATH = '/api/rest/v1/payment-provider/status';

/** A started stack; see the module doc. */
export interface OrderFlowStack {
  ctx: OrderingTestContext;
  pay: PaymentSimulator;
  /** Absent when started with `erp: false`. */
  erp: ErpSimulator | undefined;
  dispatcher: OutboxDispatcher;
  server: http.Server;
  /** Base URL of the ordering app. */
  url: string;
  /** A payment simulator `/__control` call (pay, cancel, refund, subscribe …); throws unless 200. */
  control<T>(action: string, body: unknown): Promise<T>;
  close(): Promise<void>;
}

/**
 * Starts the stack; `name` names its dispatcher's logger, `erp: false` leaves the ERP simulator out, `env` adds configuration,
 * `mailer` replaces the `.eml` drop (e.g. SMTP to a test relay), `onDead` is the dispatcher's (as `server.ts` wires it).
 */
export async function startOrderFlowStack(
  name: string,
  opts: { erp?: boolean; env?: Record<string, string>; mailer?: Mailer; onDead?: OutboxDispatcherOptions['onDead'] } = {},
): Promise<OrderFlowStack> {
  const erp = opts.erp === false ? undefined : await createErpSimulator().start();
  const pay = await createPaymentSimulator({ webhookBackoffMs: 100 }).start();
  const payControl = pay.baseUrl.replace(/\/api\/v1$/, '/__control');
  const ctx = await startOrdering(
    {
      PAYMENT_BASE_URL: pay.baseUrl,
      ...(erp ? { ERP_BASE_URL_WECLAPP: erp.baseUrl('main'), ERP_BASE_URL_WECLAPP_SANDBOX: erp.baseUrl('sandbox') } : {}),
      ...opts.env,
    },
    { inlinePaylinks: true, ...(opts.mailer ? { mailer: opts.mailer } : {}) },
  );
  await loadDemoCatalog(ctx.database.db);
  const logger = createLogger(name);
  const server = http.createServer(ctx.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dispatcher = new OutboxDispatcher({
    database: ctx.database,
    mailer: ctx.deps.mailer,
    logger,
    from: 'shop@example.com',
    handlers: orderFlowHandlers(ctx.services),
    pollIntervalMs: 50,
    baseBackoffMs: 50,
    maxBackoffMs: 400,
    onDead: opts.onDead,
  });
  dispatcher.start();
  return {
    ctx,
    pay,
    erp,
    dispatcher,
    server,
    url,
    async control<T>(action: string, body: unknown): Promise<T> {
      const res = await fetch(`${payControl}/${action}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (res.status !== 200) throw new Error(`control ${action}: ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    },
    async close() {
      await dispatcher.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pay.stop();
      await erp?.stop();
      await ctx.close();
    },
  };
}

/** Polls `cond` every 50 ms until it holds; throws naming `what` after `ms`. */
export async function until(what: string, cond: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + testTime(ms);
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
