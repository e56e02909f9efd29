/**
 * Shared set-up of the order and discount tests: the real app on a listening loopback server (so
 * hundreds of concurrent requests share one server), the demo catalogue, an optional real SMTP server
 * with an outbox dispatcher, request bodies, and a snapshot of every table an order writes to.
 */
import { testConnectTimeoutMs } from '@sports-timing/shared/src/test-time';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import request from 'supertest';
import { createDatabase, createLogger, type Database } from '@sports-timing/shared';
import { createApp } from '../../src/app';
import { composeOrdering, type OrderingServices } from '../../src/composition';
import type { DB } from '../../src/db/schema';
import { loadDemoCatalog } from '../../src/demo/catalog';
import type { components } from '../../src/generated/openapi';
import { smtpMailer } from '../../src/mail/mailer';
import { OutboxDispatcher } from '../../src/outbox/outbox.service';
import { startOrdering, type OrderingTestContext } from './app';
import { startTestSmtp, type TestSmtp } from './smtp';

type Schemas = components['schemas'];
/** Fields with a spec default are optional in a request (the validator fills them in). */
type WithOptional<T, K extends keyof T> = Omit<T, K> & Partial<Pick<T, K>>;
/** Spec `ShopOrderContactDTO` as a client sends it. */
export type NewContact = WithOptional<Schemas['ShopOrderContactDTO'], 'emailOptIn' | 'culture'>;
/** Spec `NewShopOrderItemDTO` as a client sends it. */
export type NewItem = WithOptional<Omit<Schemas['NewShopOrderItemDTO'], 'subitems'>, 'articleBomItemOid'> & { subitems?: NewItem[] };
/** Spec `NewShopOrderDTO` as a client sends it. */
export type NewShopOrder = Omit<Schemas['NewShopOrderDTO'], 'contact' | 'orderItems' | 'discountCodes'> & {
  contact: NewContact;
  orderItems: NewItem[];
  discountCodes?: string[];
};

/** A running shop for tests. */
export interface TestShop {
  ctx: OrderingTestContext;
  /** The app's own pool (larger than the default, for the concurrency tests). */
  database: Database<DB>;
  /** The services composed for the app over {@link database} (not those of `ctx.app`). */
  services: OrderingServices;
  /** Base URL of the listening server. */
  url: string;
  /** Present when started with `mail: true`. */
  smtp?: TestSmtp;
  staff(): Promise<string>;
  close(): Promise<void>;
}

/** Starts the shop: fresh database, demo catalogue, app on a loopback port; with `mail`, SMTP and a dispatcher. */
export async function startShop(opts: { mail?: boolean; poolSize?: number } = {}): Promise<TestShop> {
  const ctx = await startOrdering();
  await loadDemoCatalog(ctx.database.db);
  const database = createDatabase<DB>({
    url: ctx.testDb.url,
    schema: 'ordering',
    max: opts.poolSize ?? 20,
    logger: createLogger('orders-test'),
    connectTimeoutMs: testConnectTimeoutMs(),
  });
  const ordering = composeOrdering({ ...ctx.deps, database });
  const app = createApp(ordering);
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let smtp: TestSmtp | undefined;
  let dispatcher: OutboxDispatcher | undefined;
  if (opts.mail) {
    smtp = await startTestSmtp();
    dispatcher = new OutboxDispatcher({
      database,
      mailer: smtpMailer(smtp.url),
      logger: createLogger('orders-test'),
      from: 'Shop <shop@example.com>',
      pollIntervalMs: 50,
      baseBackoffMs: 50,
      maxBackoffMs: 200,
    });
    dispatcher.start();
  }
  return {
    ctx,
    database,
    services: ordering.services,
    url,
    smtp,
    staff: () => ctx.bearer({ roles: ['support'], userGroup: 'internal', id: 900 }),
    async close() {
      await dispatcher?.stop();
      await smtp?.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await database.close();
      await ctx.close();
    },
  };
}

/** A valid order of one personalised SIAC shipped to Berlin by an anonymous customer (culture de-CH). */
export function orderBody(overrides: Partial<NewShopOrder> = {}): NewShopOrder {
  return {
    contact: { firstName: 'Anna', lastName: 'Muster', email: 'anna@example.com', culture: 'de-CH' },
    shippingAddress: { firstName: 'Anna', lastName: 'Muster', address1: 'Hauptstraße 1', zip: '10115', city: 'Berlin', countryCode: 'DE' },
    billingAddressIsSameAsShippingAddress: true,
    orderItems: [{ articleNumber: 'SIAC1', quantity: 1, configuration: { cardNumber: '8123456', personalDataFirstName: 'Anna' } }],
    ...overrides,
  };
}

/** POST a shop order. */
export function postOrder(shop: TestShop, body: unknown, headers: Record<string, string> = {}) {
  const r = request(shop.url)
    .post('/api/grpc-json/v1/shop/orders')
    .set(headers)
    .send(body as object);
  return r;
}

/** Creates a campaign through the API (as staff); returns its codes. */
export async function createCodes(shop: TestShop, body: Partial<Schemas['CreateDiscountCodesRequest']>): Promise<string[]> {
  const res = await request(shop.url)
    .post('/api/grpc-json/v1/shop/discount-codes/create')
    .set('Authorization', await shop.staff())
    .send({
      campaignName: 'Test',
      kind: 'percent',
      ...(body.kind === 'fixedAmount' ? {} : { percent: 10 }),
      ...(body.codes ? {} : { numberOfCodes: 1 }),
      ...body,
    });
  if (res.status !== 200) throw new Error(`create codes: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as Schemas['CreateDiscountCodesReply']).codes;
}

/** Row counts (and the redemption total) of everything an order writes. */
export interface Snapshot {
  orders: number;
  orderItems: number;
  stateChanges: number;
  cardNumbers: number;
  redemptions: number;
  redemptionCounter: number;
  /** E-mails in the outbox (other job kinds, e.g. the paylink job, are not counted). */
  outbox: number;
  idempotencyKeys: number;
}

/** Counts the rows an order writes. */
export async function snapshot(database: Database<DB>): Promise<Snapshot> {
  const r = await sql<Snapshot>`
    select
      (select count(*) from orders)::int as "orders",
      (select count(*) from order_items)::int as "orderItems",
      (select count(*) from order_state_changes)::int as "stateChanges",
      (select count(*) from card_numbers)::int as "cardNumbers",
      (select count(*) from discount_redemptions)::int as "redemptions",
      (select coalesce(sum(redemptions), 0)::int from discount_codes) as "redemptionCounter",
      (select count(*) from outbox_messages where kind = 'mail')::int as "outbox",
      (select count(*) from idempotency_keys)::int as "idempotencyKeys"`.execute(database.db);
  return r.rows[0];
}
