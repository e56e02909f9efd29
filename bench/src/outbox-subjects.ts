/**
 * The subjects of the outbox library comparison (docs/outbox.md, "Why not a queue library"): our outbox
 * (`OutboxDispatcher` and `enqueue` of the ordering service, on its migrated schema), graphile-worker and
 * pg-boss, each in a database of its own on the local PostgreSQL so they cannot interfere. Every subject
 * offers the same four things: enqueue jobs in one transaction, start a worker with handlers per kind, count
 * its stored jobs, close.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { run, runMigrations, Logger as GraphileLogger, type Runner } from 'graphile-worker';
import PgBoss from 'pg-boss';
import { createDatabase, createLogger, migrateToLatest, type Database } from '@sports-timing/shared';
import { createTestDatabase, type TestDatabase } from '@sports-timing/shared/src/testing';
import type { DB } from '@sports-timing/ordering/src/db/schema';
import { migrations } from '@sports-timing/ordering/src/db/migrations/index';
import { enqueue, OutboxDispatcher } from '@sports-timing/ordering/src/outbox/outbox.service';

/** The subjects by name. */
export const SUBJECT_NAMES = ['ours', 'graphile-worker', 'pg-boss'] as const;
/** One subject's name. */
export type SubjectName = (typeof SUBJECT_NAMES)[number];

/** A job as the scenarios see it: its kind and its key (the dedupe key). */
interface BenchJob {
  kind: string;
  key: string;
}

/** Runs one job of a kind; its key is the job's dedupe key. */
export type BenchHandler = (key: string) => Promise<void>;

/** How a worker runs. */
interface WorkerOptions {
  /** Lease of a claimed job, s (ours; pg-boss sets it per job when sent, see {@link createSubject}). */
  leaseSeconds: number;
  /** Jobs running at once: per kind where the subject has lanes, else in all. */
  concurrency: number;
  /** Shown in pg_stat_activity: the CPU probe finds the worker's backends by it. */
  applicationName: string;
}

/** A running worker. */
interface BenchWorker {
  /** Stops claiming and waits for running jobs (handlers must settle). */
  stop(): Promise<void>;
}

/** One subject in its own database. */
export interface Subject {
  name: SubjectName;
  /** postgres:// URL of its database. */
  url: string;
  /** Enqueues `jobs` in one transaction, which commits, or rolls back when `rollback` is set. */
  enqueue(jobs: readonly BenchJob[], opts?: { rollback?: boolean }): Promise<void>;
  /** Starts a worker running `handlers` (by kind). */
  startWorker(handlers: Record<string, BenchHandler>, opts: WorkerOptions): Promise<BenchWorker>;
  /** Jobs stored, in any state. */
  countJobs(): Promise<number>;
  /** Drops its database. */
  close(): Promise<void>;
}

/** Thrown inside an enqueue transaction to roll it back. */
class Rollback extends Error {}

/** Runs `body` in a transaction on one client of `pool`; rolls back on `rollback` (or an error). */
async function inTransaction(pool: pg.Pool, rollback: boolean, body: (c: pg.PoolClient) => Promise<void>): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    await body(client);
    await client.query(rollback ? 'rollback' : 'commit');
  } catch (err) {
    await client.query('rollback');
    throw err;
  } finally {
    client.release();
  }
}

async function ours(testDb: TestDatabase): Promise<Subject> {
  const database = createDatabase<DB>({ url: testDb.url, schema: 'ordering', max: 4 });
  await migrateToLatest(database, migrations);
  const logger = createLogger('outbox-bench');
  logger.level = 'fatal';
  return {
    name: 'ours',
    url: testDb.url,
    async enqueue(jobs, opts = {}) {
      try {
        await database.db.transaction().execute(async (trx) => {
          for (const j of jobs) await enqueue(trx, j.kind, j.key, {});
          if (opts.rollback) throw new Rollback();
        });
      } catch (err) {
        if (!(err instanceof Rollback)) throw err;
      }
    },
    async startWorker(handlers, opts) {
      const own: Database<DB> = createDatabase<DB>({ url: testDb.url, schema: 'ordering', max: 4, applicationName: opts.applicationName });
      const d = new OutboxDispatcher({ database: own, logger, leaseSeconds: opts.leaseSeconds, concurrency: opts.concurrency });
      for (const [kind, h] of Object.entries(handlers)) d.register(kind, (job) => h(job.dedupeKey));
      d.start();
      return {
        async stop() {
          await d.stop();
          await own.close();
        },
      };
    },
    async countJobs() {
      const r = await database.pool.query<{ n: string }>('select count(*) n from ordering.outbox_messages');
      return Number(r.rows[0]?.n);
    },
    async close() {
      await database.close();
      await testDb.drop();
    },
  };
}

