/**
 * `pnpm start` entry of the payment simulator: listens on `PAYMENT_SIMULATOR_PORT` (default 8091) at
 * `HOST` (default 127.0.0.1); instance `PAYMENT_INSTANCE` (default `demo`) and API key
 * `PAYMENT_API_KEY` (default the development key) — the same variables the ordering service reads, so
 * both agree without further set-up. Webhook subscriptions come from `PAYMENT_SIMULATOR_WEBHOOK_URLS`
 * (comma list) or `POST /__control/subscribe`.
 */
import { runSimulator } from '@sports-timing/shared/src/sim-main';
import { DEFAULT_API_KEY, DEFAULT_INSTANCE, createPaymentSimulator } from './simulator';

runSimulator({
  name: 'payment-simulator',
  label: 'payment simulator',
  create({ env, host, log, controlToken, list }) {
    const sim = createPaymentSimulator({
      port: env.int('PAYMENT_SIMULATOR_PORT', 8091, 0, 65535),
      host,
      instance: env.string('PAYMENT_INSTANCE', DEFAULT_INSTANCE)!,
      apiKey: env.string('PAYMENT_API_KEY', DEFAULT_API_KEY)!,
      webhookMaxAttempts: env.int('PAYMENT_SIMULATOR_WEBHOOK_ATTEMPTS', 5, 1, 20),
      webhookBackoffMs: env.int('PAYMENT_SIMULATOR_WEBHOOK_BACKOFF_MS', 2_000, 0, 600_000),
      // Paylinks live in memory only: ids derived from time never repeat those a shop stored before a restart.
      idsFromTime: true,
      log,
      controlToken,
    });
    for (const url of list('PAYMENT_SIMULATOR_WEBHOOK_URLS')) sim.subscribe(url, 'json');
    return sim;
  },
  describe: (sim) => ({ baseUrl: sim.baseUrl, instance: sim.instance }),
});
