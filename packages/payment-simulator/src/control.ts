/**
 * The payment simulator's own control API (`/__control/…`, listed in `simulator.ts`'s module comment): the
 * payer's actions, refunds, status changes, payouts, webhook subscriptions, chaos and retry settings, state
 * and reset. The fault injection is the shared server's. Refusals are thrown as {@link SimHttpError}s.
 */
import { SimHttpError, jsonObject, type SimRequest, type SimResponse } from '@sports-timing/shared/src/sim-server';
import type { Paylinks } from './paylinks';
import type { Ledger } from './transactions';
import type { PaymentRequest, TransactionContact, TransactionProduct } from './types';
import type { WebhookSender } from './webhooks';

/** What the control API reads and changes. */
export interface PaymentControlContext {
  paylinks: Paylinks;
  ledger: Ledger;
  webhooks: WebhookSender;
  /** Everything, for `GET /__control/state`. */
  state(): Record<string, unknown>;
  /** Back to the seed. */
  reset(): void;
}

const answer = (json: unknown): SimResponse => ({ status: 200, json });

/** Answers a control request; 404 for an unknown one, 400 for a malformed body (SyntaxError). */
export function answerControl(ctx: PaymentControlContext, req: SimRequest): SimResponse {
  const { ledger, webhooks } = ctx;
  const route = `${req.method} ${req.path}`;
  if (route === 'GET /__control/deliveries') return answer({ deliveries: webhooks.deliveries });
  if (route === 'GET /__control/state') return answer(ctx.state());
  const body = jsonObject(req.body);
  switch (route) {
    case 'POST /__control/pay':
      return answer({ transaction: pay(ctx, body) });
    case 'POST /__control/cancel':
      return answer({ transaction: ledger.cancel(requestFor(ctx.paylinks, body)) });
    case 'POST /__control/refund':
      return answer({ transaction: ledger.refund(Number(body.transactionId), body.amountCents === undefined ? undefined : Number(body.amountCents)) });
    case 'POST /__control/transaction-status':
      return answer({ transaction: ledger.setStatus(Number(body.transactionId), typeof body.status === 'string' ? body.status : '') });
    case 'POST /__control/subscribe':
      if (typeof body.url !== 'string' || !/^https?:\/\//.test(body.url)) throw new SimHttpError(400, 'url: an http(s) URL is required');
      if (body.format !== undefined && body.format !== 'json' && body.format !== 'form') throw new SimHttpError(400, 'format: json or form');
      webhooks.subscriptions.set(body.url, body.format ?? 'json');
      return answer({ subscriptions: Object.fromEntries(webhooks.subscriptions) });
    case 'POST /__control/unsubscribe':
      webhooks.subscriptions.delete(String(body.url));
      return answer({ subscriptions: Object.fromEntries(webhooks.subscriptions) });
    case 'POST /__control/chaos':
      webhooks.setChaos({ duplicate: typeof body.duplicate === 'number' ? body.duplicate : 0, shuffle: body.shuffle === true });
      return answer({ chaos: webhooks.chaos });
    case 'POST /__control/config':
      webhooks.configure({
        webhookMaxAttempts: typeof body.webhookMaxAttempts === 'number' ? body.webhookMaxAttempts : undefined,
        webhookBackoffMs: typeof body.webhookBackoffMs === 'number' ? body.webhookBackoffMs : undefined,
      });
      return answer({ webhookMaxAttempts: webhooks.settings.maxAttempts, webhookBackoffMs: webhooks.settings.backoffMs });
    case 'POST /__control/payout':
      return answer({ payout: ledger.payout() });
    case 'POST /__control/reset':
      ctx.reset();
      return answer({ ok: true });
    default:
      throw new SimHttpError(404, `unknown control endpoint ${route}`);
  }
}

/** `POST /__control/pay {invoiceId | gatewayId, paymentMethod?, products?, contact?, pending?, amountCents?, mode?}`. */
function pay(ctx: PaymentControlContext, body: Record<string, unknown>) {
  const products = Array.isArray(body.products) ? (body.products as TransactionProduct[]) : undefined;
  const contact = typeof body.contact === 'object' && body.contact !== null ? (body.contact as TransactionContact) : undefined;
  const amountCents = typeof body.amountCents === 'number' && Number.isInteger(body.amountCents) && body.amountCents > 0 ? body.amountCents : undefined;
  return ctx.ledger.pay(requestFor(ctx.paylinks, body), typeof body.paymentMethod === 'string' ? body.paymentMethod : 'visa', {
    products,
    contact,
    pending: body.pending === true,
    amountCents,
    mode: body.mode === 'LIVE' ? 'LIVE' : undefined,
  });
}

/** The paylink (`invoiceId`) or gateway (`gatewayId`) a control body names; 404 when there is none. */
function requestFor(paylinks: Paylinks, body: Record<string, unknown>): PaymentRequest {
  const r =
    body.invoiceId !== undefined
      ? paylinks.invoices.get(Number(body.invoiceId))
      : body.gatewayId !== undefined
        ? paylinks.gateways.get(Number(body.gatewayId))
        : undefined;
  if (!r) throw new SimHttpError(404, 'invoiceId or gatewayId of an existing paylink or gateway is required');
  return r;
}
