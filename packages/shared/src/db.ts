/**
 * Database factory: Kysely over a pg Pool, with the type parsers set once, pool error handlers so that a
 * PostgreSQL restart never crashes the process, and migrations applied at start under an advisory lock so
 * that two instances starting together are safe. Each service owns one PostgreSQL schema (docs/decisions.md §1).
 */
import { Kysely, Migrator, PostgresDialect, sql, type Migration } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import { envReader } from './config';
import { createLogger } from './logging';

// int8 (20): ids and counts stay below 2^53 (punch ids, cents), so numbers are exact and JSON-friendly.
pg.types.setTypeParser(20, (v) => Number(v));
// numeric (1700): exact decimals stay strings; callers convert where a unit is known.
pg.types.setTypeParser(1700, (v) => v);
// date (1082): a calendar date is not an instant; keep `YYYY-MM-DD` rather than a local-midnight Date.
pg.types.setTypeParser(1082, (v) => v);

/**
 * Put first in a `sql` template (`sql\`${PREPARED} select …\``) to run that statement as a named prepared
 * statement: PostgreSQL parses it once per connection, and plans it once when a generic plan is as good,
 * instead of parsing and planning it on every execution (for a large statement that is most of its cost).
 * Use it for frequent statements whose text does not vary with their input (one prepared statement per
 * distinct text and connection) and whose select list names its columns: with `*` a column added by a later
 * migration would change the result type under a running instance, which PostgreSQL refuses for a
 * prepared statement.
 */
export const PREPARED = sql.raw('/*prepared*/ ');

/** How a text marked by {@link PREPARED} starts. */
const PREPARED_MARK = '/*prepared*/';

/** Most distinct texts run as prepared statements per process (the rest run unprepared). */
const MAX_PREPARED_TEXTS = 500;
const preparedNames = new Map<string, string>();

/** The statement name of a marked text (stable per text), or undefined when the text is not marked or there are too many. */
function preparedName(text: string): string | undefined {
  if (!text.startsWith(PREPARED_MARK)) return undefined;
  let name = preparedNames.get(text);
  if (name === undefined && preparedNames.size < MAX_PREPARED_TEXTS) {
    name = `prepared_${preparedNames.size + 1}`;
    preparedNames.set(text, name);
  }
  return name;
}

/**
 * Lets `client` run texts marked with {@link PREPARED} as named prepared statements (pg keeps what each
 * connection has prepared); every other call goes through unchanged.
 */
function preparedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (config: unknown, values?: unknown, callback?: unknown) => {
    const name = typeof config === 'string' ? preparedName(config) : undefined;
    if (name === undefined) return query(config, values, callback);
    return typeof values === 'function' ? query({ name, text: config }, values) : query({ name, text: config, values }, callback);
  };
}

/** Options of {@link createDatabase}. */
export interface DatabaseOptions {
  /** postgres:// URL. */
  url: string;
  /** The service's own schema; set as `search_path` on every connection. */
  schema: string;
  /** Pool size (default 10). */
  max?: number;
  logger?: Logger;
  /** Application name shown in pg_stat_activity. */
  applicationName?: string;
  /**
   * Extra session settings of every connection (`-c name=value`), e.g. planner costs a service's prepared
   * statements depend on. Names are `[a-z_.]+`, values have no blanks (both checked).
   */
  settings?: Record<string, string | number>;
}

function sessionOptions(schema: string, settings: Record<string, string | number> = {}): string {
  const parts = [`-c search_path=${schema},public`];
  for (const [name, value] of Object.entries(settings)) {
    if (!/^[a-z_.]+$/.test(name) || !/^[^\s\\]+$/.test(String(value))) throw new Error(`invalid session setting ${name}=${value}`);
    parts.push(`-c ${name}=${value}`);
  }
  return parts.join(' ');
}

/** A Kysely instance plus its pool (for raw streaming queries and health checks). */
export interface Database<DB> {
  db: Kysely<DB>;
  pool: pg.Pool;
  schema: string;
  /** The connection URL (for dedicated sessions such as LISTEN). */
  url: string;
  /** Closes the pool (after in-flight queries finish). */
  close(): Promise<void>;
}

/** Creates the pool and the Kysely instance; does not connect until first use. */
export function createDatabase<DB>(opts: DatabaseOptions): Database<DB> {
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    application_name: opts.applicationName ?? opts.schema,
    options: sessionOptions(opts.schema, opts.settings),
  });
  // An idle client losing its connection (server restart) emits 'error' on the pool: log, never crash.
  pool.on('error', (err) => opts.logger?.warn({ err: { message: err.message, code: (err as { code?: string }).code } }, 'idle database client error'));
  pool.on('connect', (client) => {
    client.on('error', (err) => opts.logger?.warn({ err: { message: err.message } }, 'database client error'));
    preparedStatements(client);
  });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  let closed = false;
  return {
    db,
    pool,
    schema: opts.schema,
    url: opts.url,
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
      // Kysely ends the pool only when it used it itself; a pool used directly (pool.query) is ended here.
      if (!(pool as pg.Pool & { ending?: boolean }).ending) await pool.end();
    },
  };
}

