/**
 * Handlers of the payment side and the order utilities (tags `dev`, `callbacks`):
 * `receivePaymentProviderStatus` (recorded and queued; the re-fetch and any state change happen in the
 * outbox job, `orders/flow/payment-status.service.ts`), the payment-provider passthroughs, the order paylinks and the
 * order listing. Admin only per the spec's `x-roles`. Provider failures: unreachable, 5xx, timeouts or a
 * rejected API key → 503 with `Retry-After`; an object the provider does not know → 404.
 */
import { ApiError, componentSchemaOf, loadSpec, specDefaults, specFilled, validationError, type Handlers } from '@sports-timing/shared';
import type { OrderingContext } from '../composition';
import type { operations } from '../generated/openapi';
import { operatorAttention } from '../orders/admin/attention.service';
import { recordPaymentDelivery } from '../orders/flow/payment-status.service';
import { listOrders } from '../orders/admin/order-listing';
import { PaymentProviderError } from '../payment/payment.client';
import { SPEC_FILE } from '../version';

/** `transaction.id` of a JSON (number) or form (digit string) webhook body, or null. */
function webhookTransactionId(raw: unknown): number | null {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^[1-9][0-9]{0,9}$/.test(raw) ? Number(raw) : NaN;
  return Number.isSafeInteger(n) && n >= 1 && n <= 2_147_483_647 ? n : null;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Maps a provider failure onto the documented answers (never a 500 for a third party's trouble). */
async function provider<T>(call: () => Promise<T>, what: string, opts: { notFound?: 404 | 503 } = {}): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (!(err instanceof PaymentProviderError)) throw err;
    // On an operation without an object id, "not found" means a wrong instance or base URL: unavailable.
    if (err.code === 'notFound' && (opts.notFound ?? 404) === 404) throw new ApiError(404, `${what} is not known to the payment provider.`);
    if (err.code === 'badRequest' || err.code === 'conflict') throw new ApiError(400, `The payment provider refused: ${err.providerMessage ?? err.message}`);
    throw new ApiError(503, 'The payment provider is not available.', { headers: { 'Retry-After': '30' } });
  }
}

function found<T>(value: T | null, what: string): T {
  if (value === null) throw new ApiError(404, `${what} is not known to the payment provider.`);
  return value;
}

/** What `devCreatePaymentPaylink` creates without a body: the defaults of `CreatePaymentPaylinkRequest`. */
const PAYLINK_DEFAULTS = specDefaults(componentSchemaOf(loadSpec(SPEC_FILE), 'CreatePaymentPaylinkRequest'));

/** Payment and order-utility handlers. */
export function paymentHandlers(ctx: OrderingContext): Handlers<operations> {
  const db = ctx.database.db;
  const paylinks = () => ctx.services.paylinks;
  const client = () => ctx.services.payment;
  return {
    async receivePaymentProviderStatus(req, res) {
      const body = req.body as { transaction?: { id?: unknown; status?: unknown }; payout?: unknown; subscription?: unknown };
      if (body.transaction === undefined) {
        // Payout and subscription events carry no transaction; the provider retries anything but a 2xx.
        if (isObject(body.payout) || isObject(body.subscription)) {
          res.status(200).end();
          return;
        }
        throw validationError({ transaction: ['is required (or a payout or subscription event)'] }, 'The body carries no transaction, payout or subscription.');
      }
      const tx = isObject(body.transaction) ? body.transaction : {};
      const transactionId = webhookTransactionId(tx.id);
      if (transactionId === null)
        throw validationError({ 'transaction.id': ['must be a transaction id (1 … 2147483647)'] }, 'transaction.id is not a transaction id.');
      await recordPaymentDelivery(
        db,
        {
          contentType: (req.headers['content-type'] ?? '').split(';')[0].trim().slice(0, 100) || null,
          transactionId,
          claimedStatus: typeof tx.status === 'string' ? tx.status.slice(0, 40) : null,
        },
        ctx.config.paymentDeliveryRetentionDays,
      );
      res.status(200).end();
    },

    async devGetOrders(req, res) {
      const q = req.query;
      res.json(
        await listOrders(db, {
          states: q.states,
          erpRetailerEntityId: q.erpRetailerEntityId,
          countryCode: q.countryCode,
          searchText: q.searchText,
          page: specFilled(q.page, 'devGetOrders page'),
          size: specFilled(q.size, 'devGetOrders size'),
          sort: specFilled(q.sort, 'devGetOrders sort'),
        }),
      );
    },

    async devCreatePaymentPaylink(req, res) {
      // The body is optional: an absent one gets the defaults the validator fills into a present one.
      const b: NonNullable<typeof req.body> = req.body ?? (PAYLINK_DEFAULTS as NonNullable<typeof req.body>);
      res.json(
        await provider(
          () =>
            client().createPaylink({
              amountCents: specFilled(b.amountCents, 'CreatePaymentPaylinkRequest amountCents'),
              currency: specFilled(b.currency, 'CreatePaymentPaylinkRequest currency'),
              title: specFilled(b.title, 'CreatePaymentPaylinkRequest title'),
              description: b.description,
              referenceId: b.referenceId,
              purpose: b.purpose,
            }),
          'The paylink',
          { notFound: 503 },
        ),
      );
    },
    async devGetPaymentPaylink(req, res) {
      res.json(found(await provider(() => client().getPaylink(req.query.id), `Paylink ${req.query.id}`), `Paylink ${req.query.id}`));
    },
    async devDeletePaymentPaylink(req, res) {
      const deleted = await provider(() => client().deletePaylink(req.query.id), `Paylink ${req.query.id}`);
      if (!deleted) throw new ApiError(404, `Paylink ${req.query.id} is not known to the payment provider.`);
      res.status(200).end();
    },
    async devGetPaymentTransaction(req, res) {
      res.json(found(await provider(() => client().getTransaction(req.query.id), `Transaction ${req.query.id}`), `Transaction ${req.query.id}`));
    },
    async devGetPaymentTransactions(_req, res) {
      res.json(await provider(() => client().listTransactions({ limit: 100 }), 'Transactions', { notFound: 503 }));
    },
    async devGetOperatorAttention(_req, res) {
      res.json(await operatorAttention(db));
    },
    async devGetPaymentPayouts(_req, res) {
      const payouts = await provider(() => client().listPayouts(), 'Payouts', { notFound: 503 });
      // One unreadable payout is served flagged; a person must still learn of it.
      for (const p of payouts.filter((x) => x.readError))
        ctx.logger.warn({ payoutUuid: p.uuid, readError: p.readError }, 'payout from the payment provider could not be read fully');
      res.json(payouts);
    },
    async devGetPaymentPayoutWithDetails(req, res) {
      res.json(found(await provider(() => client().getPayout(req.query.uuid), `Payout ${req.query.uuid}`), `Payout ${req.query.uuid}`));
    },
    async devGetPaymentAccountingCsvExport(req, res) {
      const csv = found(await provider(() => client().getAccountingCsv(req.query.uuid), `Payout ${req.query.uuid}`), `Payout ${req.query.uuid}`);
      res.setHeader('Content-Disposition', `attachment; filename="payout-${req.query.uuid}.csv"`);
      res.type('text/csv; charset=utf-8').send(csv);
    },
    async devCreateErpOrderPaylink(req, res) {
      res.json(await provider(() => paylinks().replaceOrderPaylink(req.query.erpOrderOid), 'The paylink'));
    },
    async devDeleteErpOrderPaylink(req, res) {
      await provider(() => paylinks().deleteOrderPaylink(req.query.erpOrderOid), 'The paylink');
      res.status(200).end();
    },
  };
}
