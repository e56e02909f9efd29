/**
 * The modems' thread of the championship evening (championship-load.ts `runChampionship` starts it; championship-side.ts): the modems
 * and the freshness probes, away from the event loop of the 10,000 spectators and 1,000 streams; posts its
 * {@link SideResult} to the load process's thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { runSide, type ChampionshipShared } from './championship-side';
import type { ChampionshipSpec } from './load-spec';

const { c, durationSeconds, shared, startAt } = workerData as { c: ChampionshipSpec; durationSeconds: number; shared: ChampionshipShared; startAt: number };
void runSide(c, durationSeconds, shared, 'modems', startAt).then((result) => parentPort?.postMessage(result));
