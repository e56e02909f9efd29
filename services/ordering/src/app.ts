/**
 * The ordering service as an Express app (no listen): spec validation, spec-driven access control,
 * handlers by operationId, google.rpc.Status errors under `/api/grpc-json/v1/shop` and problem+json
 * everywhere else (docs/decisions.md §4). `server.ts` wires configuration, the database and the listener.
 */
import compression from 'compression';
import { parseBracketForm } from '@sports-timing/shared/src/bracket-form';
import express, { type Express, type Request, type RequestHandler } from 'express';
import {
  corsFromSpec,
  createMetrics,
  apiDocs,
  ApiError,
  clientIp,
  rateLimits,
  dispatch,
  enforceRoles,
  findOperation,
  httpLogEnabled,
  httpLogger,
  loadSpec,
  operationOf,
  problemErrorHandler,
  reachedHandler,
  rpcStatusErrorHandler,
  runBeforeExpress,
  validator,
  type OpenApiDocument,
} from '@sports-timing/shared';
import type { Principal } from './auth/principal';
import type { OrderingContext } from './composition';
import type { OrderingDeps } from './context';
import { allHandlers } from './http';
import { registerOutboxBacklogMetrics } from './metrics/outbox-backlog';
import { registerOperatorAttentionMetrics } from './metrics/operator-attention';
import { countPending } from './outbox/outbox.repository';
import { tokenEndpointErrorHandler } from './http/auth.handlers';
import { identifyServiceClient } from './identity/access';
import { maintenanceGate } from './maintenance/maintenance.middleware';
import { shopArticlesFastLane } from './http/shop-articles.fast-lane';
import { requestCaller } from './http/caller';
import type { OrderLimits } from './orders/placement/order-limits';
import { SPEC_FILE } from './version';

/** Path prefix of the google.rpc.Status area. */
const SHOP_PREFIX = '/api/grpc-json/v1/shop';

/** JSON media types accepted for request bodies (specs/ordering.yaml, `info.description` "Conventions"). */
const JSON_TYPES = ['application/json', 'application/json-patch+json', 'text/json', 'application/*+json'];

/**
 * The spec accepts `application/*+json` bodies (specs/ordering.yaml, `info.description` "Conventions"), but the
 * validator matches media types exactly: present any `application/<x>+json` body to it as `application/json`.
 */
const normalizeJsonMediaType: RequestHandler = (req, _res, next) => {
  const ct = req.headers['content-type'];
  if (ct && /^application\/[\w.-]+\+json\s*(;|$)/i.test(ct)) req.headers['content-type'] = ct.replace(/^application\/[\w.-]+\+json/i, 'application/json');
  next();
};

/**
 * Extended (qs) form parsing with a small nesting depth (body-parser 2 `depth`, not yet in its typings):
 * the payment provider's webhook posts `transaction[id]=…&transaction[invoice][…]=…`.
 */
const URLENCODED_OPTIONS: Parameters<typeof express.urlencoded>[0] & { depth: number } = { extended: true, depth: 5, limit: '64kb', parameterLimit: 100 };

/**
 * The payment webhook's form body is the whole transaction flattened (contact with billing and delivery
 * address, invoice with custom fields and products: well over 100 parameters, docs/payrexx.md): a higher
 * parameter bound for that route only, still bounded, and parsed as Payrexx's PHP-style names mean it, numeric
 * keys as object keys (`customFields[1]`), so a form body has the shape of the same webhook sent as JSON. Runs
 * before the general parser, which then skips the already read body.
 */
const paymentWebhookText = express.text({ type: 'application/x-www-form-urlencoded', limit: '256kb' });
function paymentWebhookUrlencoded(spec: OpenApiDocument): RequestHandler {
  const webhookPath = findOperation(spec, 'receivePaymentProviderStatus').path;
  return (req, res, next) => {
    if (req.path !== webhookPath) return next();
    paymentWebhookText(req, res, (err?: unknown) => {
      if (err || typeof req.body !== 'string') return next(err);
      try {
        req.body = parseBracketForm(req.body, { parameterLimit: 1000, depth: 6 });
        next();
      } catch (e) {
        next(e);
      }
    });
  };
}

/**
 * Rate limits of specs/ordering.yaml (`info.description` "Errors": order creation, battery lookup, payment
 * webhooks; login and license-key limits live in the identity area, discount-code checks and order abuse limits in
 * `orders/placement/order-limits.ts`), shared by all instances through Redis when `REDIS_URL` is set. Callers are counted
 * per principal, else per IP address (a registered `X-Service-Client-Id` names a budget per address; `requestCaller`).
 */
function orderingRateLimits(deps: OrderingDeps, redis: Parameters<typeof rateLimits>[1]['redis']): RequestHandler {
  const { config } = deps;
  const perMinute = (operationId: string, points: number) => ({ operationId, points, durationSeconds: 60, key: requestCaller });
  return rateLimits(
    [
      { ...perMinute('createOrder', config.rateLimitOrdersPerMinute), message: 'Too many orders; retry later.' },
      { ...perMinute('createShopOrder', config.rateLimitOrdersPerMinute), message: 'Too many orders; retry later.' },
      { ...perMinute('getSiCardBattery', config.rateLimitBatteryLookupsPerMinute), message: 'Too many battery lookups; retry later.' },
      // Per source address: the provider calls without credentials.
      {
        operationId: 'receivePaymentProviderStatus',
        points: config.rateLimitPaymentWebhooksPerMinute,
        durationSeconds: 60,
        key: (req) => `ip:${clientIp(req)}`,
        message: 'Too many payment notifications; retry later.',
      },
    ],
    { redis, prefix: config.rateLimitKeyPrefix, logger: deps.logger },
  );
}

