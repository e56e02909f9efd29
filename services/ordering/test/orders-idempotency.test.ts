/**
 * `Idempotency-Key` on order creation (ordering spec parameter `IdempotencyKey`): a retry returns the
 * first result (same order, one e-mail, one claim), another body → 422, a concurrent duplicate waits for
 * the first and gets its result, a first request in flight for too long → 409, failures are not stored,
 * keys are scoped per caller and expire.
 */
import { sql } from 'kysely';
import request from 'supertest';
import { messageIdFor } from '../src/outbox/outbox.service';
import { countPending } from '../src/outbox/outbox.repository';
import { placeShopOrder } from '../src/orders/placement/orders.service';
import { requestHash, takeIdempotencyKey } from '../src/orders/placement/idempotency';
import { shopOrderInput } from '../src/http/orders.handlers';
import type { components } from '../src/generated/openapi';
import { orderBody, postOrder, snapshot, startShop, type TestShop } from './support/orders';
import { testTime } from '@sports-timing/shared/src/test-time';

type ShopOrderDTO = components['schemas']['ShopOrderDTO'];
type ShopOrderRequest = components['schemas']['NewShopOrderDTO'];

let shop: TestShop;
beforeAll(async () => {
  shop = await startShop({ mail: true });
});
afterAll(async () => {
  await shop.close();
});

