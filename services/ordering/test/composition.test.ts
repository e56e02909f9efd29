/**
 * The composition root (`composeOrdering`, docs/architecture.md "Composition roots"): every call builds the
 * stateful objects of one app, so two apps in one process share nothing unless a caller hands one's objects
 * to the other: clearing one app's caches leaves the other's article list as it was cached, two key rings
 * coexist, and inline paylinks are an explicit option.
 */
import type { Express } from 'express';
import request from 'supertest';
import { sql } from 'kysely';
import { createApp } from '../src/app';
import { composeOrdering } from '../src/composition';
import { DecryptionError } from '../src/crypto/aead';
import { loadDemoCatalog } from '../src/demo/catalog';
import { startOrdering, type OrderingTestContext } from './support/app';
import type { components } from '../src/generated/openapi';

const key = (b: number) => Buffer.alloc(32, b).toString('base64');
const ARTICLES = '/api/grpc-json/v1/shop/articles';

let ctx: OrderingTestContext;
beforeAll(async () => {
  ctx = await startOrdering();
  await loadDemoCatalog(ctx.database.db);
});
afterAll(async () => ctx.close());

async function listed(app: Express): Promise<string[]> {
  const res = await request(app).get(ARTICLES).expect(200);
  return (res.body as components['schemas']['ArticleDTO'][]).map((a) => a.articleNumber);
}

async function setShop(articleNumber: string, isShop: boolean): Promise<void> {
  await sql`update articles set is_shop_article = ${isShop} where article_number = ${articleNumber}`.execute(ctx.database.db);
}

it("clearing one app's caches leaves another app's caches in the same process alone", async () => {
  const other = composeOrdering(ctx.deps);
  const otherApp = createApp(other);
  expect(other.services.caches).not.toBe(ctx.services.caches);
  expect(other.services.articleLists).not.toBe(ctx.services.articleLists);
  await ctx.services.caches.clearAll();
  expect(await listed(ctx.app)).toContain('BSF8');
  expect(await listed(otherApp)).toContain('BSF8');
  await setShop('BSF8', false);
  try {
    // The clear-caches operation of the first app (its registry; the NOTIFY finds no listener in this test).
    const admin = await ctx.bearer({ roles: ['admin'] });
    await request(ctx.app).post('/api/rest/v1/maintenance/clear-caches').set('authorization', admin).expect(200);
    expect(await listed(ctx.app)).not.toContain('BSF8');
    // The other app still answers its own cached list (fresh for a second) ...
    expect(await listed(otherApp)).toContain('BSF8');
    // ... until its own registry is cleared (negative control: the list was a cached one).
    await other.services.caches.clearAll();
    expect(await listed(otherApp)).not.toContain('BSF8');
  } finally {
    await setShop('BSF8', true);
    await ctx.services.caches.clearAll();
  }
});

it('two key rings coexist in one process; an ephemeral ring belongs to its composition', () => {
  const one = composeOrdering({ ...ctx.deps, keyRing: `1:${key(1)}` }).services.encryption;
  const two = composeOrdering({ ...ctx.deps, keyRing: `1:${key(1)},2:${key(2)}` }).services.encryption;
  expect(one.currentVersion).toBe(1);
  expect(two.currentVersion).toBe(2);
  // Version 1 is the same key in both rings: either reads what the other wrote under it.
  expect(two.decrypt(one.encrypt('token', 'aad'), 'aad')).toBe('token');
  expect(() => one.decrypt(two.encrypt('token', 'aad'), 'aad')).toThrow(DecryptionError);
  // Configured keys when no ring is handed in.
  expect(composeOrdering({ ...ctx.deps, config: { ...ctx.deps.config, encryptionKeys: `3:${key(3)}` } }).services.encryption.currentVersion).toBe(3);
  // Without keys each composition has a random ring of its own.
  const bare = { ...ctx.deps, config: { ...ctx.deps.config, encryptionKeys: undefined } };
  const a = composeOrdering(bare).services.encryption;
  const b = composeOrdering(bare).services.encryption;
  expect(() => b.decrypt(a.encrypt('token', 'aad'), 'aad')).toThrow(DecryptionError);
});

it('inline paylinks are an explicit option of the composition', () => {
  expect(ctx.services.inlinePaylinks).toBeUndefined();
  const withPaylinks = composeOrdering({ ...ctx.deps, inlinePaylinks: true }).services;
  expect(withPaylinks.inlinePaylinks).toBe(withPaylinks.paylinks);
});
