/**
 * SQL of the operator's attention list (docs/payrexx.md and docs/weclapp.md "Failures a person can see"): ERP
 * hand-offs the ERP refused for good (dead `erp-sales-order` jobs, with the ERP's answer as stored by the
 * outbox), payments that found no order, came in another currency, were TEST payments for a live shop, or arrived
 * after their order was cancelled, orders paid in part or in excess, and charges whose refunds disagree with the
 * provider's refunded amount.
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema';
import type { components } from '../../generated/openapi';

/** Payment delivery outcomes an operator has to act on (the others are derived from the books, below). */
const PAYMENT_ATTENTION_OUTCOMES = ['unknownOrder', 'amountMismatch:flagged', 'testPayment:flagged', 'latePayment:refundNeeded'] as const;

/** One row of the attention list, newest first. */
export interface AttentionRow {
  kind: components['schemas']['OperatorAttentionItem']['kind'];
  order_number: string | null;
  transaction_id: number | null;
  detail: string | null;
  at: Date;
}

/**
 * The newest `limit` items that need an operator (see the module comment). Part and excess payments and refund
 * disagreements are read from the books as they are now, so an item goes once the rest of a part payment or
 * a missing refund has arrived; one item per order (per charge for refunds) and per flagged transaction.
 */
export async function selectAttention(db: Kysely<DB>, limit: number): Promise<AttentionRow[]> {
  const r = await sql<AttentionRow>`
    (select 'erpHandOffRefused' as kind, o.order_number, null::integer as transaction_id, m.last_error as detail, m.dead_at as at
       from outbox_messages m left join orders o on m.dedupe_key = 'order:' || o.id
      where m.kind = 'erp-sales-order' and m.dead_at is not null)
    union all
    (select distinct on (d.transaction_id, d.outcome)
            case d.outcome when 'unknownOrder' then 'paymentUnmatched' when 'amountMismatch:flagged' then 'paymentMismatch'
                           when 'testPayment:flagged' then 'testPayment' else 'latePayment' end,
            o.order_number, d.transaction_id, d.provider_status, d.received_at
       from payment_deliveries d left join orders o on o.id = d.order_id
      where d.outcome in (${sql.join([...PAYMENT_ATTENTION_OUTCOMES])})
      order by d.transaction_id, d.outcome, d.received_at)
    union all
    (select case when b.received < b.gross then 'paymentPartial' else 'paymentExcess' end, b.order_number, b.transaction_id,
            'received ' || b.received || ' of ' || b.gross || ' cents' || case when b.refunded > 0 then ', refunded ' || b.refunded else '' end, b.at
       from (select o.order_number, o.state, o.gross_total_cents as gross, sum(p.amount_cents) as received,
                    (select coalesce(sum(f.amount_cents), 0) from payment_refunds f where f.order_id = o.id) as refunded,
                    max(p.transaction_id) as transaction_id, max(p.recorded_at) as at
               from payment_receipts p join orders o on o.id = p.order_id
              where o.state <> 'cancelled'
              group by o.id) b
      where b.received - b.refunded > b.gross and b.state not in ('refunded')
         or b.received < b.gross and b.state in ('pending_payment', 'received'))
    union all
    (select 'refundMismatch', o.order_number, f.original_transaction_id,
            'provider reports ' || max(f.reported_refunded_cents) || ' cents refunded, recorded ' || sum(f.amount_cents) || ' cents', max(f.recorded_at)
       from payment_refunds f join orders o on o.id = f.order_id
      group by o.order_number, f.original_transaction_id
     having max(f.reported_refunded_cents) <> sum(f.amount_cents))
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
