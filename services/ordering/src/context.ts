/**
 * What the ordering app needs from the outside (the composition root is `server.ts`; tests build their
 * own). Area handler factories receive this and construct their domain services from it.
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
   * Serve plain anonymous article lists outside the Express pipeline (http/shop-articles.fast.ts); default
   * on. Off in the tests that need every list validated by the pipeline or that compare both paths.
   */
  fastLane?: boolean;
  /** AES-256-GCM key ring; read it through `encryptionOf(deps)` (crypto/encryption.ts), which also covers tests. */
  encryption?: EnvelopeEncryption;
  /** The shared maintenance flag; read it through `maintenanceOf(deps)` (one per database handle when absent). */
  maintenance?: MaintenanceMode;
  /** ERP clients and token store; read it through `erpClientsOf(deps)` (erp/erp-clients.ts), which also covers tests. */
  erpClients?: ErpClients;
  /** Paylinks, payment webhooks and the ERP hand-off (orders/order-flow.service.ts); absent → new orders get no inline paylink (the outbox job still exists). */
  orderFlow?: OrderFlow;
  /** Reachability checks of the ERP system and payment provider for the status utilities; absent → `disabled`. */
  statusProbes?: StatusProbes;
}
