/**
 * Opt-in (not part of `pnpm test`: it builds nothing but needs a container engine and the images): the README's
 * first tour against the compose stack of `infra/compose.yaml`, started with podman-compose (or
 * `COMPOSE_CMD`), on host ports of its own, then taken down. Run:
 *
 *   POSTGRES_IMAGE=localhost/postgres:debian REDIS_IMAGE=localhost/redis:debian NODE_IMAGE=localhost/node:20-slim \
 *     npx jest test/infra/compose.tour.ts --testMatch='**\/infra/*.tour.ts'
 *
 * `COMPOSE_CMD` (default `podman-compose`; e.g. `podman-compose --podman-path /path/to/podman-wrapper` or
 * `docker compose`); the images come from `infra/local-images/build.sh` or a registry (infra/README.md).
 */
import { execSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { testTime } from '@sports-timing/shared/src/test-time';

const root = path.join(__dirname, '../..');
const COMPOSE = process.env.COMPOSE_CMD ?? 'podman-compose';
const PORTS = { ordering: 18380, timing: 18381, erp: 18390, payment: 18391 };
const env = {
  ...process.env,
  ORDERING_HOST_PORT: String(PORTS.ordering),
  TIMING_HOST_PORT: String(PORTS.timing),
  ERP_SIMULATOR_HOST_PORT: String(PORTS.erp),
  PAYMENT_SIMULATOR_HOST_PORT: String(PORTS.payment),
};
/** The bootstrap admin password of infra/compose.yaml (a development value of that file). */
const COMPOSE_ADMIN_PASSWORD = 'compose-admin-password-change-me';

async function waitReady(url: string, deadline: number): Promise<void> {
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${url} never became ready`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

let dataDir: string;
beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'compose-tour-'));
  mkdirSync(path.join(dataDir, 'keys'));
  writeFileSync(path.join(dataDir, 'keys', 'ordering-admin-password'), COMPOSE_ADMIN_PASSWORD);
  execSync(`${COMPOSE} -f infra/compose.yaml -p compose-tour up -d`, {
    cwd: root,
    env,
    stdio: 'ignore',
    timeout: 300_000,
  });
  const deadline = Date.now() + testTime(180_000);
  await waitReady(`http://127.0.0.1:${PORTS.timing}/readyz`, deadline);
  await waitReady(`http://127.0.0.1:${PORTS.ordering}/readyz`, deadline);
}, testTime(500_000));

afterAll(() => {
  execSync(`${COMPOSE} -f infra/compose.yaml -p compose-tour down -v`, {
    cwd: root,
    env,
    stdio: 'ignore',
    timeout: 300_000,
  });
  rmSync(dataDir, { recursive: true, force: true });
}, testTime(300_000));

it('the README first tour answers against the containers as against `pnpm start`', () => {
  const block = [...readFileSync(path.join(root, 'README.md'), 'utf8').matchAll(/```sh walkthrough\n([\s\S]*?)```/g)][0][1];
  const script = block
    .replaceAll('127.0.0.1:8080', `127.0.0.1:${PORTS.ordering}`)
    .replaceAll('127.0.0.1:8081', `127.0.0.1:${PORTS.timing}`)
    .replaceAll('.data/', `${dataDir}/`);
  const r = spawnSync('bash', ['-e', '-c', script], { cwd: root, encoding: 'utf8', timeout: 90_000 });
  const output = `${r.stdout}${r.stderr}`;
  expect(output).toMatch(/^id,card,time,code,type,modem,receptionTimeUtc$/m);
  expect(output).toMatch(/^x-total-count: 6759\r?$/im);
  expect(output).toMatch(/^id,modem,card,time,code,mode,receptionTime$/m);
  expect(output).toMatch(/"articleNumber":"SIAC1"/);
  expect(output).toMatch(/"cardNumber":"8621484","batteryDate":"2020-01-15","replaceBefore":"2023-01-15"/);
  expect(output).toMatch(/"access_token":"/);
  expect(r.status).toBe(0);
});
