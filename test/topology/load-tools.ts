/**
 * Shared tools of the topology's load scenarios: which instance answered each client (`X-Served-By`), the
 * disruption of one instance during a run (kill or stop, restart, wait for UP), the punch uploaders that
 * re-send until acknowledged, and a quantile.
 */
import type { Instance, Topology } from './topology';
import { testTime } from '@sports-timing/shared/src/test-time';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Counts of which instance answered (`X-Served-By`), and how often two consecutive requests of one client went to different instances. */
export class Spread {
  readonly byInstance: Record<string, number> = {};
  switches = 0;
  consecutive = 0;
  private last = new Map<number, string>();
  note(client: number, res: Response): void {
    const by = res.headers.get('x-served-by') ?? '?';
    this.byInstance[by] = (this.byInstance[by] ?? 0) + 1;
    const prev = this.last.get(client);
    if (prev !== undefined) {
      this.consecutive++;
      if (prev !== by) this.switches++;
    }
    this.last.set(client, by);
  }
  /** Share of consecutive requests of one client served by another instance than the one before. */
  get switchShare(): number {
    return this.consecutive ? this.switches / this.consecutive : 0;
  }
}

/**
 * What happens to the instances during a run: one instance killed or stopped and started again later
 * (`kill` = SIGKILL, `term` = SIGTERM with its graceful drain), or a rolling upgrade (`upgrade`): the new release's
 * migrations run while the old instances serve, then each instance in turn is stopped with SIGTERM and started on
 * the new code, and awaited UP before the next (so old and new instances serve together meanwhile).
 */
export type Disruption =
  | {
      mode: 'kill' | 'term';
      instance: Instance;
      atMs: number;
      /** Down time before the restart begins. */
      downMs: number;
    }
  | {
      mode: 'upgrade';
      instances: Instance[];
      atMs: number;
      /** Checkout of the new release the instances restart on. */
      codeRoot: string;
      /** Runs the new release's migrations (before the first instance is replaced). */
      migrate(): Promise<void> | void;
      /** Time between one instance UP on the new code and the next one's stop (both versions serve meanwhile). */
      mixedMs: number;
    };

/** Carries out `d` during a run, noting each step in `events` (ms since `t0`); resolves when it is over. */
export async function disrupt(t: Topology, d: Disruption, events: string[], t0: number): Promise<void> {
  await sleep(d.atMs);
  if (d.mode === 'upgrade') {
    events.push(`${Date.now() - t0} ms: migrations of the new release`);
    await d.migrate();
    events.push(`${Date.now() - t0} ms: migrated`);
    for (const inst of d.instances) {
      const code = await inst.stop();
      events.push(`${Date.now() - t0} ms: ${inst.name} (old release) exited ${code}`);
      await inst.start(d.codeRoot);
      await t.waitUp(inst.name);
      events.push(`${Date.now() - t0} ms: ${inst.name} UP on the new release`);
      await sleep(d.mixedMs);
    }
    return;
  }
  events.push(`${Date.now() - t0} ms: ${d.mode === 'kill' ? 'SIGKILL' : 'SIGTERM'} ${d.instance.name}`);
  if (d.mode === 'kill') await d.instance.kill();
  else {
    const code = await d.instance.stop();
    events.push(`${Date.now() - t0} ms: ${d.instance.name} exited ${code}`);
  }
  await sleep(d.downMs);
  await d.instance.start();
  await t.waitUp(d.instance.name);
  events.push(`${Date.now() - t0} ms: ${d.instance.name} UP again`);
}

/** Running uploaders of {@link startUploaders}. */
interface Uploaders {
  /** `modem/card` of every acknowledged punch (cards are unique within a run). */
  expected: Set<string>;
  readonly uploads: number;
  readonly retries: number;
  readonly lastAckAt: number;
  /** Ends the loops after their current batch is acknowledged. */
  stop(): Promise<void>;
}

/**
 * `uploaders` loops posting batches of `batch` = [min, max] punches (unique cards, spread over `modems`)
 * through the balancer with the admin key; a batch answered 5xx or lost on the network is re-sent unchanged
 * until acknowledged (a re-sent punch is stored once: specs/timing.yaml `postPunches`); a 4xx is a violation.
 */
export function startUploaders(
  t: Topology,
  o: { uploaders: number; modems: string[]; batch?: [number, number]; violations: string[]; firstCard?: number },
): Uploaders {
  const headers = { apikey: t.timingAdminKey, 'content-type': 'application/json' };
  const [minBatch, maxBatch] = o.batch ?? [1, 20];
  let seq = o.firstCard ?? 0;
  let stopped = false;
  const state = { expected: new Set<string>(), uploads: 0, retries: 0, lastAckAt: Date.now() };
  const loop = async () => {
    while (!stopped) {
      const n = minBatch + Math.floor(Math.random() * (maxBatch - minBatch + 1));
      const batch = Array.from({ length: n }, () => {
        const s = ++seq;
        return { card: String(s), time: 1_700_000_000_000 + s, code: 31 + (s % 200), type: 'Control', modem: o.modems[s % o.modems.length] };
      });
      const body = JSON.stringify(batch);
      for (;;) {
        let status: number;
        try {
          const res = await fetch(`${t.timingUrl}/api/rest/v1/punches`, { method: 'POST', headers, body, signal: AbortSignal.timeout(testTime(20_000)) });
          status = res.status;
          await res.arrayBuffer();
        } catch {
          status = 0;
        }
        if (status === 200) break;
        if (status >= 400 && status < 500) {
          o.violations.push(`upload answered ${status}`);
          break;
        }
        state.retries++;
        await sleep(50);
      }
      state.uploads++;
      for (const p of batch) state.expected.add(`${p.modem}/${p.card}`);
      state.lastAckAt = Date.now();
    }
  };
  const runs = Array.from({ length: o.uploaders }, () => loop());
  return {
    expected: state.expected,
    get uploads() {
      return state.uploads;
    },
    get retries() {
      return state.retries;
    },
    get lastAckAt() {
      return state.lastAckAt;
    },
    async stop() {
      stopped = true;
      await Promise.all(runs);
    },
  };
}

export function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : 0;
}
