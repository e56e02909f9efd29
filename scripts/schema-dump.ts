/**
 * `pnpm schema:dump [service…]`: writes `services/<svc>/src/db/schema.sql`, the schema-only dump of each
 * service's PostgreSQL schema after all its migrations ran on an empty database (docs/database.md). The
 * services' `schema.test.ts` migrate a fresh database the same way and fail when the dump differs from the
 * checked-in file, and run every migration down and up again.
 *
 * The database is a private PostgreSQL 15 cluster in a temporary directory (initdb, listening on a Unix
 * socket only, no TCP port), started from `PG_BIN_DIR` (default /usr/lib/postgresql/15/bin), whose pg_dump
 * also writes the dump: server and pg_dump versions are pinned, so the file does not change with whatever
 * server `DATABASE_URL` names (the tests' embedded server is PostgreSQL 17, and pg_dump refuses a newer
 * server). pg_dump runs with `--schema-only --schema=<svc> --no-owner --no-privileges`; its version header
 * lines and its per-run `\restrict` key are normalised away ({@link normaliseDump}).
 */
import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Migrator, NO_MIGRATIONS, sql, type Migration, type MigrationResultSet } from 'kysely';
import { createDatabase, migrateToLatest, type Database } from '@sports-timing/shared';
import { migrations as orderingMigrations } from '../services/ordering/src/db/migrations';
import { migrations as timingMigrations } from '../services/timing/src/db/migrations';

const root = path.join(__dirname, '..');

/** Binaries of the pinned PostgreSQL major version (initdb, pg_ctl, pg_dump). */
const PG_BIN_DIR = process.env.PG_BIN_DIR ?? '/usr/lib/postgresql/15/bin';

/** Port of the private cluster: only names its socket file (no TCP); explicit so that a PGPORT setting cannot redirect a client. */
const PORT = 5432;

/** A service whose schema is dumped: its PostgreSQL schema, its migrations and the checked-in dump. */
export interface SchemaService {
  schema: string;
  migrations: Record<string, Migration>;
  /** Path of the checked-in dump, relative to the repository root. */
  dumpFile: string;
}

/** The services with a database schema, by name. */
export const SCHEMA_SERVICES: Record<'timing' | 'ordering', SchemaService> = {
  timing: { schema: 'timing', migrations: timingMigrations, dumpFile: 'services/timing/src/db/schema.sql' },
  ordering: { schema: 'ordering', migrations: orderingMigrations, dumpFile: 'services/ordering/src/db/schema.sql' },
};

/** A running private cluster: `url(database)` connects over its socket; `dump` runs its pg_dump. */
export interface PrivateCluster {
  url(database: string): string;
  /** Creates an empty database named `name`. */
  createDatabase(name: string): Promise<void>;
  /** Schema-only dump of `schema` in `database`, normalised ({@link normaliseDump}). */
  dump(database: string, schema: string): string;
  stop(): void;
}

/** Runs a binary of {@link PG_BIN_DIR}; as the `postgres` user when we are root (PostgreSQL refuses root). */
function pgServerBin(name: string, args: string[]): void {
  const bin = path.join(PG_BIN_DIR, name);
  if (process.getuid?.() === 0) execFileSync('runuser', ['-u', 'postgres', '--', bin, ...args], { stdio: 'pipe' });
  else execFileSync(bin, args, { stdio: 'pipe' });
}

