/**
 * `pnpm start`: the whole product on one machine. `pnpm start:prod` (`--prod`) does the same with the compiled
 * JavaScript of `pnpm build` (`<package>/dist/…js`, run by plain node with the `dist` export condition and
 * source maps) instead of the TypeScript sources through tsx. Without DATABASE_URL it starts one embedded PostgreSQL
 * under `.data/pg` (both services use it, each in its own schema), then runs every service as its own
 * process with prefixed output, and stops them all gracefully on Ctrl-C / SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '@sports-timing/shared/src/embedded';
import { DEV_ERP_WEBHOOK_SECRET } from '../services/ordering/src/config';

const root = path.join(__dirname, '..');

/** Services started by `pnpm start`, in start order. */
const SERVICES: { name: string; entry: string }[] = [
  // entry: the TypeScript source; `--prod` runs its compiled twin (src/x.ts → dist/x.js).
  // Third-party simulators first, so the ordering service finds them (ports ERP_SIMULATOR_PORT 8090, PAYMENT_SIMULATOR_PORT 8091).
  { name: 'erp-sim', entry: 'packages/erp-simulator/src/main.ts' },
  { name: 'payment-sim', entry: 'packages/payment-simulator/src/main.ts' },
  { name: 'timing', entry: 'services/timing/src/server.ts' },
  { name: 'ordering', entry: 'services/ordering/src/server.ts' },
];

function prefixLines(name: string, stream: NodeJS.ReadableStream, out: NodeJS.WriteStream): void {
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buf += chunk;
    const lines = buf.split('\n');
    buf = lines.pop() ?? '';
    for (const line of lines) out.write(`[${name}] ${line}\n`);
  });
}

/** Node arguments running one service: its TypeScript source through tsx, or (`prod`) its compiled output. */
function serviceArgs(entry: string, prod: boolean): string[] {
  if (!prod) return ['--import', 'tsx', path.join(root, entry)];
  const compiled = path.join(root, entry.replace('/src/', '/dist/').replace(/\.ts$/, '.js'));
  if (!existsSync(compiled)) throw new Error(`${compiled} is missing: run \`pnpm build\` first`);
  return ['--conditions=dist', '--enable-source-maps', compiled];
}

async function main(): Promise<void> {
  const prod = process.argv.includes('--prod');
  const args = new Map(SERVICES.map((s) => [s.name, serviceArgs(s.entry, prod)]));
  let embedded: EmbeddedDatabase | undefined;
  const env = { ...process.env };
  if (!env.DATABASE_URL) {
    console.log(`[start] no DATABASE_URL: starting embedded PostgreSQL in .data/pg (port ${env.EMBEDDED_PG_PORT ?? 5433})`);
    embedded = await startEmbeddedPostgres({ dir: path.join(root, '.data/pg'), port: Number(env.EMBEDDED_PG_PORT ?? 5433), database: 'sports_timing' });
    env.DATABASE_URL = embedded.url;
  }
  // Point the ordering service at the simulators when they run on other than their default ports.
  const erpSimulator = `http://127.0.0.1:${env.ERP_SIMULATOR_PORT ?? 8090}`;
  env.ERP_BASE_URL_WECLAPP ??= `${erpSimulator}/webapp/api/v1`;
  env.ERP_BASE_URL_WECLAPP_SANDBOX ??= `${erpSimulator}/sandbox/webapp/api/v1`;
  env.PAYMENT_BASE_URL ??= `http://127.0.0.1:${env.PAYMENT_SIMULATOR_PORT ?? 8091}/api/v1`;
  // The payment simulator delivers its status webhooks to the ordering service (a real provider is configured in its dashboard).
  env.PAYMENT_SIMULATOR_WEBHOOK_URLS ??= `${env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${env.ORDERING_PORT ?? 8080}`}/api/rest/v1/payment-provider/status`;
  // The ERP simulator delivers its webhooks (article/customer/sales order changes) to the ordering service with the
  // webhook secret in the URL, as a real weclapp webhook subscription would; ERP_WEBHOOK_SECRET must match on both sides.
  env.ERP_WEBHOOK_SECRET ??= DEV_ERP_WEBHOOK_SECRET;
  const erpWebhookUrl = (system: string) => `${env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${env.ORDERING_PORT ?? 8080}`}/api/rest/v1/erp/webhook?erpSystem=${system}&secret=${encodeURIComponent(env.ERP_WEBHOOK_SECRET!)}`;
  env.ERP_SIMULATOR_WEBHOOK_URLS ??= erpWebhookUrl('weclapp');
  env.ERP_SIMULATOR_SANDBOX_WEBHOOK_URLS ??= erpWebhookUrl('weclappSandbox');
  const children = new Map<string, ChildProcess>();
  let stopping = false;
  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    for (const child of children.values()) child.kill('SIGTERM');
    await Promise.all([...children.values()].map((c) => (c.exitCode !== null ? undefined : new Promise((r) => c.once('exit', r)))));
    await embedded?.stop();
    process.exit(code);
  };
  for (const s of SERVICES) {
    const child = spawn(process.execPath, args.get(s.name)!, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    prefixLines(s.name, child.stdout!, process.stdout);
    prefixLines(s.name, child.stderr!, process.stderr);
    child.on('exit', (code) => {
      if (!stopping) {
        console.error(`[start] ${s.name} exited with code ${code}; stopping everything`);
        void stopAll(1);
      }
    });
    children.set(s.name, child);
  }
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
