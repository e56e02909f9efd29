/**
 * `/readyz` follows the database both ways without a restart. The database "goes away" by cutting a TCP
 * proxy that stands between the pool and the real PostgreSQL, so the machine's server is never touched.
 */
import net from 'node:net';
import express from 'express';
import request from 'supertest';
import { createDatabase, createLogger, READINESS_REUSE_MS, readyz } from '../src';
import { testTime } from '@sports-timing/shared/src/test-time';

function startProxy(target: { host: string; port: number }, port = 0): Promise<{ server: net.Server; port: number; sockets: Set<net.Socket> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve({ server, port: (server.address() as net.AddressInfo).port, sockets })));
}

async function stopProxy(p: { server: net.Server; sockets: Set<net.Socket> }): Promise<void> {
  for (const s of p.sockets) s.destroy();
  await new Promise((r) => p.server.close(r));
}

/** The first `/readyz` answer with `status`, polled for at most the reuse window plus 5 s. */
async function untilStatus(app: express.Express, status: number): Promise<request.Response> {
  const end = Date.now() + testTime(READINESS_REUSE_MS + 5_000);
  for (;;) {
    const res = await request(app).get('/readyz');
    if (res.status === status || Date.now() > end) {
      expect(res.status).toBe(status);
      return res;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('readiness goes down with the database and comes back without a restart', async () => {
  const target = new URL(process.env.DATABASE_URL!);
  let proxy = await startProxy({ host: target.hostname, port: Number(target.port || 5432) });
  const url = new URL(target.toString());
  url.port = String(proxy.port);
  url.hostname = '127.0.0.1';
  const database = createDatabase({ url: url.toString(), schema: 'public', logger: createLogger('test') });
  const app = express();
  app.get('/readyz', readyz(database.pool));
  try {
    await request(app)
      .get('/readyz')
      .expect(200, { status: 'ready', checks: { database: 'up' } });

    await stopProxy(proxy);
    // A finished check answers probes for READINESS_REUSE_MS; the next one sees the database gone.
    const down = await untilStatus(app, 503);
    expect(down.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(down.headers['retry-after']).toBeDefined();
    expect(down.body).toMatchObject({ status: 503, checks: { database: 'down' } });

    proxy = await startProxy({ host: target.hostname, port: Number(target.port || 5432) }, proxy.port);
    await untilStatus(app, 200);
  } finally {
    await stopProxy(proxy);
    await database.close();
  }
});

test('idle pooled connections killed by the server (a restart) do not crash the process; the next query reconnects', async () => {
  const database = createDatabase({ url: process.env.DATABASE_URL!, schema: 'public', logger: createLogger('test'), applicationName: 'restart-test' });
  const admin = createDatabase({ url: process.env.DATABASE_URL!, schema: 'public', logger: createLogger('test') });
  try {
    await Promise.all(Array.from({ length: 4 }, () => database.pool.query('select pg_sleep(0.05)')));
    expect(database.pool.idleCount).toBeGreaterThan(0);
    const { rows } = await admin.pool.query(`select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where application_name = 'restart-test'`);
    expect(rows[0].n).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 100)); // the pool sees the idle clients die ('error' events)
    const again = await database.pool.query('select 1 as one');
    expect(again.rows[0].one).toBe(1);
  } finally {
    await database.close();
    await admin.close();
  }
});
