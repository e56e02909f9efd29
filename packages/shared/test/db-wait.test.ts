/**
 * DatabaseWait (README "Start-up"): background work meeting a database that is not there yet (connection
 * refused) or too busy to hand out a connection (pg-pool's wait ran out) logs one WARN per outage naming what
 * waits, nothing for the next attempts, one INFO when the database answers again; any other error is left to
 * the caller (negative control: a SQL error is not swallowed).
 */
import net from 'node:net';
import { Writable } from 'node:stream';
import pg from 'pg';
import pino from 'pino';
import { DatabaseWait } from '../src/db-wait';

const URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A pino logger writing its lines to an array. */
function capture(): { logger: pino.Logger; lines: { level: number; msg: string; reason?: string }[] } {
  const lines: { level: number; msg: string; reason?: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as { level: number; msg: string });
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

/** The error a query on `pool` fails with. */
async function failure(pool: pg.Pool, text = 'select 1'): Promise<unknown> {
  return pool.query(text).then(
    () => new Error('the query succeeded'),
    (err: unknown) => err,
  );
}

test('a refused connection and an exhausted pool: one WARN per outage, one INFO when it answers, other errors left to the caller', async () => {
  const { logger, lines } = capture();
  const wait = new DatabaseWait(logger, 'order expiry sweep');
  const away = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${await closedPort()}/x` });
  // Its one connection is opened without a deadline (a loaded machine may take seconds); only then is the wait
  // of the next caller cut to 100 ms, so that the exhausted pool fails fast (pg-pool reads it on each connect).
  const busy = new pg.Pool({ connectionString: URL, max: 1 });
  const held = await busy.connect();
  busy.options.connectionTimeoutMillis = 100;
  try {
    for (let i = 0; i < 3; i++) expect(wait.failed(await failure(away))).toBe(true);
    expect(wait.failed(await failure(busy))).toBe(true);
    held.release();
    // Negative control: a SQL error is no outage; the caller logs it.
    const sqlError = await failure(busy, 'select * from no_such_table_at_all');
    expect(wait.failed(sqlError)).toBe(false);
    wait.succeeded();
    wait.succeeded();
    // A new outage warns again.
    expect(wait.failed(await failure(away))).toBe(true);
  } finally {
    await away.end();
    await busy.end();
  }
  await new Promise((r) => setImmediate(r));
  expect(lines.map((l) => [l.level, l.msg])).toEqual([
    [40, 'order expiry sweep waits for the database; retrying'],
    [30, 'order expiry sweep: the database answers again'],
    [40, 'order expiry sweep waits for the database; retrying'],
  ]);
  expect(lines[0].reason).toMatch(/ECONNREFUSED/);
  expect(JSON.stringify(lines)).not.toMatch(/"stack"/);
});
