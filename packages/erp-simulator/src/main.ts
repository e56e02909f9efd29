/**
 * `pnpm start` entry of the ERP simulator: listens on `ERP_SIMULATOR_PORT` (default 8090) at `HOST`
 * (default 127.0.0.1) with the tenants `main` (`/webapp/api/v1`) and `sandbox` (`/sandbox/webapp/api/v1`).
 * Tokens: `ERP_SIMULATOR_TOKEN` / `ERP_SIMULATOR_SANDBOX_TOKEN`, defaulting to the development tokens of
 * `seed.ts` (printed at start: they are for the simulator only, never a real tenant's). Webhook
 * subscriptions: `ERP_SIMULATOR_WEBHOOK_URLS` / `ERP_SIMULATOR_SANDBOX_WEBHOOK_URLS` (comma lists) or
 * `POST /__control/subscribe`.
 */
import { checkHost, ConfigError, createLogger, parseUrlList, envReader, stopOnSignals } from '@sports-timing/shared';
import { DEFAULT_TOKENS } from './seed';
import { controlTokenFromEnv } from './sim-server';
import { createErpSimulator } from './simulator';

async function main(): Promise<void> {
  const env = envReader();
  // Before anything listens: outside development no control API without a token.
  const controlToken = controlTokenFromEnv();
  const logger = createLogger('erp-simulator');
  const main = env.string('ERP_SIMULATOR_TOKEN', DEFAULT_TOKENS.main)!;
  const sandbox = env.string('ERP_SIMULATOR_SANDBOX_TOKEN', DEFAULT_TOKENS.sandbox)!;
  const sim = createErpSimulator({
    port: env.int('ERP_SIMULATOR_PORT', 8090, 0, 65535),
    host: checkHost('HOST', env.string('HOST', '127.0.0.1')!),
    tenants: [
      { name: 'main', prefix: '', token: main },
      { name: 'sandbox', prefix: 'sandbox', token: sandbox },
    ],
    log: (line) => logger.info(line),
    controlToken,
  });
  const urls = (name: string) => parseUrlList(name, env.string(name, ''));
  for (const url of urls('ERP_SIMULATOR_WEBHOOK_URLS')) sim.subscribe(url, 'main');
  for (const url of urls('ERP_SIMULATOR_SANDBOX_WEBHOOK_URLS')) sim.subscribe(url, 'sandbox');
  await sim.start();
  logger.info(
    {
      main: sim.baseUrl('main'),
      sandbox: sim.baseUrl('sandbox'),
      tokens: {
        main: main === DEFAULT_TOKENS.main ? main : '(from ERP_SIMULATOR_TOKEN)',
        sandbox: sandbox === DEFAULT_TOKENS.sandbox ? sandbox : '(from ERP_SIMULATOR_SANDBOX_TOKEN)',
      },
    },
    `ERP simulator listening (control API under /__control: ${controlToken ? 'X-Control-Token' : 'loopback only'})`,
  );
  stopOnSignals(() => sim.stop(), logger);
}

main().catch((err) => {
  // A configuration mistake is one line naming its variable (README "Configuration"); anything else keeps its stack.
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
