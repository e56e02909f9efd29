/**
 * The composition root of the ordering app (docs/architecture.md "Composition roots"): {@link composeOrdering}
 * builds every stateful object of one app from its dependencies, once per call, and hands them down: `server.ts`
 * calls it once and gives the result to `createApp` and to the background workers; tests compose through it
 * too. Nothing else builds these objects and no module keeps state of its own, so two apps composed in one
 * process share nothing unless a caller hands one's object to the other.
 * It is also the one place that says which handler runs which outbox job kind ({@link outboxJobs}, the order flow's
 * kinds in {@link orderFlowHandlers}) and which ERP webhook entity ({@link erpEntityHandlers}): the dispatchers and
 * the webhook worker get these maps.
 */
import type { OrderingDeps } from './context';
import { EnvelopeEncryption, generateKeyRingSpec } from './crypto/aead';
import { ArticleListCache, CartArticleCache } from './catalog/catalog-caches';
import { articleWebhookHandler } from './catalog/catalog.import';
import { findCatalogArticles } from './catalog/catalog.service';
import { ErpClients } from './erp/erp-clients';
import type { ErpEntityHandlers } from './erp/erp-webhook.service';
import { createIdentity, type Identity } from './identity/identity';
import { QrCodeRenderer } from './devtools/qrcode';
import { CacheRegistry } from './maintenance/caches';
import { MaintenanceMode } from './maintenance/maintenance.service';
import { ErpHandOff } from './orders/flow/erp-hand-off';
import { FLOW_JOB_LANES, FLOW_JOBS, type OrderJobPayload, type PaylinkDeletePayload, type PaymentStatusJobPayload } from './orders/flow/flow-jobs';
import { PaylinkJobs } from './orders/flow/paylink-jobs';
import { PaymentStatusProcessor } from './orders/flow/payment-status.service';
import { SalesOrderSync } from './orders/flow/sales-order-sync';
import { OrderLimits } from './orders/placement/order-limits';
import type { LaneOptions, OutboxHandler } from './outbox/outbox.service';
import { createPaymentClient, type PaymentClient } from './payment/payment.client';
import { ERP_QUOTATION_JOB, quotationJobHandler } from './quotations/center-quotation.service';
import { retailersWebhookHandler } from './retailers/retailers.service';

/** The objects {@link composeOrdering} built for one app; each exists once per app. @internal */
export interface OrderingServices {
  /** The key ring of `deps.keyRing`, else `config.encryptionKeys`, else an ephemeral one (see `OrderingDeps.keyRing`). */
  encryption: EnvelopeEncryption;
  /** The app's in-process caches, cleared by `clearCaches`, the imports and the `CacheClearListener` of `server.ts`. */
  caches: CacheRegistry;
  /** Cart articles for order placement and the discount check (registered in {@link caches}). */
  cartArticles: CartArticleCache;
  /** Rendered shop article lists for the handler and the fast lane (registered in {@link caches}). */
  articleLists: ArticleListCache;
  /** The maintenance flag reader, shared by the gate, the fast lane and the handlers. */
  maintenance: MaintenanceMode;
  /** The ERP client and the encrypted token store. */
  erpClients: ErpClients;
  /** The payment provider's client (with retries), shared by the order flow's parts and the provider passthroughs. */
  payment: PaymentClient;
  /** The paylink jobs and the order paylink utilities (`orders/flow/paylink-jobs.ts`). */
  paylinks: PaylinkJobs;
  /** {@link paylinks} when `deps.inlinePaylinks`, else absent: the order handlers' one paylink attempt after commit. */
  inlinePaylinks?: Pick<PaylinkJobs, 'createPaylinkNow'>;
  /** The `payment-status` job and its unknown-transaction budget (`orders/flow/payment-status.service.ts`). */
  paymentStatus: PaymentStatusProcessor;
  /** The `erp-sales-order` job (`orders/flow/erp-hand-off.ts`). */
  erpHandOff: ErpHandOff;
  /** Sales-order changes from the ERP webhook and the periodic check (`orders/flow/sales-order-sync.ts`). */
  salesOrders: SalesOrderSync;
  /** Users, auth, service clients, licensing and the Redis connection of `REDIS_URL`. */
  identity: Identity;
  /** Order abuse limits, shared by the discount-check middleware and the order and quotation handlers. */
  orderLimits: OrderLimits;
  /** The QR code renderer of `devGetQrcode` and its PNG worker thread. */
  qrCodes: QrCodeRenderer;
  /** The outbox job kinds besides `mail`, for every dispatcher of the app ({@link outboxJobs}). */
  outboxJobs: OutboxJobs;
  /** The ERP webhook entity names the app accepts and what each runs ({@link erpEntityHandlers}). */
  erpEntityHandlers: ErpEntityHandlers;
}