/**
 * Applies `migrations` (name → migration, applied in name order) to `schema` with Kysely's Migrator.
 * A session advisory lock keyed by the schema serializes concurrent starts; the migration table lives in
 * the service's schema. Throws the first migration error.
 */
export async function migrateToLatest<DB>(database: Database<DB>, migrations: Record<string, Migration>): Promise<string[]> {
  const { db, schema, pool } = database;
  // The lock lives on its own session; the Migrator uses the pool (it needs transactions of its own).
  return withAdvisoryLock(pool, `migrate:${schema}`, async () => {
    await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
    const migrator = new Migrator({
      db,
      provider: { getMigrations: () => Promise.resolve(migrations) },
      migrationTableSchema: schema,
    });
    const { error, results } = await migrator.migrateToLatest();
    if (error) throw error instanceof Error ? error : new Error('migration failed', { cause: error });
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  });
}

/**
 * Runs `work` while this process holds the session advisory lock `hashtext(key)`, taken on a connection of
 * its own from `pool` (waits while another session holds it) and released afterwards, also when `work`
 * throws. `work` uses the pool as usual: the lock only serializes holders of the same key across instances
 * (migrations, the demo data load). Throws what `work` or the lock statement throws.
 */
export async function withAdvisoryLock<T>(pool: pg.Pool, key: string, work: () => Promise<T>): Promise<T> {
  const lockClient = await pool.connect();
  try {
    await lockClient.query('select pg_advisory_lock(hashtext($1))', [key]);
    return await work();
  } finally {
    await lockClient.query('select pg_advisory_unlock(hashtext($1))', [key]).catch(() => undefined);
    lockClient.release();
  }
}

/**
 * Sends `LISTEN` for every channel of `channels` on `client`, a connected session of its own outside any pool
 * (notifications arrive as its `notification` events). Channel names are quoted as identifiers, so they must
 * match the `pg_notify`/`NOTIFY` name exactly. Throws the driver's error (e.g. the session was lost).
 */
export async function listenOn(client: pg.ClientBase, channels: readonly string[]): Promise<void> {
  await client.query(channels.map((c) => `listen "${c.replace(/"/g, '""')}"`).join('; '));
}

/**
 * `server_version` of the PostgreSQL behind `pool` and the round trip of asking it, ms (two decimals).
 * Throws the driver's error when the database does not answer.
 */
export async function databaseServerVersion(pool: pg.Pool): Promise<{ serverVersion: string | null; latencyMs: number }> {
  const started = process.hrtime.bigint();
  const r = await pool.query<{ v: string }>(`select current_setting('server_version') as v`);
  return { serverVersion: r.rows[0]?.v ?? null, latencyMs: Math.round(Number(process.hrtime.bigint() - started) / 1e4) / 100 };
}

/**
 * Readiness probe: true when a trivial query answers within `timeoutMs` on a connection of its own (the
 * pool's settings, application name `readiness`). Its own connection, because a pool whose connections are
 * all busy is overload, not an outage: an orchestrator must not pull a busy instance whose database is fine.
 */
export async function databaseIsUp(pool: pg.Pool, timeoutMs = 2_000): Promise<boolean> {
  const options = (pool as unknown as { options: pg.ClientConfig }).options;
  const client = new pg.Client({ ...options, application_name: 'readiness', connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Body of a service's migration-only entry point (the Kubernetes migration Job, a release step): applies the
 * pending `migrations` of `schema` to the URL in `urlVariable` (else `DATABASE_URL`) under the shared advisory
 * lock, logs what it applied and exits 0, or prints the reason and exits 1. No embedded fallback: migrating a
 * throw-away database would hide a missing setting in a deployment.
 */
export function runMigrationCli(opts: { service: string; schema: string; urlVariable: string; migrations: Record<string, Migration> }): void {
  const main = async (): Promise<void> => {
    const e = envReader();
    const url = e.url(opts.urlVariable, ['postgres', 'postgresql']) ?? e.url('DATABASE_URL', ['postgres', 'postgresql']);
    if (!url) throw new Error(`${opts.urlVariable} or DATABASE_URL must be set`);
    const logger = createLogger(`${opts.service}-migrate`);
    const database = createDatabase({ url, schema: opts.schema, logger, applicationName: `${opts.service}-migrate` });
    try {
      const applied = await migrateToLatest(database, opts.migrations);
      logger.info({ applied }, applied.length ? 'migrations applied' : 'schema already up to date');
    } finally {
      await database.close();
    }
  };
  main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
