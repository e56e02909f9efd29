/**
 * Queue metrics of the ordering service's background work, read from the tables at scrape time (one grouped
 * query per table per scrape, shared by the gauges), per job kind — the outbox kinds (`mail`,
 * `payment-paylink`, `payment-status`, `erp-sales-order`, …) and `erp-webhook` for the ERP's webhooks:
 * - `outbox_backlog_messages{kind}`: not done and not dead (waiting, running or being retried);
 * - `outbox_running_messages{kind}`: leased to a runner now;
 * - `outbox_retrying_messages{kind}`: waiting after a failed attempt (failures under way);
 * - `outbox_dead_messages{kind}`: given up (a permanent failure or the retry limit): need an operator
 *   (admin API `listDeadJobs`, `retryDeadJob`; runbook in docs/outbox.md);
 * - `outbox_oldest_pending_age_seconds{kind}`: age of the oldest job not done — alert on this, since a
 *   steady backlog is normal under load but an old one means delivery is stuck (SMTP, ERP, payment down).
 * Kept apart from the workers: it only reads the tables they maintain. Alert rules: infra/prometheus/alerts.yaml.
 */
import type { Kysely } from 'kysely';
import type { AppMetrics } from '@sports-timing/shared';
import type { DB } from '../db/schema';
import { selectErpWebhookBacklog } from '../erp/erp-webhook.repository';
import { selectOutboxBacklog, type OutboxBacklogRow } from '../outbox/outbox.repository';

/** Registers the queue gauges on the app's metrics. */
export function registerOutboxBacklogMetrics(metrics: AppMetrics, db: Kysely<DB>): void {
  // One read feeds all gauges of a scrape: the gauges are collected one after another, so the first read
  // is shared for a short moment instead of querying once per gauge.
  let cached: { at: number; rows: Promise<OutboxBacklogRow[]> } | undefined;
  const readBoth = async (): Promise<OutboxBacklogRow[]> => {
    const [outbox, erp] = await Promise.all([selectOutboxBacklog(db), selectErpWebhookBacklog(db)]);
    return [...outbox, { kind: 'erp-webhook', dead: 0, ...erp }];
  };
  const read = () => {
    if (!cached || Date.now() - cached.at > 1_000) cached = { at: Date.now(), rows: readBoth() };
    const rows = cached.rows;
    rows.catch(() => (cached = undefined));
    return rows;
  };
  const gauge = (name: string, help: string, value: (r: OutboxBacklogRow) => number | null) =>
    metrics.labeledGauge(name, help, ['kind'], async () =>
      (await read()).flatMap((r) => {
        const v = value(r);
        return v === null ? [] : [{ labels: { kind: r.kind }, value: v }];
      }),
    );
  gauge('outbox_backlog_messages', 'Background jobs not yet done and not dead, by kind', (r) => r.pending);
  gauge('outbox_running_messages', 'Background jobs leased to a runner now, by kind', (r) => r.running);
  gauge('outbox_retrying_messages', 'Background jobs waiting for a retry after a failed attempt, by kind', (r) => r.retrying);
  gauge('outbox_dead_messages', 'Background jobs given up (permanent failure or retry limit), by kind', (r) => r.dead);
  gauge('outbox_oldest_pending_age_seconds', 'Age of the oldest background job not yet done, by kind', (r) => r.oldest_age_seconds);
}
