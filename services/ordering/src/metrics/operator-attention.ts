/**
 * `operator_attention_items{kind}`: how many ERP hand-offs were refused for good and how many payments and refunds
 * need a person (kinds: spec `OperatorAttentionItem`) (docs/weclapp.md, docs/payrexx.md "Failures a person can see"); alert when
 * it rises. Read from the database at scrape time.
 */
import type { Kysely } from 'kysely';
import type { AppMetrics } from '@sports-timing/shared';
import type { DB } from '../db/schema';
import { countAttention } from '../orders/admin/attention.repository';

/** Registers the gauge on the app's metrics. */
export function registerOperatorAttentionMetrics(metrics: AppMetrics, db: Kysely<DB>): void {
  metrics.labeledGauge('operator_attention_items', 'ERP hand-offs refused for good and payments without a matching order, by kind', ['kind'], async () =>
    (await countAttention(db)).map((r) => ({ labels: { kind: r.kind }, value: r.n })),
  );
}
