/**
 * `pnpm start` entry of the ERP simulator: listens on `ERP_SIMULATOR_PORT` (default 8090) at `HOST`
 * (default 127.0.0.1) with the tenants `main` (`/webapp/api/v1`) and `sandbox` (`/sandbox/webapp/api/v1`).
 * Tokens: `ERP_SIMULATOR_TOKEN` / `ERP_SIMULATOR_SANDBOX_TOKEN`, defaulting to the development tokens of
 * `seed.ts` (printed at start: they are for the simulator only, never a real tenant's). Webhook
 * subscriptions: `ERP_SIMULATOR_WEBHOOK_URLS` / `ERP_SIMULATOR_SANDBOX_WEBHOOK_URLS` (comma lists) or
 * `POST /__control/subscribe`.
 */
import { runSimulator, type SimulatorBasics } from '@sports-timing/shared/src/sim-main';
import { DEFAULT_TOKENS } from './seed';
import { createErpSimulator } from './simulator';

/** The tenants' tokens: `ERP_SIMULATOR_TOKEN` / `ERP_SIMULATOR_SANDBOX_TOKEN`, else the development tokens. */
function tokensOf(env: SimulatorBasics['env']): { main: string; sandbox: string } {
  return { main: env.string('ERP_SIMULATOR_TOKEN', DEFAULT_TOKENS.main)!, sandbox: env.string('ERP_SIMULATOR_SANDBOX_TOKEN', DEFAULT_TOKENS.sandbox)! };
}

runSimulator({
  name: 'erp-simulator',
  label: 'ERP simulator',
  create({ env, host, log, controlToken, list }) {
    const tokens = tokensOf(env);
    const sim = createErpSimulator({
      port: env.int('ERP_SIMULATOR_PORT', 8090, 0, 65535),
      host,
      tenants: [
        { name: 'main', prefix: '', token: tokens.main },
        { name: 'sandbox', prefix: 'sandbox', token: tokens.sandbox },
      ],
      log,
      controlToken,
    });
    for (const url of list('ERP_SIMULATOR_WEBHOOK_URLS')) sim.subscribe(url, 'main');
    for (const url of list('ERP_SIMULATOR_SANDBOX_WEBHOOK_URLS')) sim.subscribe(url, 'sandbox');
    return sim;
  },
  describe(sim, { env }) {
    const tokens = tokensOf(env);
    // Only the development tokens are printed: a configured one is named by its variable.
    const token = (tenant: 'main' | 'sandbox', variable: string) => (tokens[tenant] === DEFAULT_TOKENS[tenant] ? tokens[tenant] : `(from ${variable})`);
    return {
      main: sim.baseUrl('main'),
      sandbox: sim.baseUrl('sandbox'),
      tokens: { main: token('main', 'ERP_SIMULATOR_TOKEN'), sandbox: token('sandbox', 'ERP_SIMULATOR_SANDBOX_TOKEN') },
    };
  },
});
