/**
 * The Payrexx REST v1 subset of the payment simulator (routes listed in `simulator.ts`'s module comment) and
 * the payment page under `/pay/{hash}`. Refusals are thrown as {@link SimHttpError}s, which the shared server
 * answers in Payrexx's error body.
 */
import { SimHttpError, type SimRequest, type SimResponse } from '@sports-timing/shared/src/sim-server';
import { payPageHtml, type Paylinks } from './paylinks';
import { bodyFields, errorBody, ok, utcFilter } from './payrexx-format';
import type { Ledger } from './transactions';

/** What the API reads and changes. */
export interface PaymentApiContext {
  apiKey: string;
  instance: string;
  paylinks: Paylinks;
  ledger: Ledger;
}

const TEXT = 'text/plain;charset=UTF-8';

/** Answers an API or payment page request: 401 for a wrong key or instance, 404 for an unknown path. */
export function answerApi(ctx: PaymentApiContext, req: SimRequest): SimResponse {
  const pay = /^\/pay\/([0-9a-f]+)$/.exec(req.path);
  if (pay) return payPage(ctx, req, pay[1]);
  const m = /^\/api\/v1\/(\w+)(?:\/([\w-]+))?(?:\/([\w-]+))?\/?$/.exec(req.path);
  if (!m) return { status: 404, json: errorBody(`no API at ${req.path}`) };
  if (req.headers['x-api-key'] !== ctx.apiKey) return { status: 401, json: errorBody('Authentication failed: invalid API key') };
  if (req.query.get('instance') !== ctx.instance) return { status: 401, json: errorBody('Authentication failed: no access to this instance') };
  return route(ctx, req, m[1], m[2], m[3]);
}

function route(ctx: PaymentApiContext, req: SimRequest, resource: string, id: string | undefined, sub: string | undefined): SimResponse {
  const { paylinks, ledger } = ctx;
  const path = `${req.method} ${resource}${id === undefined ? '' : '/:id'}${sub === undefined ? '' : `/${sub}`}`;
  switch (path) {
    case 'GET SignatureCheck':
      return ok([{ id: 1 }]);
    case 'POST Invoice':
      return ok([paylinks.invoiceAnswer(paylinks.create('invoice', bodyFields(req)))]);
    case 'POST Gateway':
      return ok([paylinks.gatewayAnswer(paylinks.create('gateway', bodyFields(req)))]);
    case 'GET Invoice/:id':
    case 'GET Gateway/:id': {
      const r = paylinks.map(resource === 'Invoice' ? 'invoice' : 'gateway').get(Number(id));
      if (!r) throw new SimHttpError(404, `No ${resource} found with id ${id}`);
      return ok([resource === 'Invoice' ? paylinks.invoiceAnswer(r) : paylinks.gatewayAnswer(r)]);
    }
    case 'DELETE Invoice/:id':
    case 'DELETE Gateway/:id': {
      const map = paylinks.map(resource === 'Invoice' ? 'invoice' : 'gateway');
      const r = map.get(Number(id));
      if (!r) throw new SimHttpError(404, `No ${resource} found with id ${id}`);
      if (r.status === 'confirmed') throw new SimHttpError(400, `${resource} ${id} is paid and cannot be deleted`);
      map.delete(r.id);
      return ok([{ id: r.id }]);
    }
    case 'GET Transaction/:id': {
      const tx = ledger.transactions.get(Number(id));
      if (!tx) throw new SimHttpError(404, `No Transaction found with id ${id}`);
      return ok([tx]);
    }
    case 'GET Transaction':
      return ok(listTransactions(ledger, req.query));
    case 'GET Payout':
      return ok([...ledger.payouts.values()].sort((a, b) => b.date.localeCompare(a.date)));
    case 'GET Payout/:id':
    case 'GET Payout/:id/details': {
      const p = ledger.payouts.get(String(id));
      if (!p) throw new SimHttpError(404, `No Payout found with uuid ${id}`);
      return ok([p]);
    }
    default:
      throw new SimHttpError(404, `unknown endpoint ${req.method} ${req.path}`);
  }
}

/** `GET /Transaction/?limit&offset&orderByTime&filterDatetimeUtcGreaterThan&filterDatetimeUtcLessThan`; 400 on a bad order or time. */
function listTransactions(ledger: Ledger, q: URLSearchParams) {
  const limit = Math.min(100, Math.max(1, Number(q.get('limit') ?? 100) || 100));
  const offset = Math.max(0, Number(q.get('offset') ?? 0) || 0);
  const order = q.get('orderByTime') ?? 'ASC';
  if (order !== 'ASC' && order !== 'DESC') throw new SimHttpError(400, 'orderByTime: ASC or DESC');
  const bound = (name: string): number | null => {
    const v = q.get(name);
    if (v === null) return null;
    const t = utcFilter(v);
    if (Number.isNaN(t)) throw new SimHttpError(400, `${name}: Y-m-d H:i:s (UTC) expected`);
    return t;
  };
  const after = bound('filterDatetimeUtcGreaterThan');
  const before = bound('filterDatetimeUtcLessThan');
  return ledger.list({ limit, offset, descending: order === 'DESC', after, before });
}

/** The payment page: GET shows it, POST `action=pay|cancel` acts and redirects (303) when the paylink says where to. */
function payPage(ctx: PaymentApiContext, req: SimRequest, hash: string): SimResponse {
  const r = ctx.paylinks.byHash(hash);
  if (!r) return { status: 404, text: 'Unknown payment link', contentType: TEXT };
  if (req.method === 'POST') {
    const action = new URLSearchParams(req.body).get('action');
    try {
      if (action === 'cancel') ctx.ledger.cancel(r);
      else ctx.ledger.pay(r);
    } catch (err) {
      // The page is HTML, so its refusals are text, not Payrexx's JSON error body.
      if (err instanceof SimHttpError) return { status: err.status, text: err.message, contentType: TEXT };
      throw err;
    }
    const target = action === 'cancel' ? (r.cancelRedirectUrl ?? r.failedRedirectUrl) : r.successRedirectUrl;
    if (target) return { status: 303, headers: { location: target } };
  }
  return { status: 200, contentType: 'text/html;charset=UTF-8', text: payPageHtml(r) };
}
