/**
 * Test support: each test file gets a database of its own on the real PostgreSQL named by `DATABASE_URL`
 * (CI: the machine's server; locally without it, the embedded cluster started by jest's global set-up),
 * so files run in parallel without seeing each other's rows.
 */
import { randomBytes } from 'node:crypto';
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
