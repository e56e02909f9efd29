/**
 * The one place the ordering app's long-lived objects are built from its dependencies (docs/architecture.md
 * "Composition roots"): `server.ts` calls {@link composeOrdering} before it starts the background workers,
 * `createApp` calls it for apps built without `server.ts` (tests), and both get the same objects for one deps
 * object. Handlers, middleware and workers receive what was built here; nothing else builds them.
 * It is also the one place that says which handler runs which outbox job kind ({@link outboxJobs}) and which
 * ERP webhook entity ({@link erpEntityHandlers}): the dispatchers and the webhook worker get these maps.
 */
import type { OrderingDeps } from './context';
import type { EnvelopeEncryption } from './crypto/aead';
import { encryptionOf } from './crypto/encryption';
import { articleWebhookHandler } from './catalog/catalog.import';
import { ErpClients } from './erp/erp-clients';
import type { ErpEntityHandlers } from './erp/erp-webhook.service';
import { createIdentity, type Identity } from './identity/identity';
import { MaintenanceMode } from './maintenance/maintenance.service';
import { OrderFlow } from './orders/order-flow.service';
import { OrderLimits } from './orders/order-limits';
import type { LaneOptions, OutboxHandler } from './outbox/outbox.service';
import { ERP_QUOTATION_JOB, quotationJobHandler } from './quotations/center-quotation.service';
import { retailersWebhookHandler } from './retailers/retailers.service';

/** The objects built once per app from its {@link OrderingDeps}. */
export interface OrderingServices {
  /** `deps.encryption`, else the key ring of `config.encryptionKeys` (or an ephemeral one, `crypto/encryption.ts`). */
  encryption: EnvelopeEncryption;
  /** `deps.maintenance`, else a flag reader of its own (shared by the gate, the fast lane and the handlers). */
  maintenance: MaintenanceMode;
  /** `deps.erpClients`, else ERP clients over the encrypted token store. */
  erpClients: ErpClients;
  /** `deps.orderFlow`, else one for the payment webhook and the utilities (inline paylinks still need `deps.orderFlow`). */
  orderFlow: OrderFlow;
  /** Users, auth, service clients, licensing and the Redis connection of `REDIS_URL`. */
  identity: Identity;
  /** Order abuse limits, shared by the discount-check middleware and the order and quotation handlers. */
  orderLimits: OrderLimits;
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

/**
 * Which handler runs which outbox job kind (docs/outbox.md), with the lane limits of the order flow's kinds:
 * `payment-paylink`, `payment-status`, `erp-sales-order`, `payment-paylink-delete` → the order flow's handlers
 * (`OrderFlow.handlers()`); `erp-quotation` → the Center quotation through the `weclapp` client of
 * `erpClients`. `mail` is not here: a dispatcher given a mailer runs it itself.
 */
function outboxJobs(orderFlow: OrderFlow, erpClients: ErpClients): OutboxJobs {
  return {
    handlers: { ...orderFlow.handlers(), [ERP_QUOTATION_JOB]: quotationJobHandler(() => erpClients.erpClientFor('weclapp')) },
    lanes: orderFlow.jobLanes(),
  };
}

/**
 * Which ERP entity a webhook delivery re-reads and applies (ordering spec §4.10): `article` re-imports that
 * article, `customer` and `party` the retailer list, `salesOrder` moves the shop order along (shipped,
 * completed). Other names are acknowledged and ignored.
 */
function erpEntityHandlers(orderFlow: OrderFlow): ErpEntityHandlers {
  return {
    article: articleWebhookHandler,
    customer: retailersWebhookHandler,
    party: retailersWebhookHandler,
    salesOrder: async (event) => {
      await orderFlow.applyErpSalesOrder(event.erpSystem, event.entityId);
    },
  };
}

/** What handler factories receive: the dependencies and the objects built from them. */
export type OrderingContext = OrderingDeps & { services: OrderingServices };

const composed = new WeakMap<OrderingDeps, OrderingServices>();

/**
 * Builds the {@link OrderingServices} of `deps` (once: a second call with the same object returns the same
 * services). The caller owns what it built: `identity.redis` is disconnected at shutdown (`server.ts`).
 */
export function composeOrdering(deps: OrderingDeps): OrderingServices {
  const done = composed.get(deps);
  if (done) return done;
  const { config, database, logger } = deps;
  const encryption = encryptionOf(deps);
  const erpClients = deps.erpClients ?? new ErpClients({ db: database.db, config, encryption });
  const identity = createIdentity(deps);
  const orderFlow = deps.orderFlow ?? new OrderFlow({ database, logger, config, erpClients });
  const services: OrderingServices = {
    encryption,
    maintenance: deps.maintenance ?? new MaintenanceMode(database.db, { logger }),
    erpClients,
    orderFlow,
    identity,
    orderLimits: new OrderLimits(config, identity.redis, logger),
    outboxJobs: outboxJobs(orderFlow, erpClients),
    erpEntityHandlers: erpEntityHandlers(orderFlow),
  };
  composed.set(deps, services);
  return services;
}

/** The services {@link composeOrdering} built for `deps`; throws when `deps` was never composed. */
function servicesOf(deps: OrderingDeps): OrderingServices {
  const s = composed.get(deps);
  if (!s) throw new Error('composeOrdering(deps) (or createApp(deps)) must run first');
  return s;
}

/** The identity services built for `deps` (an app's dependencies already passed to `createApp`). */
export function identityOf(deps: OrderingDeps): Identity {
  return servicesOf(deps).identity;
}

/** The ERP clients built for `deps`. */
export function erpClientsOf(deps: OrderingDeps): ErpClients {
  return servicesOf(deps).erpClients;
}

/** The maintenance flag reader built for `deps`. */
export function maintenanceOf(deps: OrderingDeps): MaintenanceMode {
  return servicesOf(deps).maintenance;
}