async function graphileWorker(testDb: TestDatabase): Promise<Subject> {
  await runMigrations({ connectionString: testDb.url, logger: quietGraphile });
  const pool = new pg.Pool({ connectionString: testDb.url, max: 4 });
  return {
    name: 'graphile-worker',
    url: testDb.url,
    async enqueue(jobs, opts = {}) {
      // add_job in the caller's transaction; job_key is graphile-worker's dedupe key (one namespace for all tasks).
      await inTransaction(pool, opts.rollback === true, async (c) => {
        for (const j of jobs)
          await c.query('select graphile_worker.add_job($1, json_build_object($2::text, $3::text), job_key => $4)', [
            j.kind,
            'key',
            j.key,
            `${j.kind}:${j.key}`,
          ]);
      });
    },
    async startWorker(handlers, opts) {
      const workerPool = new pg.Pool({ connectionString: testDb.url, max: opts.concurrency + 2, application_name: opts.applicationName });
      // A killed backend (clean-up of a crashed run) must not crash the bench.
      workerPool.on('error', () => undefined);
      workerPool.on('connect', (c) => c.on('error', () => undefined));
      const taskList = Object.fromEntries(
        Object.entries(handlers).map(([kind, h]) => [kind, (payload: unknown) => h(String((payload as { key: unknown }).key))]),
      );
      const runner: Runner = await run({
        pgPool: workerPool,
        concurrency: opts.concurrency,
        pollInterval: 1_000,
        noHandleSignals: true,
        taskList,
        logger: quietGraphile,
      });
      return {
        async stop() {
          await runner.stop();
          await workerPool.end();
        },
      };
    },
    async countJobs() {
      const r = await pool.query<{ n: string }>('select count(*) n from graphile_worker.jobs');
      return Number(r.rows[0]?.n);
    },
    async close() {
      await pool.end();
      await testDb.drop();
    },
  };
}

const quietGraphile = new GraphileLogger(() => () => undefined);

/** pg-boss job ids are UUIDs: one derived from kind and key, so a second send of a key is a conflict. */
function uuidOf(kind: string, key: string): string {
  const h = createHash('sha256').update(`${kind}\0${key}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

async function pgBoss(testDb: TestDatabase, leaseSeconds: number): Promise<Subject> {
  const pool = new pg.Pool({ connectionString: testDb.url, max: 4 });
  const setup = new PgBoss({ connectionString: testDb.url, max: 2, supervise: false, schedule: false });
  setup.on('error', () => undefined);
  await setup.start();
  const queues = new Set<string>();
  async function ensureQueue(kind: string): Promise<void> {
    if (queues.has(kind)) return;
    queues.add(kind);
    // A queue per kind, with a dead-letter queue; expireInSeconds is the lease a supervisor enforces, copied
    // into each job when it is sent.
    await setup.createQueue(`${kind}-dead`);
    await setup.createQueue(kind, { name: kind, retryLimit: 5, expireInSeconds: leaseSeconds, deadLetter: `${kind}-dead` });
  }
  return {
    name: 'pg-boss',
    url: testDb.url,
    async enqueue(jobs, opts = {}) {
      for (const j of jobs) await ensureQueue(j.kind);
      await inTransaction(pool, opts.rollback === true, async (c) => {
        const db = { executeSql: async (text: string, values: unknown[]) => ({ rows: (await c.query(text, values)).rows }) };
        for (const j of jobs) await setup.send(j.kind, { key: j.key }, { id: uuidOf(j.kind, j.key), db });
      });
    },
    async startWorker(handlers, opts) {
      // Supervision (expiry of leases, dead letters) runs each second: the shortest pg-boss allows.
      const boss = new PgBoss({
        connectionString: testDb.url,
        max: opts.concurrency + 2,
        application_name: opts.applicationName,
        maintenanceIntervalSeconds: 1,
        schedule: false,
      });
      boss.on('error', () => undefined);
      await boss.start();
      for (const kind of Object.keys(handlers)) await ensureQueue(kind);
      for (const [kind, h] of Object.entries(handlers)) {
        for (let i = 0; i < opts.concurrency; i++) {
          await boss.work<{ key: string }>(kind, { batchSize: 1, pollingIntervalSeconds: 1 }, async ([job]) => {
            if (job) await h(job.data.key);
          });
        }
      }
      return {
        async stop() {
          await boss.stop({ graceful: true, wait: true, timeout: 60_000 });
        },
      };
    },
    async countJobs() {
      const r = await pool.query<{ n: string }>(
        "select (select count(*) from pgboss.job where name not like '%-dead') + (select count(*) from pgboss.archive) n",
      );
      return Number(r.rows[0]?.n);
    },
    async close() {
      await setup.stop({ graceful: false, wait: true });
      await pool.end();
      await testDb.drop();
    },
  };
}

/**
 * Creates subject `name` in a fresh database (dropped by its `close`); `leaseSeconds` is the lease pg-boss
 * stores in each job it sends (`expireInSeconds`; graphile-worker's lock is a fixed 4 h).
 */
export async function createSubject(name: SubjectName, leaseSeconds: number): Promise<Subject> {
  return open(name, await createTestDatabase(`outbox_${name}`), leaseSeconds);
}

/** Opens subject `name` on an existing database `url` (for a worker in another process; nothing is dropped). */
export async function openSubject(name: SubjectName, url: string, leaseSeconds: number): Promise<Subject> {
  return open(name, { name: new URL(url).pathname.slice(1), url, drop: async () => undefined }, leaseSeconds);
}

function open(name: SubjectName, testDb: TestDatabase, leaseSeconds: number): Promise<Subject> {
  if (name === 'ours') return ours(testDb);
  if (name === 'graphile-worker') return graphileWorker(testDb);
  return pgBoss(testDb, leaseSeconds);
}
