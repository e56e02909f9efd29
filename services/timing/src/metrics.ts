/**
 * Timing-specific Prometheus metrics, registered on the app's registry (packages/shared/src/metrics.ts):
 * - `punches_ingested_total`: punches newly stored by uploads (the `stored` count of each committed batch;
 *   re-sent duplicates are not counted), so `rate()` is the real ingest rate;
 * - `live_connections` / `live_connections_max`: held long-polls plus open punch streams of this instance,
 *   and the bound beyond which live requests get 503 (`TIMING_MAX_LIVE_CONNECTIONS`).
 */
import type { AppMetrics } from '@sports-timing/shared';
import type { Response } from 'express';
import type { LiveHub } from './live/hub';

const LOCALS_KEY = 'timingMetrics';

/** The timing metrics of one app. */
export interface TimingMetrics {
  punchesIngested: ReturnType<AppMetrics['counter']>;
}

/** Registers the timing metrics on `metrics` and keeps them in `locals` for {@link countIngested}. */
export function registerTimingMetrics(metrics: AppMetrics, live: LiveHub, locals: Record<string, unknown>): TimingMetrics {
  const punchesIngested = metrics.counter('punches_ingested_total', 'Punches newly stored by uploads (committed rows; duplicates excluded)');
  metrics.gauge('live_connections', 'Held long-polls plus open punch streams on this instance', () => live.connections);
  metrics.gauge('live_connections_max', 'Live connections allowed on this instance before 503 (TIMING_MAX_LIVE_CONNECTIONS)', () => live.maxConnections);
  const t: TimingMetrics = { punchesIngested };
  locals[LOCALS_KEY] = t;
  return t;
}

/** Adds `stored` committed punches to `punches_ingested_total` of the app answering `res` (no-op without metrics). */
export function countIngested(res: Response, stored: number): void {
  const t = res.app?.locals?.[LOCALS_KEY] as TimingMetrics | undefined;
  if (stored > 0) t?.punchesIngested.inc(stored);
}
