/**
 * Test support: runs a service (or simulator) as a real child process, the way `pnpm start` / `pnpm start:prod`
 * and the container images do, and finds its port from its "listening" log line (pass port 0 in the env, so
 * parallel test files never collide).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { testTime } from '@sports-timing/shared/src/test-time';

export const ROOT = path.join(__dirname, '../..');

/** A started child process, its listening port, everything it printed, and a graceful stop. */
export interface ServiceProcess {
  child: ChildProcess;
  port: number;
  baseUrl: string;
  output(): string;
  /** SIGTERM, then the exit code (SIGKILL after `graceMs`, default a scaled 10 s (`testTime`), answering null). */
  stop(graceMs?: number): Promise<number | null>;
}

/** Options of {@link startServiceProcess}. */
export interface StartOptions {
  /** Repository-relative entry, e.g. `services/timing/src/server.ts` or `services/timing/dist/server.js`. */
  entry: string;
  env: Record<string, string | undefined>;
  /** Milliseconds to wait for the listening line (default a scaled 60 s, `testTime`: the demo data load comes first). */
  timeoutMs?: number;
  /** Checkout whose code runs (default: this repository; another release's for an upgrade, test/topology/release.ts). */
  root?: string;
}

/** Runs `.ts` entries through tsx, `.js` entries as compiled output (dist export condition, source maps). */
function nodeArgs(entry: string, root: string): string[] {
  const file = path.join(root, entry);
  return entry.endsWith('.ts') ? ['--import', 'tsx', file] : ['--conditions=dist', '--enable-source-maps', file];
}

/** Starts the process and resolves once it logged a pino line carrying `port` with a "listening" message. */
export function startServiceProcess(opts: StartOptions): Promise<ServiceProcess> {
  const root = opts.root ?? ROOT;
  const child = spawn(process.execPath, nodeArgs(opts.entry, root), {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'info', HTTP_LOG: 'false', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise<ServiceProcess>((resolve, reject) => {
    const timer = setTimeout(
      () => {
        child.kill('SIGKILL');
        reject(new Error(`${opts.entry} did not start within ${opts.timeoutMs ?? testTime(60_000)} ms:\n${out.slice(-4000)}`));
      },
      opts.timeoutMs ?? testTime(60_000),
    );
    const onData = (chunk: Buffer) => {
      out += chunk.toString('utf8');
      for (const line of out.split('\n')) {
        if (!/listening/i.test(line)) continue;
        let port: number | undefined;
        try {
          const j = JSON.parse(line) as { port?: number; baseUrl?: string; main?: string };
          const url = j.baseUrl ?? j.main;
          port = j.port ?? (url ? Number(new URL(url).port) : undefined);
        } catch {
          continue; // not a log line of the service (e.g. a warning of node itself)
        }
        if (!port) continue;
        clearTimeout(timer);
        child.stdout.off('data', onData);
        child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
        resolve({
          child,
          port,
          baseUrl: `http://127.0.0.1:${port}`,
          output: () => out,
          async stop(graceMs = testTime(10_000)) {
            if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
            child.kill('SIGTERM');
            const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
            const code = await exited;
            clearTimeout(kill);
            return code;
          },
        });
        return;
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${opts.entry} exited with ${code} before listening:\n${out.slice(-4000)}`));
    });
  });
}
