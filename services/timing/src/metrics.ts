/**
 * Timing-specific Prometheus metrics, registered on the app's registry (packages/shared/src/metrics.ts):
 * - `punches_ingested_total`: punches newly stored by uploads (the `stored` count of each committed batch;
 *   re-sent duplicates are not counted), so `rate()` is the real ingest rate;
 * - `live_connections` / `live_connections_max`: held long-polls plus open punch streams of this instance,
 *   and the bound beyond which live requests get 503 (`TIMING_MAX_LIVE_CONNECTIONS`);
 * - `punch_visibility_wait_seconds`: how long the transaction holding the visible punch head back has been
 *   running, 0 when none (punches/visibility-wait.ts; docs/decisions.md §5, "Own writers' horizon"). Only the
 *   service's own uploads in flight or a prepared transaction can be there; read from the shared database, so
 *   every instance reports the same value (infra/prometheus/alerts.yaml alerts on it);
 * - `backlog_pages_read` / `backlog_pages_waited` / `backlog_pages_most_at_once`: the pacing of backlog replays
 *   (punches/backlog-gate.ts) since start;
 * - `live_stream_feeds`: shared feeds of anonymous streams (live/fanout.ts), one per followed public filter;
 * - `roc_answers_rendered_total`: ROC answers rendered (identical polls under one visible head share one
 *   rendering, docs/roc.md "Cost"), so its rate against the ROC request rate shows the sharing.
 */
import type { AppMetrics } from '@sports-timing/shared';
import type { LiveHub } from './live/hub';
import type { StreamFanout } from './live/fanout';
import type { BacklogGate } from './punches/backlog-gate';
import type { VisibilityWait } from './punches/punch-visibility.repository';

/** The timing metrics of one app. */
export interface TimingMetrics {
  punchesIngested: ReturnType<AppMetrics['counter']>;
  rocAnswersRendered: ReturnType<AppMetrics['counter']>;
}

/** Registers the timing metrics on `metrics`; `visibilityWait` reads what the visible head waits on. */
export function registerTimingMetrics(
  metrics: AppMetrics,
  live: LiveHub,
  fanout: StreamFanout,
  backlog: BacklogGate,
  visibilityWait: () => Promise<VisibilityWait>,
): TimingMetrics {
  const punchesIngested = metrics.counter('punches_ingested_total', 'Punches newly stored by uploads (committed rows; duplicates excluded)');
  metrics.gauge('live_connections', 'Held long-polls plus open punch streams on this instance', () => live.connections);
  metrics.gauge('live_stream_feeds', 'Shared feeds of anonymous punch streams (one per followed public filter)', () => fanout.feedCount);
  metrics.gauge('backlog_pages_read', 'Backlog pages read through the pacing gate since start (TIMING_MAX_BACKLOG_READS)', () => backlog.stats.pages);
  metrics.gauge('backlog_pages_waited', 'Backlog pages that waited for a turn since start', () => backlog.stats.waited);
  metrics.gauge('backlog_pages_most_at_once', 'Most backlog pages read at once since start (at most TIMING_MAX_BACKLOG_READS)', () => backlog.stats.mostAtOnce);
  metrics.gauge('live_connections_max', 'Live connections allowed on this instance before 503 (TIMING_MAX_LIVE_CONNECTIONS)', () => live.maxConnections);
  metrics.gauge(
    'punch_visibility_wait_seconds',
    'Seconds the transaction holding back the visible punch head has been running (own uploads in flight or a prepared transaction); 0 when none',
    async () => (await visibilityWait()).waitSeconds,
  );
  const rocAnswersRendered = metrics.counter('roc_answers_rendered_total', 'ROC answers rendered (identical polls under one visible head share one)');
  return { punchesIngested, rocAnswersRendered };
}

/** Adds `stored` committed punches of an upload to `punches_ingested_total`. */
export function countIngested(metrics: TimingMetrics, stored: number): void {
  if (stored > 0) metrics.punchesIngested.inc(stored);
}
