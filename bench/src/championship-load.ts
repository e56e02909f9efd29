/**
 * The championship evening in the load process (see {@link ChampionshipSpec}; the harness side is
 * championship.ts): spectators poll at their clients' intervals, each from the newest id it has, SSE streams stay
 * open, and modems post single punches at an evening's rate with one mass-start burst, all through nginx.
 * Every uploaded punch has a card of its own, so each arrival (at a spectator or a stream) is timed from the
 * moment its upload was sent (the spectators' and the streams' arrivals in histograms of their own). Once the modems stopped, every client keeps reading until it has the scope's
 * newest id (or `catchUpSeconds` passed): the harness then checks that each saw every punch exactly once.
 *
 * Two threads share the work: the modems and the freshness probes run in a worker thread
 * (championship-worker.ts), the spectators and the streams here. A modem and a probe stand for devices of their
 * own: on one event loop with 10,000 spectators and 1,000 streams (hundreds of thousands of stream events in
 * the mass start) their timers and reads ran seconds late, and that lateness was in every upload → visible time.
 * The threads share the cards' send times (a SharedArrayBuffer), so the spectators and streams here time each
 * arrival from its upload there.
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { runSide, type ChampionshipShared, type SideResult } from './championship-side';
import type { ChampionshipSpec, LoadResult } from './load-spec';

/** Shared state for an evening of `c` lasting `durationSeconds`: room for every punch the modems can post. */
function sharedState(c: ChampionshipSpec, durationSeconds: number): ChampionshipShared {
  const perModem = Math.ceil(durationSeconds / c.modemIntervalSeconds[0]) + 3;
  const punches = c.modems.length * perModem;
  return {
    sentAt: new Float64Array(new SharedArrayBuffer(8 * punches)),
    burst: new Uint8Array(new SharedArrayBuffer(punches)),
    control: new Int32Array(new SharedArrayBuffer(8)),
  };
}

/** Runs the championship evening (see the module comment); `followed` lists the spectators, the probes, then the streams. */
export async function runChampionship(c: ChampionshipSpec, durationSeconds: number): Promise<LoadResult> {
  const shared = sharedState(c, durationSeconds);
  const startAt = performance.timeOrigin + performance.now() + 1000;
  // The worker runs TypeScript as this process does (tsx, load-generator.ts): a worker thread does not inherit
  // the `--import tsx` loader, so it registers tsx's CommonJS hook before loading its entry.
  const entry = `require(${JSON.stringify(require.resolve('tsx/cjs/api'))}).register(); require(${JSON.stringify(path.join(__dirname, 'championship-worker.ts'))});`;
  const worker = new Worker(entry, { eval: true, workerData: { c, durationSeconds, shared, startAt } });
  const modemsSide = new Promise<SideResult>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`championship worker exited with ${code}`)));
  });
  const [clients, modems] = await Promise.all([runSide(c, durationSeconds, shared, 'clients', startAt), modemsSide]);
  await worker.terminate();
  return merged(clients, modems);
}

/** The evening's {@link LoadResult} from the clients' thread's figures and the modems' thread's. */
function merged(clients: SideResult, modems: SideResult): LoadResult {
  const spectators = clients.kinds.filter((k) => k !== 'stream').length;
  const followed = [...clients.followed.slice(0, spectators), ...modems.followed, ...clients.followed.slice(spectators)];
  const kinds = [...clients.kinds.slice(0, spectators), ...modems.kinds, ...clients.kinds.slice(spectators)];
  const statusBuckets = Object.fromEntries(Object.keys(clients.statusBuckets).map((k) => [k, clients.statusBuckets[k] + (modems.statusBuckets[k] ?? 0)]));
  const responses = clients.responses + modems.responses;
  const finalId = clients.finalId;
  const pollsServed = clients.polls.meos + clients.polls.live + clients.polls.roc;
  return {
    requests: responses,
    durationSeconds: clients.elapsedSeconds,
    // Polls served per second over the whole evening, the clients' catch-up after the modems stopped included.
    rps: pollsServed / clients.totalSeconds,
    p50: clients.delivery.p50,
    p90: clients.deliveryP90,
    p99: clients.delivery.p99,
    max: clients.delivery.max,
    bytesPerRequest: 0,
    non2xx: responses - statusBuckets['2xx'],
    errors: clients.pollErrors + modems.pollErrors,
    timeouts: 0,
    statusBuckets,
    followed,
    written: modems.uploaded,
    championship: {
      polls: clients.polls,
      pollErrors: clients.pollErrors + modems.pollErrors,
      streamsOpen: clients.streamsOpen,
      streamDeliveries: clients.streamDeliveries,
      uploaded: modems.uploaded,
      uploadErrors: modems.uploadErrors,
      delivery: clients.delivery,
      streamDelivery: clients.streamDelivery,
      visible: modems.visible,
      visibleBurst: modems.visibleBurst,
      upload: modems.upload,
      uploadBurst: modems.uploadBurst,
      probePolls: modems.probePolls,
      loadProcessDelay: clients.loopDelay,
      modemThreadDelay: modems.loopDelay,
      finalId,
      incomplete: followed.filter((rec) => rec.last < finalId).length,
      firstIncomplete: followed.find((rec) => rec.last < finalId)?.note,
      incompleteByClient: Object.fromEntries([...new Set(kinds)].map((k) => [k, followed.filter((rec, i) => kinds[i] === k && rec.last < finalId).length])),
    },
  };
}
