/**
 * The punch read path through the nginx cache of a running {@link Topology} (`cache: true`; SCALING.md (i),
 * infra/README.md "nginx cache"): result software polling one public event through nginx while modems upload
 * through the balancer. Checks the polling guarantee of `getPunches` through a cache that obeys the service's
 * headers, and counts what reached the service.
 */
import { sleep, startUploaders } from './load-tools';
import type { Topology } from './topology';
import { testTime } from '@sports-timing/shared/src/test-time';

/** Figures of {@link cachedPolls}. */
export interface CachedPollsResult {
  uploaders: number;
  pollers: number;
  durationMs: number;
  punches: number;
  /** Polls the pollers sent to nginx, and `getPunches` requests that reached a timing instance meanwhile. */
  polls: number;
  serviceReads: number;
  /** Per poller: punches missed and received twice (all must be 0). */
  missed: number[];
  repeated: number[];
  violations: string[];
}

/** `getPunches` requests (every status, 304 included) the timing instances counted so far, summed (their `/metrics`). */
async function serviceReads(t: Topology): Promise<number> {
  let n = 0;
  for (const inst of t.timing) {
    const text = await (await fetch(`${inst.url}/metrics`)).text();
    for (const line of text.split('\n')) {
      if (line.startsWith('http_requests_total{') && line.includes('operation="getPunches"') && line.includes('method="GET"'))
        n += Number(line.split(' ').pop());
    }
  }
  return n;
}

/**
 * Result software polling one public event through the nginx cache (`t.cacheUrl`, infra/README.md "nginx
 * cache"): `pollers` anonymous clients follow the event with `afterId` through nginx while `uploaders` upload
 * through the balancer. Each poller must hold every punch exactly once (the polling guarantee through a cache
 * that obeys the service's headers); the figures compare the polls sent with the reads that reached the service.
 */
export async function cachedPolls(t: Topology, o: { uploaders: number; pollers: number; durationMs: number; tag: string }): Promise<CachedPollsResult> {
  if (!t.cacheUrl) throw new Error('cachedPolls needs a topology started with cache: true');
  const modems = Array.from({ length: 4 }, (_, i) => `TOPO-${o.tag}-${i + 1}`);
  const violations: string[] = [];
  const created = await fetch(`${t.timingUrl}/api/rest/v1/events`, {
    method: 'POST',
    headers: { apikey: t.timingAdminKey, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `Cached ${o.tag}`, public: true, modems }),
  });
  if (created.status !== 201) throw new Error(`createEvent answered ${created.status}: ${await created.text()}`);
  const eventId = ((await created.json()) as { id: number }).id;
  const readsBefore = await serviceReads(t);
  const t0 = Date.now();
  const up = startUploaders(t, { uploaders: o.uploaders, modems, violations, firstCard: 9_100_000 });
  let uploadsDone = false;
  let polls = 0;
  const received: Map<string, number>[] = [];
  const poller = async (k: number) => {
    const got = new Map<string, number>();
    received.push(got);
    let afterId = 0;
    for (;;) {
      let page: { id: number; card: string; modem: string }[] | undefined;
      try {
        const res = await fetch(`${t.cacheUrl}/api/rest/v1/punches?eventId=${eventId}&afterId=${afterId}`, { signal: AbortSignal.timeout(testTime(20_000)) });
        if (res.status === 200) page = (await res.json()) as typeof page;
        else {
          await res.arrayBuffer();
          if (res.status < 500) violations.push(`poll through nginx answered ${res.status}`);
        }
      } catch {
        page = undefined;
      }
      if (!page) {
        await sleep(50);
        continue;
      }
      polls++;
      for (const p of page) {
        if (p.id <= afterId) violations.push(`poller ${k}: id ${p.id} not above afterId ${afterId}`);
        afterId = Math.max(afterId, p.id);
        const key = `${p.modem}/${p.card}`;
        got.set(key, (got.get(key) ?? 0) + 1);
      }
      if (uploadsDone && got.size >= up.expected.size) return;
      if (uploadsDone && Date.now() - up.lastAckAt > 30_000) {
        violations.push(`poller ${k}: gave up waiting, ${got.size} of ${up.expected.size}`);
        return;
      }
      if (page.length === 0) await sleep(10);
    }
  };
  const runs = Array.from({ length: o.pollers }, (_, k) => poller(k));
  await sleep(o.durationMs);
  await up.stop();
  uploadsDone = true;
  await Promise.all(runs);
  const durationMs = Date.now() - t0;
  const reads = (await serviceReads(t)) - readsBefore;
  const missed = received.map((got) => [...up.expected].filter((key) => !got.has(key)).length);
  const repeated = received.map((got) => [...got.values()].filter((c) => c > 1).length);
  missed.forEach((m, k) => m && violations.push(`poller ${k} missed ${m} punches`));
  repeated.forEach((r, k) => r && violations.push(`poller ${k} received ${r} punches twice`));
  return { uploaders: o.uploaders, pollers: o.pollers, durationMs, punches: up.expected.size, polls, serviceReads: reads, missed, repeated, violations };
}
