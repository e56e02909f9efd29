/**
 * SQL of the operator's attention list (docs/payrexx.md and docs/weclapp.md "Failures a person can see"): ERP
 * hand-offs the ERP refused for good (dead `erp-sales-order` jobs, with the ERP's answer as stored by the
 * outbox) and payments that found no order, did not match their order, or arrived after it was cancelled.
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema';

/** Payment delivery outcomes an operator has to act on. */
const PAYMENT_ATTENTION_OUTCOMES = ['unknownOrder', 'amountMismatch:flagged', 'latePayment:refundNeeded'] as const;

/** One row of the attention list, newest first. */
export interface AttentionRow {
  kind: 'erpHandOffRefused' | 'paymentUnmatched' | 'paymentMismatch' | 'latePayment';
  order_number: string | null;
  transaction_id: number | null;
  detail: string | null;
  at: Date;
}

/** The newest `limit` items that need an operator (see the module comment). */
export async function selectAttention(db: Kysely<DB>, limit: number): Promise<AttentionRow[]> {
  const r = await sql<AttentionRow>`
    (select 'erpHandOffRefused' as kind, o.order_number, null::integer as transaction_id, m.last_error as detail, m.dead_at as at
       from outbox_messages m left join orders o on m.dedupe_key = 'order:' || o.id
      where m.kind = 'erp-sales-order' and m.dead_at is not null)
    union all
    (select case d.outcome when 'unknownOrder' then 'paymentUnmatched' when 'amountMismatch:flagged' then 'paymentMismatch' else 'latePayment' end,
            o.order_number, d.transaction_id, d.provider_status, d.received_at
       from payment_deliveries d left join orders o on o.id = d.order_id
      where d.outcome in (${sql.join([...PAYMENT_ATTENTION_OUTCOMES])}))
    order by at desc
    limit ${limit}`.execute(db);
  return r.rows;
}

/** How many items of each kind need an operator (for the `operator_attention_items` gauge). */
export async function countAttention(db: Kysely<DB>): Promise<{ kind: string; n: number }[]> {
  const rows = await selectAttention(db, 10_000);
  const by = new Map<string, number>();
  for (const row of rows) by.set(row.kind, (by.get(row.kind) ?? 0) + 1);
  return [...by].map(([kind, n]) => ({ kind, n }));
}
