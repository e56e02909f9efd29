/**
 * HTTP caching of punch reads (docs/decisions.md §7; spec `getPunches`, `getPublicEventPunches`,
 * `getRocPunches`, `getRocPunchesWithKey`): which answers a shared cache (nginx, a CDN) may keep, for how long,
 * and the validator that lets it revalidate with a 304.
 *
 * - An anonymous read that answers at once is the same for every anonymous caller: `public, max-age=N,
 *   stale-while-revalidate=N` (`TIMING_PUNCH_MAX_AGE_SECONDS`) with a weak `ETag` made of the visible head and
 *   the read's key (`PunchReadResult.version`): equal tags mean equal bodies, and nothing of the body is hashed.
 *   `stale-while-revalidate` (RFC 5861) bounds how old a page a cache may serve while it revalidates: without
 *   it nginx's `proxy_cache_use_stale updating` serves a page of any age, and a poller that follows older pages
 *   of the same URLs can stay behind for as long as it polls.
 * - A read with a key (header `apikey` or the ROC path key) may see what anonymous callers do not:
 *   `private, no-store` and no `ETag`, so no cache keeps it or could hand it to another caller.
 * - Long-polls and streams are `no-store`: they are answers to a moment, never to be replayed.
 *
 * `Vary` names every request header that selects the representation: `Accept` (JSON or CSV),
 * `Accept-Encoding` (gzip), `apikey` (a keyed read is another answer) and `Origin` (CORS headers are sent
 * only to requests that carry one).
 */
import { createHash } from 'node:crypto';

/** Default `max-age` (seconds) of public punch reads; `TIMING_PUNCH_MAX_AGE_SECONDS`. */
export const DEFAULT_PUNCH_MAX_AGE_SECONDS = 1;

/** `Vary` of every punch read (see the module comment). */
const PUNCH_READ_VARY = 'Accept, Accept-Encoding, apikey, Origin';

/** `Cache-Control` of answers no cache may keep: keyed reads. */
const PRIVATE = 'private, no-store';

/** `Cache-Control` of long-polls and streams. */
export const LIVE_CACHE_CONTROL = 'no-store';

/** How a read may be cached: who asked (a key or not) and whether it was held (long-poll). */
export interface ReadCachingInput {
  /** Whether the request carried a key (any principal). */
  keyed: boolean;
  /** Whether the request was a long-poll (`wait` > 0). */
  live?: boolean;
  /** The representation beyond the read's key: the operation and its own parameters (e.g. `limit`). */
  view: string;
  /** `PunchReadResult.version` (or the ROC read's joined versions). */
  version: string;
  /** `max-age` of public answers, seconds. */
  maxAgeSeconds: number;
}

/** Caching headers of one read answer and its `ETag` when it has one (public answers only). */
export interface ReadCaching {
  headers: Record<string, string>;
  etag?: string;
}

/**
 * The weak entity tag of a public answer: `W/"<digest>"`, 22 base64url characters of SHA-1 over `view` and
 * `version` (the visible head and the read's key, a short text; the body is never hashed). The head itself is
 * not shown: it is the newest punch id of every event, private ones included, and would tell anonymous
 * callers how busy the whole service is.
 */
function punchEntityTag(view: string, version: string): string {
  return `W/"${createHash('sha1').update(view).update('\n').update(version).digest('base64url').slice(0, 22)}"`;
}

/** The caching headers of a read (see the module comment). */
export function readCaching(input: ReadCachingInput): ReadCaching {
  if (input.live) return { headers: { 'Cache-Control': LIVE_CACHE_CONTROL, Vary: PUNCH_READ_VARY } };
  if (input.keyed) return { headers: { 'Cache-Control': PRIVATE, Vary: PUNCH_READ_VARY } };
  const etag = punchEntityTag(input.view, input.version);
  const n = input.maxAgeSeconds;
  return { etag, headers: { 'Cache-Control': `public, max-age=${n}, stale-while-revalidate=${n}`, ETag: etag, Vary: PUNCH_READ_VARY } };
}

/**
 * Whether `If-None-Match` (a comma list of entity tags, or `*`) matches `etag` by the weak comparison
 * (RFC 9110 §13.1.2: `W/` ignored on both sides). A request `Cache-Control: no-cache` does not stop a 304:
 * the origin itself validates here.
 */
export function ifNoneMatchHits(header: string | string[] | undefined, etag: string | undefined): boolean {
  if (header === undefined || etag === undefined) return false;
  const opaque = etag.replace(/^W\//, '');
  for (const part of (Array.isArray(header) ? header.join(',') : header).split(',')) {
    const tag = part.trim();
    if (tag === '*' || tag.replace(/^W\//, '') === opaque) return true;
  }
  return false;
}
