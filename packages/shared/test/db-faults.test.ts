/**
 * Database trouble answers like trouble: real PostgreSQL errors (a read-only transaction, a lock held past
 * `lock_timeout`, a statement past `statement_timeout`, and the SQLSTATEs of a full disk, too many
 * connections, other resource shortages and an administrator's shutdown raised by the server itself) go
 * through the one error mapping of both services and answer 503 with `Retry-After` in both error shapes
 * (problem+json and google.rpc.Status); a constraint violation (negative control) stays a 500.
 */
import express from 'express';
import request from 'supertest';
import { createDatabase, createLogger, problemErrorHandler, rpcStatusErrorHandler } from '../src';
import { testConnectTimeoutMs } from '@sports-timing/shared/src/test-time';

const schema = `db_faults_${process.pid}`;
const database = createDatabase({ connectTimeoutMs: testConnectTimeoutMs(), url: process.env.DATABASE_URL!, schema, logger: createLogger('test') });
const { pool } = database;

/** A statement that fails with `sqlstate` raised by PostgreSQL. */
const raise = (sqlstate: string) => `do $$ begin raise exception 'injected' using errcode = '${sqlstate}'; end $$`;

const routes: Record<string, () => Promise<unknown>> = {
  'read-only': async () => {
    const c = await pool.connect();
    try {
      await c.query('begin transaction read only');
      await c.query('insert into t values (1)');
    } finally {
      await c.query('rollback').catch(() => undefined);
      c.release();
    }
  },
  'lock-timeout': async () => {
    const holder = await pool.connect();
    const waiter = await pool.connect();
    try {
      await holder.query('begin; lock table t in access exclusive mode');
      await waiter.query(`set lock_timeout = '50ms'`);
      await waiter.query('select * from t');
    } finally {
      await holder.query('rollback');
      await waiter.query('reset lock_timeout');
      holder.release();
      waiter.release();
    }
  },
  'statement-timeout': async () => {
    const c = await pool.connect();
    try {
      await c.query(`set statement_timeout = '50ms'`);
      await c.query('select pg_sleep(2)');
    } finally {
      await c.query('reset statement_timeout');
      c.release();
    }
  },
  'disk-full': () => pool.query(raise('53100')),
  'too-many-connections': () => pool.query(raise('53300')),
  'out-of-memory': () => pool.query(raise('53200')),
  'admin-shutdown': () => pool.query(raise('57P01')),
  'unique-violation': () => pool.query(raise('23505')),
};

const app = express();
for (const area of ['/problem', '/shop']) {
  for (const [name, run] of Object.entries(routes))
    app.get(`${area}/${name}`, (_req, _res, next) => {
      run().then(() => next(new Error('the fault did not happen')), next);
    });
}
app.use('/shop', rpcStatusErrorHandler());
app.use(problemErrorHandler());

beforeAll(async () => {
  await pool.query(`create schema ${schema}; create table ${schema}.t (n int)`);
});
afterAll(async () => {
  await pool.query(`drop schema ${schema} cascade`);
  await database.close();
});

describe.each(['read-only', 'lock-timeout', 'statement-timeout', 'disk-full', 'too-many-connections', 'out-of-memory', 'admin-shutdown'])('%s', (name) => {
  it('answers 503 problem+json with Retry-After', async () => {
    const res = await request(app).get(`/problem/${name}`);
    expect(res.status).toBe(503);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(res.text)).toMatchObject({ status: 503, title: 'Service Unavailable', detail: expect.stringMatching(/retry/) });
    // The driver's message never reaches the client.
    expect(res.text).not.toMatch(/injected|canceling statement/);
  });
  it('answers 503 UNAVAILABLE in the shop area', async () => {
    const res = await request(app).get(`/shop/${name}`);
    expect(res.status).toBe(503);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(JSON.parse(res.text)).toMatchObject({ code: 14 });
  });
});

test('negative control: a constraint violation stays an internal error', async () => {
  const res = await request(app).get('/problem/unique-violation');
  expect(res.status).toBe(500);
  expect(res.headers['retry-after']).toBeUndefined();
});
