/**
 * What the ordering app needs from the outside (the composition root is `server.ts`; tests build their
 * own). `composeOrdering` (composition.ts) builds the shared services from it once; handler factories get
 * both (`OrderingContext`).
 */
import type { Logger } from 'pino';
import type { Database } from '@sports-timing/shared';
import type { TokenService } from './auth/tokens';
import type { OrderingConfig } from './config';
import type { DB } from './db/schema';
import type { Mailer } from './mail/mailer';
import type { EnvelopeEncryption } from './crypto/aead';
import type { ErpClients } from './erp/erp-clients';
import type { OrderFlow } from './orders/order-flow.service';
import type { StatusProbes } from './devtools/status';
import type { MaintenanceMode } from './maintenance/maintenance.service';

/** Dependencies of the ordering app. */
export interface OrderingDeps {
  config: OrderingConfig;
  database: Database<DB>;
  logger: Logger;
  tokens: TokenService;
  /** Used only by the outbox dispatcher; domain code enqueues mail with `enqueueMail`. */
  mailer: Mailer;
  /** Validate responses against the spec (tests/CI). */
  validateResponses?: boolean;
  /**
   * Serve plain anonymous article lists outside the Express pipeline (http/shop-articles.fast-lane.ts); default
   * on. Off in the tests that need every list validated by the pipeline or that compare both paths.
   */
  fastLane?: boolean;
  /** AES-256-GCM key ring; absent → `encryptionOf` (crypto/encryption.ts) when the services are composed. */
  encryption?: EnvelopeEncryption;
  /** The shared maintenance flag; absent → one per composed app. */
  maintenance?: MaintenanceMode;
  /** ERP clients and token store; absent → one per composed app. */
  erpClients?: ErpClients;
  /** Paylinks, payment webhooks and the ERP hand-off (orders/order-flow.service.ts); absent → new orders get no inline paylink (the outbox job still exists). */
  orderFlow?: OrderFlow;
  /** Reachability checks of the ERP system and payment provider for the status utilities; absent → `disabled`. */
  statusProbes?: StatusProbes;
}
