/**
 * The catalogue's in-process caches of one app (docs/architecture.md "Composition roots"): the cart articles
 * the order pipeline and the discount check price from, and the rendered shop article lists. The composition
 * root (`composeOrdering`) builds one of each per app, over the app's database, and registers both in the
 * app's cache registry, so that an article import and `maintenance/clear-caches` drop them on every instance.
 * Two apps in one process share neither.
 */
import type { JsonBody } from '@sports-timing/shared';
import type { CacheRegistry } from '../maintenance/caches';
import type { ArticleDTO, CatalogArticle } from './catalog.mapper';

/** How long an article read for a cart is used again without reading it (ms); see {@link CartArticleCache}. @internal */
export const CART_ARTICLE_FRESH_MS = 1_000;

/** Most articles kept by a {@link CartArticleCache} (more: the cache starts over). */
const CART_ARTICLE_MAX_ENTRIES = 10_000;

/**
 * Articles by number for carts (order placement and discount validation price from it): `load` (the
 * catalogue's `findCatalogArticles` over the app's database) runs for the numbers not read within
 * {@link CART_ARTICLE_FRESH_MS}. Only articles that exist are kept (numbers come from requests). Registered as
 * cache `cart-articles`: the article import and `maintenance/clear-caches` drop it on every instance, so an
 * imported price or availability applies to the next order at once; other catalogue writes (none outside
 * the import today) within a second. The articles are shared between callers: read them, never change them.
 */
export class CartArticleCache {
  private entries = new Map<string, { article: CatalogArticle; loadedAt: number }>();
  /** Counts clears, so that a load that overlapped one is not kept. */
  private generation = 0;

  constructor(
    private readonly load: (articleNumbers: readonly string[]) => Promise<Map<string, CatalogArticle>>,
    registry: CacheRegistry,
  ) {
    registry.register('cart-articles', () => this.clear());
  }

  private clear(): void {
    this.entries = new Map();
    this.generation++;
  }

  /** The articles of `articleNumbers` that exist, by number; at most {@link CART_ARTICLE_FRESH_MS} old. */
  async find(articleNumbers: readonly string[]): Promise<Map<string, CatalogArticle>> {
    const entries = this.entries;
    const startedAt = Date.now();
    const generation = this.generation;
    const found = new Map<string, CatalogArticle>();
    const missing: string[] = [];
    for (const n of new Set(articleNumbers)) {
      const hit = entries.get(n);
      if (hit && startedAt - hit.loadedAt < CART_ARTICLE_FRESH_MS) found.set(n, hit.article);
      else missing.push(n);
    }
    if (missing.length === 0) return found;
    const loaded = await this.load(missing);
    // A load that overlapped a clear may hold what the clear was for: used for this call (as an uncached
    // read would be), not kept.
    const keep = generation === this.generation;
    if (keep && entries.size + loaded.size > CART_ARTICLE_MAX_ENTRIES) entries.clear();
    for (const [n, article] of loaded) {
      found.set(n, article);
      if (keep) entries.set(n, { article, loadedAt: startedAt });
    }
    return found;
  }
}

/** Answers younger than this (ms) are served as they are (article list p99 < 10 ms at 500 req/s). @internal */
export const ARTICLE_LIST_FRESH_MS = 1_000;

/** Answers up to this age (ms) are still served while one request refreshes them in the background. */
const ARTICLE_LIST_MAX_AGE_MS = 30_000;

/** Most cached answers (distinct group × flags × filter × language preferences). */
const ARTICLE_LIST_MAX_ENTRIES = 1_000;

interface ListEntry {
  value: Promise<JsonBody<ArticleDTO[]>>;
  loadedAt: number;
  refreshing: boolean;
}

/**
 * Rendered article lists (DTOs and their JSON body) of one app by query key (caller group, flags, filter,
 * language preferences; `shopArticleListBody`). Fresh for {@link ARTICLE_LIST_FRESH_MS}; then served stale
 * while a single background load replaces it, up to {@link ARTICLE_LIST_MAX_AGE_MS}, after which callers wait
 * for a load (shared by concurrent callers). Registered as cache `shop-articles`: the article import and
 * `maintenance/clear-caches` drop it on every instance, so an import is visible at once; other catalogue
 * writes (none outside the import today) show within about a second.
 */
export class ArticleListCache {
  private entries = new Map<string, ListEntry>();

  constructor(registry: CacheRegistry) {
    registry.register('shop-articles', () => this.clear());
  }

  private clear(): void {
    this.entries = new Map();
  }

  /** The list cached under `key`, else (and for a stale one, in the background) the answer of `load`. */
  get(key: string, load: () => Promise<JsonBody<ArticleDTO[]>>): Promise<JsonBody<ArticleDTO[]>> {
    const entries = this.entries;
    const now = Date.now();
    const hit = entries.get(key);
    if (hit && now - hit.loadedAt < ARTICLE_LIST_FRESH_MS) return hit.value;
    if (hit && now - hit.loadedAt < ARTICLE_LIST_MAX_AGE_MS) {
      if (!hit.refreshing) {
        hit.refreshing = true;
        load().then(
          (value) => {
            if (entries.get(key) === hit) entries.set(key, { value: Promise.resolve(value), loadedAt: Date.now(), refreshing: false });
          },
          () => {
            hit.refreshing = false;
          },
        );
      }
      return hit.value;
    }
    const value = load();
    const entry: ListEntry = { value, loadedAt: now, refreshing: false };
    if (entries.size >= ARTICLE_LIST_MAX_ENTRIES) entries.delete(entries.keys().next().value as string);
    entries.set(key, entry);
    value.catch(() => {
      if (entries.get(key) === entry) entries.delete(key);
    });
    return value;
  }
}