test('a retry with the same key returns the first order: one order, one claim, one e-mail', async () => {
  const body = orderBody({ orderItems: [{ articleNumber: 'SIAC1', quantity: 1, configuration: { cardNumber: '8300001' } }] });
  const first = await postOrder(shop, body, { 'Idempotency-Key': 'retry-1' });
  expect(first.status).toBe(200);
  const after1 = await snapshot(shop.database);
  // Key order of the body does not matter: the hash is over canonical JSON.
  const reordered = JSON.parse(
    JSON.stringify({ orderItems: body.orderItems, billingAddressIsSameAsShippingAddress: true, shippingAddress: body.shippingAddress, contact: body.contact }),
  );
  for (let i = 0; i < 3; i++) {
    const again = await postOrder(shop, reordered, { 'Idempotency-Key': 'retry-1' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
  }
  expect(await snapshot(shop.database)).toEqual(after1);
  const order = first.body as ShopOrderDTO;
  await shop.smtp!.waitFor(1);
  // One confirmation stored for the order, and it is sent: no second one can follow (the outbox sends
  // only stored messages, each marked after SMTP accepted it).
  const end = Date.now() + testTime(10_000);
  while ((await countPending(shop.database.db, 'mail')) > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  const stored = await shop.database.db
    .selectFrom('outbox_messages')
    .select(['sent_at'])
    .where('kind', '=', 'mail')
    .where('dedupe_key', '=', `order-confirmation:${order.oid}`)
    .execute();
  expect(stored).toHaveLength(1);
  expect(stored[0].sent_at).not.toBeNull();
  const mails = shop.smtp!.received.filter((m) => m.parsed.messageId === messageIdFor(`order-confirmation:${order.oid}`));
  expect(mails).toHaveLength(1);
  expect(shop.smtp!.received).toHaveLength(1);
});

test('the same key with another body → 422 and nothing written', async () => {
  const first = await postOrder(shop, orderBody({ orderItems: [{ articleNumber: 'BSF8', quantity: 1 }] }), { 'Idempotency-Key': 'retry-2' });
  expect(first.status).toBe(200);
  const before = await snapshot(shop.database);
  const other = await postOrder(shop, orderBody({ orderItems: [{ articleNumber: 'BSF8', quantity: 2 }] }), { 'Idempotency-Key': 'retry-2' });
  expect(other.status).toBe(422);
  expect(other.body).toMatchObject({ code: 3 });
  expect(await snapshot(shop.database)).toEqual(before);
});

test('keys are scoped per caller: another caller with the same key places its own order', async () => {
  const body = orderBody({ orderItems: [{ articleNumber: 'BSF8', quantity: 1 }] });
  const anonymous = await postOrder(shop, body, { 'Idempotency-Key': 'shared-key' });
  const customer = await postOrder(shop, body, { 'Idempotency-Key': 'shared-key', Authorization: await shop.ctx.bearer({ roles: ['customer'], id: 77 }) });
  expect(anonymous.status).toBe(200);
  expect(customer.status).toBe(200);
  expect(customer.body.oid).not.toBe(anonymous.body.oid);
});

test('concurrent duplicates wait for the first request and all get its order', async () => {
  const before = await snapshot(shop.database);
  const body = orderBody({ orderItems: [{ articleNumber: 'SIAC1', quantity: 1, configuration: { cardNumber: '8300002' } }] });
  const results = await Promise.all(Array.from({ length: 20 }, () => postOrder(shop, body, { 'Idempotency-Key': 'burst-1' })));
  expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
  expect(new Set(results.map((r) => r.body.oid)).size).toBe(1);
  const after = await snapshot(shop.database);
  expect(after.orders - before.orders).toBe(1);
  expect(after.outbox - before.outbox).toBe(1);
  expect(after.cardNumbers - before.cardNumbers).toBe(1);
});

test('a first request still in flight after the wait → 409; a failed request leaves the key free', async () => {
  const body = orderBody({ orderItems: [{ articleNumber: 'BSF8', quantity: 3 }] });
  // The body as the validator hands it to the handler: defaults applied.
  const validated: ShopOrderRequest = {
    ...body,
    contact: { emailOptIn: false, culture: 'en', ...body.contact },
    orderItems: body.orderItems.map((i) => ({
      ...i,
      articleBomItemOid: 0,
      subitems: i.subitems?.map((s) => ({ ...s, articleBomItemOid: s.articleBomItemOid ?? 0, subitems: undefined })),
    })),
    discountCodes: [],
  };
  const db = shop.database.db;
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let holding!: () => void;
  const isHeld = new Promise<void>((r) => (holding = r));
  // A transaction holding the key stands in for a first request that is still running.
  const first = db.transaction().execute(async (trx) => {
    await sql`insert into idempotency_keys (scope, key, request_hash, expires_at) values ('createShopOrder:anonymous', 'slow-1', ${requestHash(validated)}, now() + interval '1 day')`.execute(
      trx,
    );
    holding();
    await held;
    throw new Error('first request failed');
  });
  await isHeld;
  // The key is held until `release()`: the 409 can only come from the 300 ms wait running out.
  await expect(
    placeShopOrder(db, shopOrderInput(validated), {
      principal: null,
      idempotencyKey: 'slow-1',
      cartArticles: shop.services.cartArticles,
      requestBody: validated,
      idempotencyWaitMs: 300,
    }),
  ).rejects.toMatchObject({ status: 409 });
  release();
  await expect(first).rejects.toThrow('first request failed');
  // The first request failed, so the key is free again: the retry is processed.
  const retry = await postOrder(shop, body, { 'Idempotency-Key': 'slow-1' });
  expect(retry.status).toBe(200);

  const invalid = orderBody({ orderItems: [{ articleNumber: 'NOPE', quantity: 1 }] });
  expect((await postOrder(shop, invalid, { 'Idempotency-Key': 'fix-me' })).status).toBe(400);
  const fixed = await postOrder(shop, orderBody({ orderItems: [{ articleNumber: 'BSF8', quantity: 1 }] }), { 'Idempotency-Key': 'fix-me' });
  expect(fixed.status).toBe(200);
});

test("taking a key bounds only its own wait (lock_timeout is the session's own again afterwards) and purges expired keys", async () => {
  const db = shop.database.db;
  await sql`insert into idempotency_keys (scope, key, request_hash, expires_at) values ('test:purge', 'gone-1', 'h', now() - interval '1 minute'), ('test:purge', 'gone-2', 'h', now() - interval '1 minute'), ('test:purge', 'kept', 'h', now() + interval '1 day')`.execute(
    db,
  );
  await db.transaction().execute(async (trx) => {
    const session = await sql<{ lock_timeout: string }>`select current_setting('lock_timeout') as lock_timeout`.execute(trx);
    expect(session.rows[0].lock_timeout).toBe('3s'); // DATABASE_LOCK_TIMEOUT_MS's default
    expect(await takeIdempotencyKey(trx, { scope: 'test:purge', key: 'new-1', requestHash: 'h' }, 300)).toBeNull();
    // Later waits of the order (card numbers, discount codes) are bounded by the session's timeout, not the key's wait.
    const r = await sql<{ lock_timeout: string }>`select current_setting('lock_timeout') as lock_timeout`.execute(trx);
    expect(r.rows[0].lock_timeout).toBe('3s');
  });
  const left = await db.selectFrom('idempotency_keys').select('key').where('scope', '=', 'test:purge').orderBy('key').execute();
  expect(left.map((r) => r.key)).toEqual(['kept', 'new-1']);
});

test('an expired key is taken over by a new request', async () => {
  const body = orderBody({ orderItems: [{ articleNumber: 'BSF8', quantity: 1 }] });
  const first = await postOrder(shop, body, { 'Idempotency-Key': 'old-key' });
  await shop.database.db
    .updateTable('idempotency_keys')
    .set({ expires_at: new Date(Date.now() - 1000) })
    .where('key', '=', 'old-key')
    .execute();
  const second = await postOrder(shop, orderBody({ orderItems: [{ articleNumber: 'BSF8', quantity: 5 }] }), { 'Idempotency-Key': 'old-key' });
  expect(second.status).toBe(200);
  expect(second.body.oid).not.toBe(first.body.oid);
});

test('card orders (POST /api/rest/v1/order) are idempotent as well', async () => {
  const body = {
    contact: { firstName: 'Eva', lastName: 'Berg', email: 'eva@example.com', culture: 'sv' },
    shippingAddress: { firstName: 'Eva', lastName: 'Berg', address1: 'Storgatan 1', city: 'Umeå', country: 'SE' },
    billingAddressIsSameAsShippingAddress: true,
    items: [{ productId: 'SIAC1', quantity: 2 }],
  };
  const first = await request(shop.url).post('/api/rest/v1/order').set('Idempotency-Key', 'card-1').send(body);
  expect(first.status).toBe(200);
  const again = await request(shop.url).post('/api/rest/v1/order').set('Idempotency-Key', 'card-1').send(body);
  expect(again.body).toEqual(first.body);
  const other = await request(shop.url)
    .post('/api/rest/v1/order')
    .set('Idempotency-Key', 'card-1')
    .send({ ...body, notes: 'changed' });
  expect(other.status).toBe(422);
  expect(other.headers['content-type']).toContain('application/problem+json');
});
