/**
 * The operator's attention list (spec `devGetOperatorAttention`, docs/weclapp.md and docs/payrexx.md "Failures a
 * person can see"): refused ERP hand-offs and the payments and refunds a person must settle (kinds: spec
 * `OperatorAttentionItem`), newest first, at most 200.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema';
import type { components } from '../../generated/openapi';
import { selectAttention } from './attention.repository';

/** Spec `OperatorAttentionItem`. */
type OperatorAttentionItem = components['schemas']['OperatorAttentionItem'];

/** The newest 200 items (times UTC ISO 8601). */
export async function operatorAttention(db: Kysely<DB>): Promise<OperatorAttentionItem[]> {
  return (await selectAttention(db, 200)).map((r) => ({
    kind: r.kind,
    orderNumber: r.order_number,
    transactionId: r.transaction_id,
    detail: r.detail,
    at: new Date(r.at).toISOString(),
  }));
}
