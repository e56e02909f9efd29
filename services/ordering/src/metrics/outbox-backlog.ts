/**
 * Outbox backlog metrics of the ordering service, read from `outbox_messages` at scrape time (one grouped
 * query per scrape, on the partial index of unsent rows), per message kind:
 * - `outbox_backlog_messages{kind}`: not sent and not dead (waiting or being retried);
 * - `outbox_dead_messages{kind}`: given up after the retry limit (need an operator);
 * - `outbox_oldest_pending_age_seconds{kind}`: age of the oldest waiting message — alert on this, since a
 *   steady backlog is normal under load but an old one means delivery is stuck (SMTP, ERP, payment down).
 * Kept apart from the outbox service: it only reads the table the dispatcher maintains (`selectOutboxBacklog`).
 */
import type { Kysely } from 'kysely';
import type { AppMetrics } from '@sports-timing/shared';
import type { DB } from '../db/schema';
import { selectOutboxBacklog, type OutboxBacklogRow } from '../outbox/outbox.repository';

/** Registers the outbox backlog gauges on the app's metrics. */
export function registerOutboxBacklogMetrics(metrics: AppMetrics, db: Kysely<DB>): void {
  // One query feeds all three gauges of a scrape: the gauges are collected one after another, so the
  // first read is shared for a short moment instead of querying three times.
  let cached: { at: number; rows: Promise<OutboxBacklogRow[]> } | undefined;
  const read = () => {
    if (!cached || Date.now() - cached.at > 1_000) cached = { at: Date.now(), rows: selectOutboxBacklog(db) };
    const rows = cached.rows;
    rows.catch(() => (cached = undefined));
    return rows;
  };
  metrics.labeledGauge('outbox_backlog_messages', 'Outbox messages not yet sent and not dead, by kind', ['kind'], async () =>
    (await read()).map((r) => ({ labels: { kind: r.kind }, value: r.pending })),
  );
  metrics.labeledGauge('outbox_dead_messages', 'Outbox messages given up after the retry limit, by kind', ['kind'], async () =>
    (await read()).map((r) => ({ labels: { kind: r.kind }, value: r.dead })),
  );
  metrics.labeledGauge('outbox_oldest_pending_age_seconds', 'Age of the oldest outbox message still waiting, by kind', ['kind'], async () =>
    (await read()).filter((r) => r.oldest_age_seconds !== null).map((r) => ({ labels: { kind: r.kind }, value: r.oldest_age_seconds ?? 0 })),
  );
}
