/**
 * `pnpm start` as a newcomer and a supervisor run it: the whole stack on an embedded PostgreSQL (fresh data
 * directory, free ports), then stopped by SIGTERM sent to pnpm (systemd, Docker, a supervisor) and by SIGINT
 * sent to the whole foreground process group (Ctrl-C in a terminal). Each stop must drain the services
 * first and stop the database last: exit code 0, no ELIFECYCLE, no warning-level log line, and no process
 * or port left behind.
 */
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { testTime } from '@sports-timing/shared/src/test-time';
import { freePorts } from '@sports-timing/shared/src/testing';

const root = path.join(__dirname, '..');

async function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

async function waitHealthy(url: string, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} never became healthy`);
}

/** Starts `pnpm start`, waits for both services, sends the stop, returns what happened. */
async function startAndStop(stop: (pid: number) => void): Promise<{ code: number | null; output: string; ports: number[]; dataDir: string }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'start-stop-'));
  const [pgPort, ordering, timing, erp, payment] = await freePorts(5);
  const env: Record<string, string | undefined> = {
    ...process.env,
    DATABASE_URL: undefined,
    DATA_DIR: dataDir,
    EMBEDDED_PG_PORT: String(pgPort),
    ORDERING_PORT: String(ordering),
    TIMING_PORT: String(timing),
    ERP_SIMULATOR_PORT: String(erp),
    PAYMENT_SIMULATOR_PORT: String(payment),
    DEMO_DATA: 'false',
    COREPACK_ENABLE_DOWNLOAD_PROMPT: '0',
  };
  delete env.DATABASE_URL;
  // Its own process group, as a shell gives a foreground job: SIGINT to the group is the terminal's Ctrl-C.
  const child = spawn('pnpm', ['start'], { cwd: root, env: env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + testTime(90_000);
  try {
    await waitHealthy(`http://127.0.0.1:${timing}/healthz`, deadline);
    await waitHealthy(`http://127.0.0.1:${ordering}/healthz`, deadline);
  } catch (err) {
    // Not up: stop what did start, keep nothing behind, and show what it printed.
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
    throw new Error(`${(err as Error).message}; pnpm start printed:\n${output.slice(-3000)}`, { cause: err });
  }
  stop(child.pid!);
  const code = await exited;
  return { code, output, ports: [pgPort, ordering, timing, erp, payment], dataDir };
}

async function expectCleanStop(run: { code: number | null; output: string; ports: number[]; dataDir: string }): Promise<void> {
  try {
    expect(run.output).not.toMatch(/ELIFECYCLE/);
    // pino levels 40 (warn), 50 (error), 60 (fatal).
    expect(run.output.split('\n').filter((l) => /"level":[456]0/.test(l))).toEqual([]);
    expect(run.output).toMatch(/\[start\] stopping: services first, then the database[\s\S]*\[start\] stopped/);
    expect(run.code).toBe(0);
    for (const port of run.ports) expect(await refused(port)).toBe(true);
    // No process of this run is left (the database server's command line names the data directory).
    let left = '';
    try {
      left = execFileSync('pgrep', ['-af', run.dataDir], { encoding: 'utf8' });
    } catch {
      left = ''; // pgrep exits 1 when nothing matches
    }
    expect(left).toBe('');
  } finally {
    rmSync(run.dataDir, { recursive: true, force: true });
  }
}

describe('pnpm start stops cleanly', () => {
  it(
    'on SIGTERM to pnpm (a supervisor): services drain, the database stops last, exit 0',
    async () => {
      await expectCleanStop(await startAndStop((pid) => process.kill(pid, 'SIGTERM')));
    },
    testTime(150_000),
  );

  it(
    'on SIGINT to the whole process group (Ctrl-C in a terminal): the same order, exit 0',
    async () => {
      await expectCleanStop(await startAndStop((pid) => process.kill(-pid, 'SIGINT')));
    },
    testTime(150_000),
  );
});
