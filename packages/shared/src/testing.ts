/**
 * Test support: each test file gets a database of its own on the real PostgreSQL named by `DATABASE_URL`
 * (CI: the machine's server; locally without it, the embedded cluster started by jest's global set-up),
 * so files run in parallel without seeing each other's rows; and free ports for processes started on fixed ports.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import pg from 'pg';

/** A fresh, empty database and a function that drops it. @internal */
export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

function adminUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set: run the tests through jest (its global set-up provides one).');
  return url;
}

/** Creates `t_<prefix>_<random>` on the server of `DATABASE_URL`. @internal */
export async function createTestDatabase(prefix = 'test'): Promise<TestDatabase> {
  const base = new URL(adminUrl());
  const name = `t_${prefix.replace(/\W/g, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base.toString() });
  await admin.connect();
  try {
    await admin.query(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(base.toString());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: base.toString() });
      await c.connect();
      try {
        await c.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * One line a test means to show — a measured figure (RELIABILITY.md's numbers) or why a suite is skipped — on
 * stderr as `[test] <line>`, instead of `console.log`, which jest prints with a stack trace like any stray output.
 * @internal
 */
export function testNote(line: string): void {
  process.stderr.write(`[test] ${line.replace(/\n+$/, '').replace(/\n/g, '\n[test] ')}\n`);
}

/** First port of the kernel's ephemeral range (`ip_local_port_range`; Linux's default 32768 where it cannot be read). */
function ephemeralPortStart(): number {
  try {
    const first = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(first) && first > 11_000 ? first : 32_768;
  } catch {
    return 32_768;
  }
}

/** Whether `port` can be bound on every address now (a listener on any address of it makes this false). */
function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '0.0.0.0', () => server.close(() => resolve(true)));
  });
}

/**
 * `n` distinct TCP ports that are free now, for a process a test starts on fixed ports (`pnpm start`, nginx).
 * Chosen at random below the kernel's ephemeral range, from 10,000: a port that `listen(0)` hands out lies in
 * that range, where on a busy machine any outgoing connection may take it as its source port before the
 * started process binds it; below the range only another listener can, and each port is checked by binding it.
 * @internal
 */
export async function freePorts(n: number): Promise<number[]> {
  const low = 10_000;
  const high = ephemeralPortStart() - 1;
  const ports = new Set<number>();
  while (ports.size < n) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (!ports.has(port) && (await canBind(port))) ports.add(port);
  }
  return [...ports];
}
