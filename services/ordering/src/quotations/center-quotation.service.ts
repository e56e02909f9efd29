/**
 * Quotations for SPORTident Center subscriptions (ordering spec `center/create-quotation-for-subscription`):
 * the request is checked against the catalogue (the article must be an imported article of
 * category `subscriptions`), recorded as an `erp-quotation` job of the transactional outbox, and the job
 * creates the quotation in the ERP (`weclapp`) — idempotent by the request's reference (`shopReference`),
 * retried with backoff while the ERP is unreachable; a 4xx answer of the ERP makes the job dead (staff see
 * it) instead of retrying forever.
 */
import { randomUUID } from 'node:crypto';
import { validationError } from '@sports-timing/shared';
import type { Kysely } from 'kysely';
import { selectArticleCategory } from '../catalog/catalog.repository';
import type { DB } from '../db/schema';
import type { components } from '../generated/openapi';
import { ErpError, type ErpClient } from '../erp/erp.client';
import type { ErpSystem } from '../erp/erp.types';
import { enqueue, PermanentJobError, type OutboxHandler, type OutboxJob } from '../outbox/outbox.service';

/** Outbox job kind. */
export const ERP_QUOTATION_JOB = 'erp-quotation';
/** Category (ERP custom field `shopCategory`) of subscription articles. */
const SUBSCRIPTION_CATEGORY = 'subscriptions';
/** ERP customer account of requests by end customers (same account as the web shop's sales orders). */
const QUOTATION_CUSTOMER_NUMBER = 'C-9000';
const QUOTATION_ERP_SYSTEM: ErpSystem = 'weclapp';

type CenterSubscription = components['schemas']['CenterSubscription'];

/** Payload of an `erp-quotation` job (no secrets). */
export interface QuotationJobPayload {
  reference: string;
  articleNumber: string;
  quantity: number;
  email: string;
  /** Short text for the ERP document (`commission`): who asked, start date. */
  commission: string;
  /** `user:<id>` of the requester. */
  requestedBy: string;
}

/**
 * Validates and records a request; answers its reference. Throws 400 when the article is not a subscription
 * article. The quotation itself is created by the outbox job (see {@link registerQuotationJob}).
 */
export async function requestCenterQuotation(db: Kysely<DB>, body: CenterSubscription, requestedBy: string): Promise<string> {
  const article = await selectArticleCategory(db, body.subscriptionArticleNumber);
  if (!article || article.category !== SUBSCRIPTION_CATEGORY)
    throw validationError({ subscriptionArticleNumber: [`'${body.subscriptionArticleNumber}' is not a subscription article.`] });
  const reference = `CQ-${randomUUID()}`;
  const a = body.address as { fullName?: string | null; firstName?: string | null; lastName?: string | null; club?: string | null };
  const who = [a.club, a.fullName || [a.firstName, a.lastName].filter(Boolean).join(' ')].filter(Boolean).join(', ');
  const payload: QuotationJobPayload = {
    reference,
    articleNumber: article.article_number,
    quantity: body.quantity ?? 1,
    email: body.email,
    commission: `Center subscription for ${who || body.email} <${body.email}>${body.startDate ? ` from ${body.startDate}` : ''}`.slice(0, 250),
    requestedBy,
  };
  await db.transaction().execute(async (trx) => {
    await enqueue<QuotationJobPayload>(trx, ERP_QUOTATION_JOB, `quotation:${reference}`, payload);
  });
  return reference;
}

/**
 * The handler of {@link ERP_QUOTATION_JOB} jobs, creating the quotation with the client `erp` returns (given to
 * the dispatchers by the composition root, `composition.ts`). Throws {@link PermanentJobError} when the ERP has
 * no such article or answers a 4xx other than a configuration error; other errors are retried.
 */
export function quotationJobHandler(erp: () => ErpClient): OutboxHandler<QuotationJobPayload> {
  return async (job: OutboxJob<QuotationJobPayload>) => {
    const p = job.payload;
    try {
      const client = erp();
      const article = await client.findArticleByNumber(QUOTATION_ERP_SYSTEM, p.articleNumber);
      if (!article) throw new PermanentJobError(`the ERP has no article ${p.articleNumber}`);
      const customerId = await client.customerIdByNumber(QUOTATION_ERP_SYSTEM, QUOTATION_CUSTOMER_NUMBER);
      await client.createQuotation(
        QUOTATION_ERP_SYSTEM,
        { customerId, commission: p.commission, quotationItems: [{ articleId: article.id, quantity: String(p.quantity) }] },
        p.reference,
      );
    } catch (err) {
      if (err instanceof ErpError && !err.retryable && err.code !== 'configuration') throw new PermanentJobError(err.message);
      throw err;
    }
  };
}
