/**
 * The services' pooled sessions against real PostgreSQL (docs/database.md "Database faults"):
 * - every session carries the configured `lock_timeout` and `statement_timeout`, so a held lock fails fast
 *   with 55P03 instead of hanging; migrations' and advisory-lock sessions wait without them;
 * - a session whose error says it is unusable (read-only, as after a fail-over) is discarded, not handed out
 *   again, while an ordinary failure keeps its session (negative control);
 * - readiness asks a pooled session whether it can write, and stays ready while the database refuses *new*
 *   connections (53300, here a role's connection limit) as long as the pool's sessions serve.
 */
import { sql } from 'kysely';
import pg from 'pg';
import { testTime } from '../src/test-time';
import { createDatabase, createLogger, databaseWritable, withAdvisoryLock } from '../src';
import { testConnectTimeoutMs } from '@sports-timing/shared/src/test-time';

const url = process.env.DATABASE_URL!;
const schema = `db_sessions_${process.pid}`;
const role = `db_sessions_role_${process.pid}`;
const admin = new pg.Pool({ connectionString: url, max: 3 });

beforeAll(async () => {
  await admin.query(`create schema ${schema}; create table ${schema}.t (n int primary key)`);
  await admin.query(`create role ${role} login connection limit 1; grant all on schema ${schema} to ${role}; grant all on ${schema}.t to ${role}`);
});
afterAll(async () => {
  await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where usename = '${role}'`);
  await admin.query(`drop schema ${schema} cascade; drop owned by ${role}; drop role ${role}`);
  await admin.end();
});

const pidOf = async (database: { pool: pg.Pool }) => (await database.pool.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0].pid;

test('sessions carry the configured lock and statement timeouts; a held lock fails with 55P03 instead of hanging', async () => {
  const database = createDatabase({
    connectTimeoutMs: testConnectTimeoutMs(),
    url,
    schema,
    logger: createLogger('test'),
    lockTimeoutMs: 150,
    statementTimeoutMs: 4_000,
  });
  const holder = await admin.connect();
  try {
    const r = await database.pool.query<{ lock: string; statement: string }>(
      `select current_setting('lock_timeout') as lock, current_setting('statement_timeout') as statement`,
    );
    expect(r.rows[0]).toEqual({ lock: '150ms', statement: '4s' });
    await holder.query(`begin; lock table ${schema}.t in access exclusive mode`);
    await expect(
      database.db
        .selectFrom('t' as never)
        .selectAll()
        .execute(),
    ).rejects.toMatchObject({ code: '55P03' });
    // An advisory-lock holder (migrations, the demo load) waits without them: another instance holds the key
    // for longer than lock_timeout, and the waiter gets it once released.
    await holder.query('rollback');
    const key = `db-sessions-${process.pid}`;
    await holder.query('select pg_advisory_lock(hashtext($1))', [key]);
    let got = false;
    const locked = withAdvisoryLock(database.pool, key, () => Promise.resolve((got = true)));
    const waiting = async () => (await admin.query(`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`)).rows[0].n > 0;
    while (!(await waiting())) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 600)); // four times the lock_timeout of the pool's sessions
    expect(got).toBe(false);
    await holder.query('select pg_advisory_unlock(hashtext($1))', [key]);
    await expect(locked).resolves.toBe(true);
  } finally {
    await holder.query('rollback').catch(() => undefined);
    holder.release();
    await database.close();
  }
});

test('a session that turned read-only is discarded after its failure; an ordinary failure keeps its session', async () => {
  const database = createDatabase({ connectTimeoutMs: testConnectTimeoutMs(), url, schema, logger: createLogger('test'), max: 1 });
  try {
    const first = await pidOf(database);
    // Negative control: a constraint violation inside a Kysely transaction leaves the session in the pool.
    await database.db
      .insertInto('t' as never)
      .values({ n: 1 })
      .execute();
    await expect(database.db.transaction().execute((trx) => sql`insert into t values (1)`.execute(trx))).rejects.toMatchObject({ code: '23505' });
    expect(await pidOf(database)).toBe(first);
    // The one pooled session becomes read-only for good, as one attached to a standby after a fail-over.
    const c = await database.pool.connect();
    await c.query('set session characteristics as transaction read only');
    c.release();
    await expect(database.db.transaction().execute((trx) => sql`insert into t values (2)`.execute(trx))).rejects.toMatchObject({ code: '25006' });
    // The next checkout gets a fresh session that can write.
    const second = await pidOf(database);
    expect(second).not.toBe(first);
    await database.db.transaction().execute((trx) => sql`insert into t values (2)`.execute(trx));
    expect((await database.pool.query('select n from t order by n')).rows).toEqual([{ n: 1 }, { n: 2 }]);
  } finally {
    await database.close();
  }
});

test('readiness: down on a read-only session, up while the database refuses new connections but the pool serves', async () => {
  const readOnly = createDatabase({
    connectTimeoutMs: testConnectTimeoutMs(),
    url,
    schema,
    logger: createLogger('test'),
    settings: { default_transaction_read_only: 'on' },
  });
  const roleUrl = new URL(url);
  roleUrl.username = role;
  const limited = createDatabase({ connectTimeoutMs: testConnectTimeoutMs(), url: roleUrl.toString(), schema, logger: createLogger('test'), max: 3 });
  try {
    await expect(databaseWritable(readOnly.pool)).resolves.toEqual({ up: false, detail: expect.stringMatching(/read-only/) });
    // The role's one connection slot is taken by the pool's own busy session: a second checkout must open a
    // session and is refused with 53300.
    const busy = await limited.pool.connect();
    await expect(limited.pool.query('select 1')).rejects.toMatchObject({ code: '53300' });
    await expect(databaseWritable(limited.pool)).resolves.toEqual({ up: true });
    busy.release();
    await expect(databaseWritable(limited.pool)).resolves.toEqual({ up: true });
    // Negative control: the pool holds no session and the slot is someone else's: not ready.
    await limited.close();
    // A closed session's backend exits after the close returns and holds the role's slot until it has.
    for (let n = 1; (await admin.query(`select 1 from pg_stat_activity where usename = $1`, [role])).rowCount !== 0; n++) {
      if (n * 50 > testTime(30_000)) throw new Error(`the pool's session of ${role} did not end`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const other = new pg.Client({ connectionString: roleUrl.toString() });
    await other.connect();
    const fresh = createDatabase({ connectTimeoutMs: testConnectTimeoutMs(), url: roleUrl.toString(), schema, logger: createLogger('test') });
    try {
      await expect(databaseWritable(fresh.pool)).resolves.toMatchObject({ up: false });
    } finally {
      await fresh.close();
      await other.end();
    }
  } finally {
    await readOnly.close();
    await limited.close();
  }
});
