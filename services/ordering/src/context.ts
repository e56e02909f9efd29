/**
 * What the ordering app needs from the outside: `server.ts` gathers it from the configuration, tests build
 * their own. `composeOrdering` (composition.ts, the composition root) builds every stateful object of the app
 * from it, once per call; handler factories get both (`OrderingContext`).
 */
import type { Logger } from 'pino';
import type { Database } from '@sports-timing/shared';
import type { TokenService } from './auth/tokens';
import type { OrderingConfig } from './config';
import type { DB } from './db/schema';
import type { Mailer } from './mail/mailer';
import type { StatusProbes } from './devtools/status';

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
  /**
   * The AES-256-GCM key ring in the `ENCRYPTION_KEYS` format (`server.ts`: that variable, or in development a
   * ring generated once into `.data/keys/encryption-keys`); absent → `config.encryptionKeys`, else an ephemeral
   * random ring of this composition (its ciphertexts then live as long as the app). A malformed ring throws
   * when composed.
   */
  keyRing?: string;
  /**
   * Inline paylinks: right after a new prepaid order commits, the order request makes one attempt at its paylink
   * (`PaylinkJobs.createPaylinkNow`) and answers it. Absent or false → the `payment-paylink` outbox job alone
   * creates it (the answer has `paylinkUrl: null`). `server.ts` turns it on.
   */
  inlinePaylinks?: boolean;
  /** Reachability checks of the ERP system and payment provider for the status utilities; absent → `disabled`. */
  statusProbes?: StatusProbes;
}
