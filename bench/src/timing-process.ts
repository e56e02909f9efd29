/**
 * The timing service as a child process for the bench scripts that run on their own (stream-fanout.ts,
 * catch-up.ts): TypeScript under tsx, on a database of its own created on the server of `BENCH_DATABASE_URL`,
 * no demo data, warnings only, its bootstrap admin key given.
 */
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';

/** A scratch database `name` on the server of `serverUrl`; `drop` removes it (sessions cut). */
export async function createScratchDatabase(serverUrl: string, name: string): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** A running service: its base URL (`http://127.0.0.1:port`), pid, and `stop` (SIGTERM, resolves at exit). */
export interface TimingProcess {
  base: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts the service on `databaseUrl` with admin key `key` and extra `env`; resolves once `/readyz` answers 200. */
export async function startTimingProcess(databaseUrl: string, key: string, env: Record<string, string> = {}): Promise<TimingProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/timing/src/server.ts'], {
    cwd: path.join(__dirname, '../..'),
    env: {
      ...process.env,
      TIMING_PORT: String(port),
      TIMING_DATABASE_URL: databaseUrl,
      TIMING_BOOTSTRAP_API_KEY: key,
      DEMO_DATA: 'false',
      LOG_LEVEL: 'warn',
      HTTP_LOG: 'false',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  const base = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the timing service exited with ${child.exitCode}`);
    const ok = await fetch(`${base}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return { base, pid: child.pid!, stop };
}
