/**
 * Database factory: Kysely over a pg Pool, with the type parsers set once, pool error handlers so that a
 * PostgreSQL restart never crashes the process, and migrations applied at start under an advisory lock so
 * that two instances starting together are safe. Each service owns one PostgreSQL schema (docs/decisions.md §1).
 */
import { Kysely, Migrator, PostgresDialect, sql, type Migration } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import {
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_LOCK_TIMEOUT_MS,
  DEFAULT_POOL_MAX_LIFETIME_SECONDS,
  DEFAULT_STATEMENT_TIMEOUT_MS,
  envReader,
  loadProcessConfig,
} from './config';
import { databaseFault } from './db-faults';
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
 * connection has prepared); every other call goes through unchanged. A failure whose error says the session
 * cannot be used again (db-faults.ts `sessionUnusable`: read-only after a fail-over, shut down) puts the client
 * into `unusable`, so its next release discards it instead of handing it out again.
 */
function preparedStatements(client: pg.PoolClient, unusable: WeakSet<pg.PoolClient>): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const mark = (err: unknown) => {
    if (databaseFault(err)?.sessionUnusable) unusable.add(client);
  };
  const watched = (result: unknown) => {
    // Promise form (Kysely, the repositories): watch the outcome on a side branch; the caller's promise is unchanged.
    if (result && typeof (result as Promise<unknown>).then === 'function' && !(result as { submit?: unknown }).submit)
      (result as Promise<unknown>).then(undefined, mark);
    return result;
  };
  const withCallback = (callback: unknown) =>
    typeof callback === 'function'
      ? (err: unknown, res: unknown) => {
          if (err) mark(err);
          (callback as (e: unknown, r: unknown) => void)(err, res);
        }
      : callback;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (config: unknown, values?: unknown, callback?: unknown) => {
    const name = typeof config === 'string' ? preparedName(config) : undefined;
    if (name === undefined) return watched(query(config, withCallback(values), withCallback(callback)));
    return typeof values === 'function'
      ? watched(query({ name, text: config }, withCallback(values)))
      : watched(query({ name, text: config, values }, withCallback(callback)));
  };
}

/**
 * Makes every checkout of `pool` (pool.connect in either form, and so pool.query and Kysely) release a client
 * marked in `unusable` with an error, which makes pg-pool discard it and open a fresh session when needed:
 * after a fail-over a session of the old primary stays read-only for good, and without this the pool would
 * hand it out again and again (docs/database.md "Database faults").
 */