/**
 * `validateDiscountCodes` costs one point of the discount-code check budget, before the body is read; a
 * request then refused by validation (400 before its handler) gets the point back. Orders with codes draw on
 * the same budget (`orders/placement/order-limits.ts`).
 */
function discountCheckLimit(limits: OrderLimits): RequestHandler {
  return (req, res, next) => {
    if (operationOf(req)?.operationId !== 'validateDiscountCodes') return next();
    const caller = requestCaller(req, res);
    limits.chargeDiscountCheck(caller).then(() => {
      // A check refused by validation looked at no code: its point comes back.
      res.once('finish', () => {
        if (res.statusCode === 400 && !reachedHandler(req)) limits.refundDiscountCheck(caller).catch(() => undefined);
      });
      next();
    }, next);
  };
}

/**
 * Builds the app over a composed context (`composeOrdering(deps)`): the dependencies and the services built
 * from them, which the middleware, the fast lane and the handlers use. It builds no stateful object itself;
 * apps built from one context (spread with other `validateResponses` or `fastLane`) share all its services.
 */
export function createApp(ctx: OrderingContext): Express {
  const { services } = ctx;
  const deps: OrderingDeps = ctx;
  const spec = loadSpec(SPEC_FILE);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', deps.config.trustedProxies.length > 0 ? deps.config.trustedProxies : false);
  const metrics = createMetrics('ordering', deps.database.pool, { token: deps.config.metricsToken, production: deps.config.environment === 'production' });
  app.locals.metrics = metrics;
  app.use(httpLogger(deps.logger));
  app.use(metrics.middleware);
  metrics.gauge('outbox_messages_pending', 'E-mails in the outbox not yet sent', () => countPending(deps.database.db));
  registerOutboxBacklogMetrics(metrics, deps.database.db);
  registerOperatorAttentionMetrics(metrics, deps.database.db);
  app.use(compression({ level: 4, threshold: 1024 }));
  app.use(corsFromSpec(spec, deps.config.corsOrigins));

  const identity = services.identity;
  const authenticate = async (req: Request): Promise<Principal | null> => {
    const header = req.headers.authorization;
    // The token endpoint authenticates clients itself (HTTP Basic, RFC 6749 §2.3.1).
    if (!header || operationOf(req)?.operationId === 'issueToken') return null;
    const m = /^Bearer\s+(\S+)$/i.exec(header);
    if (!m) throw new ApiError(401, 'Use the Bearer authorization scheme.', { headers: { 'WWW-Authenticate': 'Bearer' } });
    const principal = await deps.tokens.verify(m[1]);
    await identity.access.assertActive(principal);
    return principal;
  };

  app.use(
    apiDocs(SPEC_FILE, spec, {
      service: 'ordering',
      links: [
        { title: 'Shop articles', href: '/api/grpc-json/v1/shop/articles' },
        { title: 'Version', href: '/api/rest/v1/version' },
        { title: 'Health (liveness)', href: '/healthz' },
        { title: 'Readiness', href: '/readyz' },
        { title: 'Metrics (Prometheus)', href: '/metrics' },
      ],
    }),
  );
  app.use(metrics.router);
  app.use(
    validator(spec, {
      validateResponses: deps.validateResponses,
      beforeValidation: [
        enforceRoles(authenticate, 'Bearer'),
        maintenanceGate({ config: deps.config, maintenance: services.maintenance }),
        identifyServiceClient(identity.clients, deps.logger),
        orderingRateLimits(deps, identity.redis),
        discountCheckLimit(services.orderLimits),
        normalizeJsonMediaType,
        express.json({ type: JSON_TYPES, limit: '256kb' }),
        paymentWebhookUrlencoded(spec),
        express.urlencoded(URLENCODED_OPTIONS),
        express.text({ type: 'text/plain', limit: '64kb' }),
        express.text({ type: 'text/csv', limit: '1mb' }),
      ],
    }),
  );
  app.use(dispatch(allHandlers(ctx, String((spec.info as { version: string }).version))));
  // The token endpoint's errors (RFC 6749 §5.2 shape), on the path of `issueToken` in the spec.
  app.use(findOperation(spec, 'issueToken').path, tokenEndpointErrorHandler(deps.logger));
  app.use(SHOP_PREFIX, rpcStatusErrorHandler(deps.logger));
  app.use(problemErrorHandler(deps.logger));
  if (deps.fastLane !== false)
    runBeforeExpress(
      app,
      shopArticlesFastLane({
        spec,
        database: deps.database,
        articleLists: services.articleLists,
        maintenance: services.maintenance,
        metrics,
        logger: deps.logger,
        httpLog: httpLogEnabled(),
      }),
    );
  return app;
}
