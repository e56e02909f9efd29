/**
 * The in-process article-list cache (issue 8, catalog.service.ts): repeated lists are served from memory,
 * a catalogue change shows after `clear-caches` (what the article import triggers) at once, and after the
 * freshness interval without it; the cache key separates languages and user groups.
 */
import request from 'supertest';
import { sql } from 'kysely';
import { loadDemoCatalog } from '../src/demo/catalog';
import { ARTICLE_LIST_FRESH_MS } from '../src/catalog/catalog.service';
import { caches } from '../src/maintenance/caches';
import { startOrdering, type OrderingTestContext } from './helpers';

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
  await caches.clearAll();
  expect(await numbers()).toContain('BSF8');
  await setShop('BSF8', false);
  try {
    // Within the freshness interval the list comes from memory.
    expect(await numbers()).toContain('BSF8');
    await caches.clearAll();
    expect(await numbers()).not.toContain('BSF8');
  } finally {
    await setShop('BSF8', true);
    await caches.clearAll();
  }
  expect(await numbers()).toContain('BSF8');
});

it('refreshes a stale list in the background without a clear', async () => {
  await caches.clearAll();
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
    await caches.clearAll();
  }
});

it('keeps lists of different languages apart', async () => {
  await caches.clearAll();
  const en = (await request(ctx.app).get(ARTICLES).set('accept-language', 'en').expect(200)).body as { articleNumber: string; name: string }[];
  const de = (await request(ctx.app).get(ARTICLES).set('accept-language', 'de').expect(200)).body as { articleNumber: string; name: string }[];
  expect(en.find((a) => a.articleNumber === 'BSF8')?.name).toBe('BSF8 control station');
  expect(de.find((a) => a.articleNumber === 'BSF8')?.name).toBe('BSF8 Poststation');
});