function discardUnusable(pool: pg.Pool, unusable: WeakSet<pg.PoolClient>): void {
  type Done = (err?: Error | boolean) => void;
  type Callback = (err: Error | undefined, client: pg.PoolClient | undefined, done: Done) => void;
  const connect = pool.connect.bind(pool) as (cb?: Callback) => Promise<pg.PoolClient> | undefined;
  const guard = (client: pg.PoolClient): pg.PoolClient => {
    const release: Done = client.release.bind(client);
    client.release = (err?: Error | boolean) => {
      if (!err && unusable.has(client)) {
        unusable.delete(client);
        return release(new Error('database session unusable (read-only or shut down): discarded'));
      }
      return release(err);
    };
    return client;
  };
  (pool as unknown as { connect: (cb?: Callback) => unknown }).connect = (cb?: Callback) => {
    if (typeof cb === 'function')
      return connect((err, client, done) => (client ? cb(err, guard(client), (e?: Error | boolean) => client.release(e)) : cb(err, client, done)));
    return connect()!.then(guard);
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
  /**
   * `lock_timeout` of every session, ms (default {@link DEFAULT_LOCK_TIMEOUT_MS}; 0 = wait for ever): a
   * statement waiting longer for a lock fails with 55P03 and is answered 503 instead of hanging.
   */
  lockTimeoutMs?: number;
  /** `statement_timeout` of every session, ms (default {@link DEFAULT_STATEMENT_TIMEOUT_MS}; 0 = none): 57014, answered 503. */
  statementTimeoutMs?: number;
  /**
   * Longest wait for a pooled connection, ms (node-postgres `connectionTimeoutMillis`: a free one, or a new one
   * to be opened; default {@link DEFAULT_CONNECT_TIMEOUT_MS}): beyond it the request is answered 503.
   */
  connectTimeoutMs?: number;
  /**
   * Longest life of a pooled session, s (node-postgres `maxLifetimeSeconds`; default
   * {@link DEFAULT_POOL_MAX_LIFETIME_SECONDS}; 0 = unbounded): sessions are renewed in turn, so a pool finds a
   * new primary or changed server settings by itself.
   */
  maxLifetimeSeconds?: number;
}

/**
 * The session limits of a service's pools as configured (README "Configuration": `DATABASE_LOCK_TIMEOUT_MS`,
 * `DATABASE_STATEMENT_TIMEOUT_MS`, `DATABASE_POOL_MAX_LIFETIME_SECONDS`, `DATABASE_CONNECT_TIMEOUT_MS`), to spread into {@link createDatabase}'s
 * options. Throws ConfigError on a bad value (the services check them at start).
 */
export function configuredSessionLimits(): Pick<DatabaseOptions, 'lockTimeoutMs' | 'statementTimeoutMs' | 'maxLifetimeSeconds' | 'connectTimeoutMs'> {
  const c = loadProcessConfig();
  return {
    lockTimeoutMs: c.databaseLockTimeoutMs,
    statementTimeoutMs: c.databaseStatementTimeoutMs,
    maxLifetimeSeconds: c.databasePoolMaxLifetimeSeconds,
    connectTimeoutMs: c.databaseConnectTimeoutMs,
  };
}

/** Session options that lift both timeouts again, appended after a pool's own (the last `-c` of a name wins). */
const UNTIMED = ' -c lock_timeout=0 -c statement_timeout=0';

function sessionOptions(opts: DatabaseOptions): string {
  const settings: Record<string, string | number> = {
    lock_timeout: `${opts.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS}ms`,
    statement_timeout: `${opts.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS}ms`,
    ...opts.settings,
  };
  const parts = [`-c search_path=${opts.schema},public`];
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
    connectionTimeoutMillis: opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    maxLifetimeSeconds: opts.maxLifetimeSeconds ?? DEFAULT_POOL_MAX_LIFETIME_SECONDS,
    application_name: opts.applicationName ?? opts.schema,
    options: sessionOptions(opts),
  });
  const unusable = new WeakSet<pg.PoolClient>();
  discardUnusable(pool, unusable);
  // An idle client losing its connection (server restart) emits 'error' on the pool: log, never crash.
  pool.on('error', (err) => opts.logger?.warn({ err: { message: err.message, code: (err as { code?: string }).code } }, 'idle database client error'));
  pool.on('connect', (client) => {
    client.on('error', (err) => opts.logger?.warn({ err: { message: err.message } }, 'database client error'));
    preparedStatements(client, unusable);
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
  const { schema } = database;
  // Migrations run on sessions of their own without the pool's lock and statement timeouts: building an index
  // on a large table, or waiting for another instance's migration, may rightly take longer.
  const options = (database.pool as unknown as { options: pg.PoolConfig }).options;
  const pool = new pg.Pool({
    ...options,
    max: 3,
    maxLifetimeSeconds: 0,
    application_name: `${options.application_name ?? schema}-migrate`,
    options: `${options.options ?? ''}${UNTIMED}`,
  });
  pool.on('error', () => undefined);
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  try {
    // The lock lives on its own session; the Migrator uses the pool (it needs transactions of its own).
    return await withAdvisoryLock(pool, `migrate:${schema}`, async () => {
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
  } finally {
    await db.destroy();
  }
}

/**
 * Runs `work` while this process holds the session advisory lock `hashtext(key)`, taken on a connection of
 * its own from `pool` (waits while another session holds it, without the session's lock and statement
 * timeouts) and released afterwards, also when `work` throws. `work` uses the pool as usual: the lock only
 * serializes holders of the same key across instances (migrations, the demo data load). Throws what `work`
 * or the lock statement throws.
 */
export async function withAdvisoryLock<T>(pool: pg.Pool, key: string, work: () => Promise<T>): Promise<T> {
  const lockClient = await pool.connect();
  try {
    await lockClient.query('set lock_timeout = 0; set statement_timeout = 0');
    await lockClient.query('select pg_advisory_lock(hashtext($1))', [key]);
    await lockClient.query('reset lock_timeout; reset statement_timeout');
    return await work();
  } finally {
    await lockClient.query('select pg_advisory_unlock(hashtext($1))', [key]).catch(() => undefined);
    lockClient.release();
  }
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

/** What {@link databaseWritable} found: `up` when the instance can write; `detail` says why not. */
export interface WriteHealth {
  up: boolean;
  detail?: string;
}

/**
 * Readiness probe (docs/database.md "Database faults"): can this instance write through its own pool? On a
 * pooled session within `timeoutMs`: `select pg_is_in_recovery(), current_setting('transaction_read_only')`,
 * down when the server is a standby or read-only. It needs no new connection: a pool whose connections are
 * all busy, or a database refusing further connections (53300) while the pool's sessions serve, is ready —
 * overload is not an outage, and a balancer must not pull every instance at once. Down when the database is
 * away (the checkout fails with no session left in the pool, or the query fails). Never throws.
 */
export async function databaseWritable(pool: pg.Pool, timeoutMs = 2_000): Promise<WriteHealth> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs)));
  const checkout = pool.connect();
  try {
    const first = await Promise.race([checkout, late]);
    if (first === 'late') {
      // Every session busy for the whole wait: overload of a working pool (the late checkout is returned at once).
      checkout.then(
        (c) => c.release(),
        () => undefined,
      );
      return pool.totalCount > 0 ? { up: true } : { up: false, detail: 'The database is unavailable.' };
    }
    const client = first;
    const query = client.query<{ recovery: boolean; read_only: string }>(
      `select pg_is_in_recovery() as recovery, current_setting('transaction_read_only') as read_only`,
    );
    const answer = await Promise.race([query, late]).catch((err: unknown) => err as Error);
    if (answer === 'late' || answer instanceof Error) {
      // A session that does not answer a trivial query is not given out again.
      client.release(answer === 'late' ? new Error('readiness query timed out') : answer);
      query.catch(() => undefined);
      return { up: false, detail: 'The database is unavailable.' };
    }
    const row = answer.rows[0];
    if (row?.recovery || row?.read_only === 'on') {
      // Discarded like a session a write found read-only: the next check (and request) gets a fresh session,
      // so readiness follows the database back once it is writable again.
      client.release(new Error('read-only database session: discarded'));
      return { up: false, detail: 'The database accepts no writes (read-only or a standby).' };
    }
    client.release();
    return { up: true };
  } catch (err) {
    // The pool had to open a session and could not: refused for want of slots while other sessions serve is
    // not an outage of this instance.
    if (databaseFault(err)?.kind === 'connections' && pool.totalCount > 0) return { up: true };
    return { up: false, detail: 'The database is unavailable.' };
  } finally {
    clearTimeout(timer);
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
