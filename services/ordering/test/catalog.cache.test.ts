/**
 * The in-process article-list cache (catalog-caches.ts `ArticleListCache`): repeated lists are served from memory,
 * a catalogue change shows after `clear-caches` (what the article import triggers) at once, and after the
 * freshness interval without it; the cache key separates languages and user groups. Without response
 * validation (production) the cached list is sent as its pre-serialized (and pre-compressed) body, which
 * follows the same invalidation.
 */
import type { Express } from 'express';
import request from 'supertest';
import { sql } from 'kysely';
import { loadDemoCatalog } from '../src/demo/catalog';
import { ARTICLE_LIST_FRESH_MS } from '../src/catalog/catalog-caches';
import { createApp } from '../src/app';
import { startOrdering, type OrderingTestContext } from './support/app';

let ctx: OrderingTestContext;
beforeAll(async () => {
  ctx = await startOrdering();
  await loadDemoCatalog(ctx.database.db);
});
afterAll(async () => ctx.close());

const ARTICLES = '/api/grpc-json/v1/shop/articles';

async function numbers(headers: Record<string, string> = {}): Promise<string[]> {
  const res = await request(ctx.app).get(ARTICLES).set(headers).expect(200);
  return (res.body as { articleNumber: string }[]).map((a) => a.articleNumber);
}

async function setShop(articleNumber: string, isShop: boolean): Promise<void> {
  await sql`update articles set is_shop_article = ${isShop} where article_number = ${articleNumber}`.execute(ctx.database.db);
}

it('serves a cached list until clear-caches, then the changed catalogue', async () => {
  await ctx.services.caches.clearAll();
  expect(await numbers()).toContain('BSF8');
  await setShop('BSF8', false);
  try {
    // Within the freshness interval the list comes from memory.
    expect(await numbers()).toContain('BSF8');
    await ctx.services.caches.clearAll();
    expect(await numbers()).not.toContain('BSF8');
  } finally {
    await setShop('BSF8', true);
    await ctx.services.caches.clearAll();
  }
  expect(await numbers()).toContain('BSF8');
});

it('refreshes a stale list in the background without a clear', async () => {
  await ctx.services.caches.clearAll();
  expect(await numbers({ 'accept-language': 'fr' })).toContain('BSF8');
  await setShop('BSF8', false);
  try {
    await new Promise((r) => setTimeout(r, ARTICLE_LIST_FRESH_MS + 50));
    // The first request after the interval gets the stale list and starts the reload; later ones see the change.
    await numbers({ 'accept-language': 'fr' });
    let seen: string[] = [];
    for (let i = 0; i < 50; i++) {
      seen = await numbers({ 'accept-language': 'fr' });
      if (!seen.includes('BSF8')) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(seen).not.toContain('BSF8');
  } finally {
    await setShop('BSF8', true);
    await ctx.services.caches.clearAll();
  }
});

it('keeps lists of different languages apart', async () => {
  await ctx.services.caches.clearAll();
  const en = (await request(ctx.app).get(ARTICLES).set('accept-language', 'en').expect(200)).body as { articleNumber: string; name: string }[];
  const de = (await request(ctx.app).get(ARTICLES).set('accept-language', 'de').expect(200)).body as { articleNumber: string; name: string }[];
  expect(en.find((a) => a.articleNumber === 'BSF8')?.name).toBe('BSF8 control station');
  expect(de.find((a) => a.articleNumber === 'BSF8')?.name).toBe('BSF8 Poststation');
});

/** BSF8 as a listed article (it is also named in another article's BOM slot). */
const BSF8_LISTED = '{"articleNumber":"BSF8","name":';

describe('pre-serialized body (response validation off, as in production)', () => {
  let prodApp: Express;
  beforeAll(() => {
    // The same services as ctx.app (one instance's caches), without response validation.
    prodApp = createApp({ ...ctx.deps, services: ctx.services, validateResponses: false });
  });

  const raw = (app: Express, headers: Record<string, string>) =>
    request(app)
      .get(ARTICLES)
      .set(headers)
      .buffer(true)
      .parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => done(null, Buffer.concat(chunks)));
      })
      .expect(200);

  it('answers the same JSON as the validated path, gzip-encoded only when accepted', async () => {
    await ctx.services.caches.clearAll();
    const validated = (await request(ctx.app).get(ARTICLES).set('accept-language', 'de').expect(200)).body as unknown;
    const plain = await raw(prodApp, { 'accept-language': 'de', 'accept-encoding': 'identity' });
    expect(plain.headers['content-type']).toMatch(/^application\/json/);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toMatch(/Accept-Encoding/i);
    expect(JSON.parse((plain.body as Buffer).toString('utf8'))).toEqual(validated);
    const gz = await raw(prodApp, { 'accept-language': 'de', 'accept-encoding': 'gzip, deflate, br' });
    // superagent inflates gzip bodies itself: a body that parses proves the encoding; it is also smaller.
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(Number(gz.headers['content-length'])).toBeLessThan(Number(plain.headers['content-length']));
    expect(JSON.parse((gz.body as Buffer).toString('utf8'))).toEqual(validated);
  });

  it('drops the serialized and compressed bodies on clear-caches (what the article import triggers)', async () => {
    await ctx.services.caches.clearAll();
    const before = await raw(prodApp, { 'accept-encoding': 'gzip' });
    expect((before.body as Buffer).toString('utf8')).toContain(BSF8_LISTED);
    await setShop('BSF8', false);
    try {
      // Still the cached bytes within the freshness interval, then the changed catalogue after a clear.
      expect(((await raw(prodApp, { 'accept-encoding': 'gzip' })).body as Buffer).toString('utf8')).toContain(BSF8_LISTED);
      await ctx.services.caches.clearAll();
      expect(((await raw(prodApp, { 'accept-encoding': 'gzip' })).body as Buffer).toString('utf8')).not.toContain(BSF8_LISTED);
      expect(((await raw(prodApp, {})).body as Buffer).toString('utf8')).not.toContain(BSF8_LISTED);
    } finally {
      await setShop('BSF8', true);
      await ctx.services.caches.clearAll();
    }
  });
});
