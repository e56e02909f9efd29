/**
 * (f) The rolling restart of a running {@link Topology} (SCALING.md): mixed load without client retries while
 * every instance of both services is stopped and started again, one at a time.
 */
import { sleep } from './load-tools';
import { shopOrder } from './order-scenarios';
import type { Topology } from './topology';
import { testTime } from '@sports-timing/shared/src/test-time';

// ─────────────────────────── (f) rolling restart ───────────────────────────

/** Figures of {@link rollingRestart}. */
export interface RollingRestartResult {
  durationMs: number;
  requests: number;
  /** Requests that failed as the client saw them (no client retry): network error or any status other than the expected. */
  failed: number;
  failures: string[];
  byKind: Record<string, number>;
  events: string[];
  violations: string[];
}

/**
 * Mixed load without client retries (punch uploads, afterId polls, shop article reads, shop orders with
 * Idempotency-Key) while every instance of both services is stopped with SIGTERM, one at a time, started
 * again and awaited UP before the next. Every request must succeed.
 */
export async function rollingRestart(t: Topology, o: { clients: number; tag: string; firstCard: number }): Promise<RollingRestartResult> {
  const failures: string[] = [];
  const byKind: Record<string, number> = {};
  const events: string[] = [];
  let requests = 0;
  let stop = false;
  let seq = 0;
  let card = o.firstCard;
  const t0 = Date.now();
  const modem = `TOPO-${o.tag}-R`;
  const one = async (kind: string, url: string, init: RequestInit, ok: number) => {
    requests++;
    byKind[kind] = (byKind[kind] ?? 0) + 1;
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(testTime(20_000)) });
      await res.arrayBuffer();
      if (res.status !== ok) failures.push(`${Date.now() - t0} ms ${kind}: ${res.status} from ${res.headers.get('x-served-by')}`);
    } catch (err) {
      failures.push(`${Date.now() - t0} ms ${kind}: ${(err as Error).message} ${(err as { cause?: Error }).cause?.message ?? ''}`);
    }
  };
  const client = async (c: number) => {
    for (let i = 0; !stop; i++) {
      const k = (i + c) % 4;
      if (k === 0) {
        const s = ++seq;
        await one(
          'upload',
          `${t.timingUrl}/api/rest/v1/punches`,
          {
            method: 'POST',
            headers: { apikey: t.timingAdminKey, 'content-type': 'application/json' },
            body: JSON.stringify([{ card: String(s), time: 1_700_000_000_000 + s, code: 31, type: 'Control', modem }]),
          },
          200,
        );
      } else if (k === 1)
        await one('poll', `${t.timingUrl}/api/rest/v1/punches?modem=${modem}&afterId=${Math.max(0, seq - 5)}`, { headers: { apikey: t.timingAdminKey } }, 200);
      else if (k === 2) await one('articles', `${t.orderingUrl}/api/grpc-json/v1/shop/articles`, {}, 200);
      else if (t.ordering.length) {
        const n = card++;
        await one(
          'order',
          `${t.orderingUrl}/api/grpc-json/v1/shop/orders`,
          {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'idempotency-key': `topo-${o.tag}-roll-${n}` },
            body: JSON.stringify(shopOrder(n, `roll-${o.tag}-${n}@example.com`)),
          },
          200,
        );
      }
    }
  };
  const runs = Array.from({ length: o.clients }, (_, c) => client(c));
  await sleep(1000);
  for (const inst of [...t.timing, ...t.ordering]) {
    events.push(`${Date.now() - t0} ms: SIGTERM ${inst.name}`);
    const code = await inst.stop();
    events.push(`${Date.now() - t0} ms: ${inst.name} exited ${code}`);
    await inst.start();
    await t.waitUp(inst.name);
    events.push(`${Date.now() - t0} ms: ${inst.name} UP`);
    await sleep(500);
  }
  stop = true;
  await Promise.all(runs);
  const violations = failures.length ? [`${failures.length} of ${requests} requests failed: ${failures.slice(0, 5).join('; ')}`] : [];
  return { durationMs: Date.now() - t0, requests, failed: failures.length, failures, byKind, events, violations };
}
