/**
 * `pnpm start` entry of the payment simulator: listens on `PAYMENT_SIMULATOR_PORT` (default 8091) at
 * `HOST` (default 127.0.0.1); instance `PAYMENT_INSTANCE` (default `demo`) and API key
 * `PAYMENT_API_KEY` (default the development key) — the same variables the ordering service reads, so
 * both agree without further set-up. Webhook subscriptions come from `PAYMENT_SIMULATOR_WEBHOOK_URLS`
 * (comma list) or `POST /__control/subscribe`.
 */
import { checkHost, ConfigError, createLogger, parseUrlList, envReader, stopOnSignals } from '@sports-timing/shared';
import { controlTokenFromEnv } from '@sports-timing/erp-simulator/src/sim-server';
import { DEFAULT_API_KEY, DEFAULT_INSTANCE, createPaymentSimulator } from './simulator';

async function main(): Promise<void> {
  const env = envReader();
  // Before anything listens: outside development no control API without a token.
  const controlToken = controlTokenFromEnv();
  const logger = createLogger('payment-simulator');
  const sim = createPaymentSimulator({
    port: env.int('PAYMENT_SIMULATOR_PORT', 8091, 0, 65535),
    host: checkHost('HOST', env.string('HOST', '127.0.0.1')!),
    instance: env.string('PAYMENT_INSTANCE', DEFAULT_INSTANCE)!,
    apiKey: env.string('PAYMENT_API_KEY', DEFAULT_API_KEY)!,
    webhookMaxAttempts: env.int('PAYMENT_SIMULATOR_WEBHOOK_ATTEMPTS', 5, 1, 20),
    webhookBackoffMs: env.int('PAYMENT_SIMULATOR_WEBHOOK_BACKOFF_MS', 2_000, 0, 600_000),
    // Paylinks live in memory only: ids derived from time never repeat those a shop stored before a restart.
    idsFromTime: true,
    log: (line) => logger.info(line),
    controlToken,
  });
  for (const url of parseUrlList('PAYMENT_SIMULATOR_WEBHOOK_URLS', env.string('PAYMENT_SIMULATOR_WEBHOOK_URLS', ''))) sim.subscribe(url, 'json');
  await sim.start();
  logger.info(
    { baseUrl: sim.baseUrl, instance: sim.instance },
    `payment simulator listening (control API under /__control: ${controlToken ? 'X-Control-Token' : 'loopback only'})`,
  );
  stopOnSignals(() => sim.stop(), logger);
}

main().catch((err) => {
  // A configuration mistake is one line naming its variable (README "Configuration"); anything else keeps its stack.
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