/** Starts a throw-away PostgreSQL cluster in a temporary directory (socket only); `stop()` removes it. */
export function startPrivateCluster(): PrivateCluster {
  const dir = mkdtempSync('/tmp/schema-pg-');
  if (process.getuid?.() === 0) {
    const { uid, gid } = postgresIds();
    chownSync(dir, uid, gid);
  }
  const data = path.join(dir, 'data');
  try {
    pgServerBin('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
    const opts = `-p ${PORT} -c listen_addresses= -c unix_socket_directories=${dir} -c fsync=off`;
    pgServerBin('pg_ctl', ['-D', data, '-w', '-t', '60', '-o', opts, '-l', path.join(dir, 'server.log'), 'start']);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`could not start a private PostgreSQL from ${PG_BIN_DIR} (set PG_BIN_DIR to PostgreSQL 15's bin directory): ${String(err)}`, {
      cause: err,
    });
  }
  const url = (database: string) => `postgres://postgres@${encodeURIComponent(dir)}:${PORT}/${database}`;
  return {
    url,
    async createDatabase(name) {
      const admin = createDatabase({ url: url('postgres'), schema: 'public', max: 1 });
      try {
        await admin.pool.query(`create database "${name}"`);
      } finally {
        await admin.close();
      }
    },
    dump(database, schema) {
      const out = execFileSync(
        path.join(PG_BIN_DIR, 'pg_dump'),
        [
          '--host',
          dir,
          '--port',
          String(PORT),
          '--username',
          'postgres',
          '--dbname',
          database,
          '--schema-only',
          `--schema=${schema}`,
          '--no-owner',
          '--no-privileges',
        ],
        { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
      );
      return normaliseDump(out);
    },
    stop() {
      try {
        pgServerBin('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** uid and gid of the `postgres` user (the owner of a cluster started as root). */
function postgresIds(): { uid: number; gid: number } {
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

/**
 * A pg_dump output without what changes between runs and minor versions: the `Dumped from database
 * version` / `Dumped by pg_dump version` header lines, and the random key of the `\restrict` / `\unrestrict`
 * lines (pg_dump 15.14 and later); a single trailing newline.
 */
export function normaliseDump(text: string): string {
  return (
    text
      .split('\n')
      .filter((line) => !/^-- Dumped (from database|by pg_dump) version /.test(line))
      .map((line) => line.replace(/^\\(un)?restrict \S+$/, (_m, un: string | undefined) => `\\${un ?? ''}restrict`))
      .join('\n')
      .trimEnd() + '\n'
  );
}

/** A service's database on a private cluster, with its pool (schema as search_path, as the service has it). */
export async function serviceDatabase(cluster: PrivateCluster, service: SchemaService, name: string): Promise<Database<unknown>> {
  await cluster.createDatabase(name);
  return createDatabase({ url: cluster.url(name), schema: service.schema, max: 2 });
}

/** Applies all of `service`'s migrations the way the service does at start ({@link migrateToLatest}). */
export async function migrateUp(database: Database<unknown>, service: SchemaService): Promise<void> {
  await migrateToLatest(database, service.migrations);
}

/** Creates `service`'s schema and Kysely's migration tables in it, applying no migration. */
export async function createEmptySchema(database: Database<unknown>, service: SchemaService): Promise<void> {
  await sql`create schema ${sql.id(service.schema)}`.execute(database.db);
  await stepMigrator(database, service).allDown();
}

/**
 * Kysely's Migrator over `service`'s migrations, as {@link migrateToLatest} configures it (without its
 * advisory lock), for moving one migration at a time; each method throws the migration's error. The schema
 * must exist ({@link createEmptySchema} or {@link migrateUp} creates it).
 */
export function stepMigrator(
  database: Database<unknown>,
  service: SchemaService,
): { up(): Promise<string[]>; down(): Promise<string[]>; allDown(): Promise<string[]> } {
  const migrator = new Migrator({
    db: database.db,
    provider: { getMigrations: () => Promise.resolve(service.migrations) },
    migrationTableSchema: service.schema,
  });
  const run = async (result: Promise<MigrationResultSet>): Promise<string[]> => {
    const { error, results } = await result;
    if (error) throw error instanceof Error ? error : new Error('migration failed', { cause: error });
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  };
  return { up: () => run(migrator.migrateUp()), down: () => run(migrator.migrateDown()), allDown: () => run(migrator.migrateTo(NO_MIGRATIONS)) };
}

/** The schema-only dump of `service` after all migrations on a fresh database of a fresh private cluster. */
export async function migratedSchemaDump(service: SchemaService): Promise<string> {
  const cluster = startPrivateCluster();
  try {
    const database = await serviceDatabase(cluster, service, 'schema_dump');
    try {
      await migrateUp(database, service);
    } finally {
      await database.close();
    }
    return cluster.dump('schema_dump', service.schema);
  } finally {
    cluster.stop();
  }
}

/**
 * What is left in `service`'s schema besides Kysely's migration tables, as `kind name` lines (relations,
 * functions, types, sorted): after every down() ran, nothing.
 */
export async function leftovers(database: Database<unknown>, service: SchemaService): Promise<string[]> {
  const { rows } = await database.pool.query<{ what: string }>(
    `select 'relation ' || c.relname as what from pg_class c
       where c.relnamespace = $1::regnamespace and c.relname !~ '^kysely_migration'
     union all
     select 'function ' || p.proname from pg_proc p where p.pronamespace = $1::regnamespace
     union all
     select 'type ' || t.typname from pg_type t
       where t.typnamespace = $1::regnamespace and t.typrelid = 0 and t.typelem = 0
     order by 1`,
    [service.schema],
  );
  return rows.map((r) => r.what);
}

/**
 * Modules imported by the migration files (`NNNN_*.ts`) of `service`, other than `kysely` and `../functions`
 * (the frozen function texts and their loader, docs/database.md "Function texts"), as `file: module` lines: a
 * frozen migration imports nothing that can change (docs/database.md), so none.
 */
export function foreignMigrationImports(service: SchemaService): string[] {
  const dir = path.join(root, path.dirname(service.dumpFile), 'migrations');
  return readdirSync(dir)
    .filter((f) => /^\d{4}_.*\.ts$/.test(f))
    .sort()
    .flatMap((f) => [...readFileSync(path.join(dir, f), 'utf8').matchAll(/\b(?:from|import|require)\s*\(?\s*['"]([^'"]+)['"]/g)].map((m) => `${f}: ${m[1]}`))
    .filter((line) => !line.endsWith(': kysely') && !line.endsWith(': ../functions'));
}

/** The checked-in dump of `service`. */
export function checkedInDump(service: SchemaService): string {
  return readFileSync(path.join(root, service.dumpFile), 'utf8');
}

/**
 * Why `actual` (what the code produces now) differs from `expected` (the checked-in `file`): the first
 * differing line of each, with its number, and the command that regenerates the file. Undefined when equal.
 */
export function driftMessage(file: string, actual: string, expected: string, command: string): string | undefined {
  if (actual === expected) return undefined;
  const a = actual.split('\n');
  const e = expected.split('\n');
  let i = 0;
  while (i < a.length && i < e.length && a[i] === e[i]) i++;
  return (
    `${file} is out of date: run \`${command}\` and commit the result (review the diff: it is what changed).\n` +
    `first difference at line ${i + 1}:\n  checked in: ${e[i] ?? '(end of file)'}\n  now:        ${a[i] ?? '(end of file)'}`
  );
}

async function main(): Promise<void> {
  const names = process.argv.slice(2);
  for (const name of names.length ? names : Object.keys(SCHEMA_SERVICES)) {
    const service = SCHEMA_SERVICES[name as keyof typeof SCHEMA_SERVICES];
    if (!service) throw new Error(`unknown service ${name} (one of ${Object.keys(SCHEMA_SERVICES).join(', ')})`);
    writeFileSync(path.join(root, service.dumpFile), await migratedSchemaDump(service));
    console.log(`wrote ${service.dumpFile}`);
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
