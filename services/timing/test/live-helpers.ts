/**
 * Shared parts of the live-punch tests (live.test.ts, live.bounds.test.ts): a service instance of its own
 * (pool, hub, LISTEN session, HTTP server on port 0) on a test context's database, distinct punches, and
 * the waits those tests use.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDatabase, createLogger, type Database } from '@sports-timing/shared';
import { createTimingClient, type NewPunch, type TimingClient } from '../../../packages/timing-client/src';
import { createApp } from '../src/app';
import { composeTiming } from '../src/composition';
import type { DB } from '../src/db/schema';
import type { LiveHub } from '../src/live/hub';
import type { StreamFanout } from '../src/live/fanout';
import { startPunchListener, type PunchListener } from '../src/live/listener';
import { waitUntilVisible, type TimingTestContext } from './helpers';
import { testTime, testConnectTimeoutMs } from '@sports-timing/shared/src/test-time';

/** One service instance: its own pool, hub, LISTEN session and HTTP server. */
export interface Instance {
  database: Database<DB>;
  hub: LiveHub;
  /** The instance's shared stream feeds (live/fanout.ts), for their `stats`. */
  fanout: StreamFanout;
  listener: PunchListener;
  server: http.Server;
  url: string;
  close(): Promise<void>;
}

const logger = createLogger('timing-live-test');

/**
 * Starts an instance on `ctx`'s database; `opts` are the hub's limits, the SSE heartbeat (ms), the pool size, the
 * streams' lifetime (ms), their send bound, the backlog gate and the waiters' safety re-read period (ms; a test that
 * proves a wake-up came from a notification sets it beyond the test's own length, so only the notification can
 * have delivered the punch).
 */
export async function startInstance(
  ctx: TimingTestContext,
  opts: {
    maxConnections?: number;
    maxConnectionsPerClient?: number;
    heartbeatMs?: number;
    poolSize?: number;
    streamMaxMs?: number;
    safetyPollMs?: number;
    streamSendTimeoutMs?: number;
    streamMaxBufferedBytes?: number;
    maxBacklogReads?: number;
  } = {},
): Promise<Instance> {
  const database = createDatabase<DB>({ connectTimeoutMs: testConnectTimeoutMs(), url: ctx.testDb.url, schema: 'timing', logger, max: opts.poolSize ?? 20 });
  const timing = composeTiming({
    database,
    logger,
    liveLimits: {
      maxConnections: opts.maxConnections,
      maxConnectionsPerClient: opts.maxConnectionsPerClient ?? opts.maxConnections,
      safetyPollMs: opts.safetyPollMs,
    },
    validateResponses: true,
    sseHeartbeatMs: opts.heartbeatMs,
    streamMaxMs: opts.streamMaxMs,
    streamSendTimeoutMs: opts.streamSendTimeoutMs,
    streamMaxBufferedBytes: opts.streamMaxBufferedBytes,
    maxBacklogReads: opts.maxBacklogReads,
  });
  const hub = timing.live;
  const listener = startPunchListener(database.url, timing, logger);
  await listener.ready;
  const server = http.createServer(createApp(timing));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    database,
    hub,
    fanout: timing.fanout,
    listener,
    server,
    url,
    async close() {
      hub.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await listener.stop();
      await database.close();
    },
  };
}

let seq = 0;
/** `n` distinct punches for `modem` (distinct times, so none is a duplicate). */
export function punches(modem: string, n: number): NewPunch[] {
  return Array.from({ length: n }, () => ({
    card: String(500_000 + (seq % 97)),
    time: 1_580_000_000_000 + seq++ * 1000,
    code: 31 + (seq % 50),
    type: 'Control' as const,
    modem,
  }));
}

/** A typed client of `inst` with `key` (none when empty). */
export function client(inst: Instance, key: string): TimingClient {
  return createTimingClient({ baseUrl: inst.url, apiKey: key || undefined });
}

/** Resolves once `cond` holds (checked every 5 ms); throws after `timeoutMs`. */
export async function until(cond: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + testTime(timeoutMs);
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Id of the newest readable punch of `modem` (start position of a caught-up client). */
export async function headId(ctx: TimingTestContext, c: TimingClient, modem: string): Promise<number> {
  // Other test files' transactions on the shared cluster can hold back what was just uploaded.
  await waitUntilVisible(ctx);
  let afterId = 0;
  for (;;) {
    const page = await c.readPunches({ modem: [modem] }, { afterId });
    if (page.punches.length === 0) return afterId;
    afterId = page.punches[page.punches.length - 1].id;
  }
}
