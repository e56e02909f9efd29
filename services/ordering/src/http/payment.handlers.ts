/**
 * Handlers of the payment side (ordering spec §4.10 `receivePaymentProviderStatus`). Thin: the delivery is
 * recorded and queued (`order-flow.service.ts`); the re-fetch and any state change happen in the outbox job.
 */
import { validationError, type Handlers } from '@sports-timing/shared';
import type { OrderingDeps } from '../context';
import type { operations } from '../generated/openapi';
import { recordPaymentDelivery } from '../orders/order-flow.service';

/** `transaction.id` of a JSON (number) or form (digit string) webhook body, or null. */
export function webhookTransactionId(raw: unknown): number | null {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^[1-9][0-9]{0,9}$/.test(raw) ? Number(raw) : NaN;
  return Number.isSafeInteger(n) && n >= 1 && n <= 2_147_483_647 ? n : null;
}

/** Payment handlers. */
export function paymentHandlers(ctx: OrderingDeps): Handlers<operations> {
  const db = ctx.database.db;
  return {
    async receivePaymentProviderStatus(req, res) {
      const tx = (req.body as { transaction?: { id?: unknown; status?: unknown } }).transaction ?? {};
      const transactionId = webhookTransactionId(tx.id);
      if (transactionId === null) throw validationError({ 'transaction.id': ['must be a transaction id (1 … 2147483647)'] }, 'transaction.id is not a transaction id.');
      await recordPaymentDelivery(db, {
        contentType: (req.headers['content-type'] ?? '').split(';')[0].trim().slice(0, 100) || null,
        transactionId,
        claimedStatus: typeof tx.status === 'string' ? tx.status.slice(0, 40) : null,
      });
      res.status(200).end();
    },
  };
}