/** Handlers by outbox job kind and the lane limits of those kinds that need their own (`OutboxDispatcherOptions`). */
interface OutboxJobs {
  handlers: Record<string, OutboxHandler<never>>;
  lanes: Record<string, LaneOptions>;
}

/** The parts of the order flow that run its jobs (`orders/flow/`). @internal */
export type OrderFlowParts = Pick<OrderingServices, 'paylinks' | 'paymentStatus' | 'erpHandOff'>;

/**
 * Which handler runs which job kind of the order flow (`orders/flow/flow-jobs.ts`, docs/outbox.md); also what the
 * order-flow tests' dispatchers run.
 * @internal
 */
export function orderFlowHandlers({ paylinks, paymentStatus, erpHandOff }: OrderFlowParts): Record<string, OutboxHandler<never>> {
  return {
    [FLOW_JOBS.paylink]: (job: { payload: OrderJobPayload }) => paylinks.ensurePaylink(job.payload.orderId),
    [FLOW_JOBS.paymentStatus]: (job: { payload: PaymentStatusJobPayload }) => paymentStatus.process(job.payload.deliveryId, job.payload.transactionId),
    [FLOW_JOBS.erpSalesOrder]: (job: { payload: OrderJobPayload }) => erpHandOff.handOffToErp(job.payload.orderId),
    [FLOW_JOBS.paylinkDelete]: (job: { payload: PaylinkDeletePayload }) => paylinks.deleteExpiredPaylink(job.payload),
  };
}

/**
 * Which handler runs which outbox job kind (docs/outbox.md), with the lane limits of the order flow's kinds
 * (`FLOW_JOB_LANES`): `payment-paylink`, `payment-status`, `erp-sales-order`, `payment-paylink-delete` → the order
 * flow's parts ({@link orderFlowHandlers}); `erp-quotation` → the Center quotation through the ERP client of
 * `erpClients`. `mail` is not here: a dispatcher given a mailer runs it itself.
 */
function outboxJobs(flow: OrderFlowParts, erpClients: ErpClients): OutboxJobs {
  return {
    handlers: { ...orderFlowHandlers(flow), [ERP_QUOTATION_JOB]: quotationJobHandler(() => erpClients.client) },
    lanes: { ...FLOW_JOB_LANES },
  };
}

/**
 * Which ERP entity a webhook delivery re-reads and applies (`receiveErpWebhook`): `article` re-imports that
 * article, `customer` and `party` the retailer list, `salesOrder` moves the shop order along (shipped,
 * completed). Other names are acknowledged and ignored.
 */
function erpEntityHandlers(salesOrders: SalesOrderSync, caches: CacheRegistry): ErpEntityHandlers {
  return {
    article: articleWebhookHandler(caches),
    customer: retailersWebhookHandler,
    party: retailersWebhookHandler,
    salesOrder: async (event) => {
      await salesOrders.applyErpSalesOrder(event.erpSystem, event.entityId);
    },
  };
}

/** What handler factories receive: the dependencies and the objects built from them. */
export type OrderingContext = OrderingDeps & { services: OrderingServices };

/**
 * Builds the {@link OrderingServices} of one app from `deps` (every call builds new ones: compose once per app
 * and pass the result on) and answers them with `deps` as the app's {@link OrderingContext}. Throws on a
 * malformed key ring. The caller owns what was built: `identity.redis` is disconnected at shutdown (`server.ts`).
 */
export function composeOrdering(deps: OrderingDeps): OrderingContext {
  const { config, database, logger } = deps;
  const db = database.db;
  const encryption = EnvelopeEncryption.fromSpec(deps.keyRing ?? config.encryptionKeys ?? generateKeyRingSpec());
  const caches = new CacheRegistry();
  const erpClients = new ErpClients({ db, config, encryption });
  const identity = createIdentity(deps);
  const payment = createPaymentClient(config);
  const paylinks = new PaylinkJobs({ database, logger, config, payment });
  const paymentStatus = new PaymentStatusProcessor({ database, logger, config, payment });
  const erpHandOff = new ErpHandOff({ database, config, erpClients });
  const salesOrders = new SalesOrderSync({ database, erpClients });
  const services: OrderingServices = {
    encryption,
    caches,
    cartArticles: new CartArticleCache((numbers) => findCatalogArticles(db, numbers), caches),
    articleLists: new ArticleListCache(caches),
    maintenance: new MaintenanceMode(db, { logger }),
    erpClients,
    payment,
    paylinks,
    ...(deps.inlinePaylinks ? { inlinePaylinks: paylinks } : {}),
    paymentStatus,
    erpHandOff,
    salesOrders,
    identity,
    orderLimits: new OrderLimits(config, identity.redis, logger),
    qrCodes: new QrCodeRenderer(),
    outboxJobs: outboxJobs({ paylinks, paymentStatus, erpHandOff }, erpClients),
    erpEntityHandlers: erpEntityHandlers(salesOrders, caches),
  };
  return { ...deps, services };
}
