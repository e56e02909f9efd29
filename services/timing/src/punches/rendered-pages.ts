/**
 * Answers of several punch pages rendered as one text (the ROC read, roc.service.ts), kept as shared answers
 * (read-cache.ts). SQL stays in punches.repository.ts.
 */
import type pg from 'pg';
import type { Principal } from '../auth/principal';
import { PUNCH_PAGE_SIZE } from './punch-spec';
import * as repo from './punches.repository';
import type { PunchService, PunchReadResult } from './punches.service';
import { readStably, scopeIsEmpty, scopeKey, type PunchQuery } from './punch-scope';
import type { PunchReadCache } from './read-cache';

/**
 * How {@link readRenderedPages} renders an answer of several pages (the ROC text, roc.service.ts): `page`
 * turns one page in the service's CSV (header row first) into this rendering's text with the number of punches
 * and the last (highest) id in it.
 */
export interface PageRendering {
  /** Name of the rendering, part of the shared answer's key (`roc`). */
  name: string;
  page(csvPage: string): { text: string; count: number; lastId: number };
  /** Called once per answer actually rendered (not for one shared with an identical request): a render counter. */
  onRender?: () => void;
}

/**
 * Every readable punch of `q` after `q.afterId` (access, window and scope as {@link readPunches}), rendered by
 * `rendering` page by page, each page read after the last id of the one before exactly as a client would poll
 * them (so the whole is gap-free), every page after the first through `deps.backlog` (backlog-gate.ts; without
 * one, at least a turn of the event loop between pages). The rendered text is a shared
 * answer (read-cache.ts) under the rendering's name: rendered once per visible head and request key, its
 * derived bodies (gzip) made once too. Why that is exact: every page but the last is full, and a full page is
 * the same under every later head (the readers' rule exposes a prefix of the ids), so the whole text is a
 * function of the key and the head of its last page, which is the head it is kept under. `total` is the
 * number of punches in the text; `version` is `<head>|<key>` (the HTTP validator's source, http/read-caching.ts). Whole reads (no `afterId`) may come from `deps.historyPool`, as in
 * {@link readPunches}, and so is the check of a scope a new modem could widen (punches.service.ts `readStably`).
 */
export async function readRenderedPages(deps: PunchService, caller: Principal | null, q: PunchQuery, rendering: PageRendering): Promise<PunchReadResult> {
  const empty: PunchReadResult = { body: '', total: 0, version: `empty|${rendering.name}` };
  return readStably(
    deps,
    caller,
    q,
    (scope) => readScopePages(deps, scope, q, rendering),
    (answer) => answer.total,
    empty,
  );
}

/** The answer of {@link readRenderedPages} for an access-checked scope. */
async function readScopePages(deps: PunchService, scope: repo.PunchScope, q: PunchQuery, rendering: PageRendering): Promise<PunchReadResult> {
  if (scopeIsEmpty(scope)) return { body: '', total: 0, version: `empty|${rendering.name}` };
  const key = `${rendering.name}|${scopeKey(scope)}`;
  const compute = (pool: pg.Pool) => async (): Promise<{ body: string; total: number; head: string }> => {
    rendering.onRender?.();
    let body = '';
    let total = 0;
    let head: string;
    for (let afterId = scope.afterId, first = true; ; first = false) {
      const read = () => repo.readPunchPage(pool, { ...scope, afterId }, 'csv', false);
      // Every page after the first is backlog: paced through the instance's gate.
      const csv = first || !deps.backlog ? await read() : await deps.backlog.page(read);
      const lines = rendering.page(csv.body);
      body += lines.text;
      total += lines.count;
      head = csv.head;
      if (csv.count < PUNCH_PAGE_SIZE || lines.count === 0) break;
      afterId = lines.lastId;
      // A long answer must not hold the event loop: other requests run between its pages (the gate yields too).
      if (!deps.backlog) await new Promise((r) => setImmediate(r));
    }
    return { body, total, head };
  };
  const shared = async (pool: pg.Pool, cache: PunchReadCache | null): Promise<PunchReadResult> => {
    if (cache === null) {
      const answer = await compute(pool)();
      return { body: answer.body, total: answer.total, version: `${answer.head}|${key}` };
    }
    const answer = await cache.get(key, compute(pool));
    return { body: answer.body, total: answer.total, version: `${answer.head}|${key}`, derive: (name, make) => cache.derive(key, answer, name, make) };
  };
  if (deps.historyPool && !q.afterId) {
    try {
      return await shared(deps.historyPool, deps.caches.history);
    } catch (err) {
      deps.logger?.warn({ err: { message: (err as Error).message } }, 'punch read on the replica failed; reading from the primary');
    }
  }
  return shared(deps.pool, deps.caches.primary);
}
