/**
 * Shared stream feeds and slow readers (docs/architecture.md "Stream fan-out", "Slow readers"): 300 anonymous
 * streams from one address follow a public event through one feed while the per-client limit still holds for
 * streams with a key; a stream whose peer stops reading is closed by the send timeout and resumes with
 * `Last-Event-ID` without a gap or a repeat. Real PostgreSQL, real HTTP, real sockets (live-helpers.ts).
 */
import http from 'node:http';
import request from 'supertest';
import { FEED_READ_INTERVAL_MS } from '../src/live/fanout';
import { startTiming, waitUntilVisible, type TimingTestContext } from './helpers';
import { client as clientOf, headId as headIdOf, punches, startInstance, until, type Instance } from './live-helpers';

let ctx: TimingTestContext;

beforeAll(async () => {
  ctx = await startTiming();
}, 60_000);
afterAll(async () => ctx?.close());

/** An open SSE stream read over its own socket: the ids of its complete events, pausable. */
interface OpenStream {
  status: number;
  ids: number[];
  ended: boolean;
  res: http.IncomingMessage;
  close(): void;
}

/** Opens `path` as an SSE stream (its own connection, no agent); resolves once the status is in. */
function openStream(inst: Instance, path: string, headers: Record<string, string> = {}): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const req = http.get(inst.url + path, { agent: false, headers: { Accept: 'text/event-stream', ...headers } }, (res) => {
      let text = '';
      const s: OpenStream = { status: res.statusCode ?? 0, ids: [], ended: false, res, close: () => req.destroy() };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        // Only complete events count (an event cut by a closed connection is dropped, as EventSource does).
        let end: number;
        while ((end = text.indexOf('\n\n')) >= 0) {
          const m = /^id: (\d+)$/m.exec(text.slice(0, end));
          if (m) s.ids.push(Number(m[1]));
          text = text.slice(end + 2);
        }
      });
      res.on('end', () => (s.ended = true));
      res.on('error', () => (s.ended = true));
      res.on('close', () => (s.ended = true));
      resolve(s);
    });
    req.on('error', reject);
  });
}

/** A gauge of the instance's `/metrics`. */
async function gauge(inst: Instance, name: string): Promise<number> {
  const text = await (await fetch(`${inst.url}/metrics`)).text();
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)$`, 'm').exec(text);
  if (!m) throw new Error(`${name} not exported`);
  return Number(m[1]);
}

/** Ids of the punches of `modem` in the database, ascending. */
async function idsOf(modem: string): Promise<number[]> {
  await waitUntilVisible(ctx);
  const { rows } = await ctx.database.pool.query<{ id: string }>('select id from punches where modem = $1 order by id', [modem]);
  return rows.map((r) => Number(r.id));
}

describe('shared stream feeds', () => {
  it('300 anonymous streams from one address follow a public event through one feed; the per-client limit still holds with a key', async () => {
    const inst = await startInstance(ctx, { maxConnections: 400, maxConnectionsPerClient: 5 });
    const streams: OpenStream[] = [];
    try {
      const owner = await ctx.createUser('fan-owner');
      const event = (
        await request(ctx.app)
          .post('/api/rest/v1/events')
          .set('apikey', owner.key)
          .send({ name: 'Fan', public: true, modems: ['FAN-1'] })
          .expect(201)
      ).body.id as number;
      const c = clientOf(inst, owner.key);
      await c.uploadPunches(punches('FAN-1', 2));
      const head = await headIdOf(ctx, c, 'FAN-1');
      for (let i = 0; i < 300; i++) streams.push(await openStream(inst, `/api/rest/v1/punches/stream?eventId=${event}&afterId=${head}`));
      expect(streams.every((s) => s.status === 200)).toBe(true);
      await until(() => inst.hub.connections === 300);
      expect(await gauge(inst, 'live_stream_feeds')).toBe(1);

      // Streams with a key keep the per-client limit: 5, then 429.
      const keyed: OpenStream[] = [];
      for (let i = 0; i < 5; i++) keyed.push(await openStream(inst, `/api/rest/v1/punches/stream?eventId=${event}&afterId=${head}`, { apikey: owner.key }));
      streams.push(...keyed);
      expect(keyed.map((s) => s.status)).toEqual([200, 200, 200, 200, 200]);
      const sixth = await fetch(`${inst.url}/api/rest/v1/punches/stream?eventId=${event}&afterId=${head}`, {
        headers: { apikey: owner.key, Accept: 'text/event-stream' },
      });
      expect(sixth.status).toBe(429);

      await c.uploadPunches(punches('FAN-1', 3));
      const fresh = (await idsOf('FAN-1')).filter((id) => id > head);
      expect(fresh.length).toBe(3);
      await until(() => streams.every((s) => s.ids.length >= 3), 60_000);
      for (const s of streams) expect(s.ids).toEqual(fresh);

      // A spectator joining late from the start replays its backlog and joins the same feed: every punch once.
      const late = await openStream(inst, `/api/rest/v1/punches/stream?eventId=${event}&afterId=0`);
      streams.push(late);
      await c.uploadPunches(punches('FAN-1', 2));
      const all = await idsOf('FAN-1');
      await until(() => late.ids.length >= all.length && streams[0].ids.length >= 5, 60_000);
      expect(late.ids).toEqual(all);
      expect(streams[0].ids).toEqual(all.filter((id) => id > head));
      expect(await gauge(inst, 'live_stream_feeds')).toBe(1);
    } finally {
      for (const s of streams) s.close();
      await until(() => inst.hub.connections === 0);
      await inst.close();
    }
  }, 120_000);
});

describe('batches of a feed', () => {
  it('a burst of single-punch uploads reaches the streams in batches at most one per interval, every punch once', async () => {
    const inst = await startInstance(ctx, { maxConnections: 100 });
    const streams: OpenStream[] = [];
    try {
      const owner = await ctx.createUser('burst-owner');
      const event = (
        await request(ctx.app)
          .post('/api/rest/v1/events')
          .set('apikey', owner.key)
          .send({ name: 'Burst', public: true, modems: ['BURST-1'] })
          .expect(201)
      ).body.id as number;
      const c = clientOf(inst, owner.key);
      await c.uploadPunches(punches('BURST-1', 1));
      const head = await headIdOf(ctx, c, 'BURST-1');
      for (let i = 0; i < 20; i++) streams.push(await openStream(inst, `/api/rest/v1/punches/stream?eventId=${event}&afterId=${head}`));
      await until(() => inst.hub.connections === 20);
      const before = inst.fanout.stats.batches;
      const started = performance.now();
      // A mass start: 300 uploads of one punch each, 10 at a time, as fast as the instance answers them.
      const queue = Array.from({ length: 300 }, () => punches('BURST-1', 1));
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          for (let p = queue.shift(); p; p = queue.shift()) await c.uploadPunches(p);
        }),
      );
      const fresh = (await idsOf('BURST-1')).filter((id) => id > head);
      expect(fresh).toHaveLength(300);
      await until(() => streams.every((s) => s.ids.length >= 300), 60_000);
      const elapsed = performance.now() - started;
      for (const s of streams) expect(s.ids).toEqual(fresh);
      // One read and one broadcast per FEED_READ_INTERVAL_MS at most (a read per upload would be hundreds).
      expect(inst.fanout.stats.batches - before).toBeLessThanOrEqual(Math.floor(elapsed / (FEED_READ_INTERVAL_MS - 2)) + 1);
    } finally {
      for (const s of streams) s.close();
      await until(() => inst.hub.connections === 0);
      await inst.close();
    }
  }, 120_000);
});

describe('backlog replays', () => {
  it('streams from an old afterId replay page by page through the gate, at most its limit at once, each punch once', async () => {
    const inst = await startInstance(ctx, { maxConnections: 50, maxConnectionsPerClient: 50, maxBacklogReads: 1 });
    const streams: OpenStream[] = [];
    try {
      const owner = await ctx.createUser('backlog-owner');
      const event = (
        await request(ctx.app)
          .post('/api/rest/v1/events')
          .set('apikey', owner.key)
          .send({ name: 'Backlog', public: true, modems: ['BKL-1'] })
          .expect(201)
      ).body.id as number;
      await clientOf(inst, owner.key).uploadPunches(punches('BKL-1', 5000));
      const all = await idsOf('BKL-1');
      const before = await gauge(inst, 'backlog_pages_read');
      // Anonymous ones on the shared feed and ones with a key on their own loops, all from the start.
      for (let i = 0; i < 6; i++) {
        streams.push(await openStream(inst, `/api/rest/v1/punches/stream?eventId=${event}&afterId=0`, i % 2 === 0 ? {} : { apikey: owner.key }));
      }
      await until(() => streams.every((s) => s.ids.length >= all.length), 120_000);
      for (const s of streams) expect(s.ids).toEqual(all);
      // Five pages each: the first read directly, the four after it through the gate, one at a time.
      expect((await gauge(inst, 'backlog_pages_read')) - before).toBeGreaterThanOrEqual(6 * 4);
      expect(await gauge(inst, 'backlog_pages_most_at_once')).toBe(1);
    } finally {
      for (const s of streams) s.close();
      await until(() => inst.hub.connections === 0);
      await inst.close();
    }
  }, 180_000);
});

describe('slow readers', () => {
  it('closes a stream whose peer reads nothing after the send timeout; it resumes with Last-Event-ID, no gap, no repeat', async () => {
    const inst = await startInstance(ctx, { maxConnections: 20, streamSendTimeoutMs: 300, streamMaxBufferedBytes: 64 * 1024 });
    const streams: OpenStream[] = [];
    try {
      const owner = await ctx.createUser('slow-owner');
      const event = (
        await request(ctx.app)
          .post('/api/rest/v1/events')
          .set('apikey', owner.key)
          .send({ name: 'Slow', public: true, modems: ['SLOW-1'] })
          .expect(201)
      ).body.id as number;
      // The admin has no daily quota: this test uploads until the buffers are full.
      const c = clientOf(inst, owner.key);
      await c.uploadPunches(punches('SLOW-1', 1));
      const head = await headIdOf(ctx, c, 'SLOW-1');
      const path = `/api/rest/v1/punches/stream?eventId=${event}&afterId=${head}`;
      // Two peers stop reading (an anonymous one on the shared feed, one with a key on its own loop); one reads on.
      const stalled = [await openStream(inst, path), await openStream(inst, path, { apikey: owner.key })];
      const reader = await openStream(inst, path);
      streams.push(...stalled, reader);
      for (const s of stalled) s.res.pause();
      await until(() => inst.hub.connections === 3);
      // Punches until the kernel's socket buffers are full and the service's own buffer passes the bound.
      while (inst.hub.connections > 1) {
        await c.uploadPunches(punches('SLOW-1', 5000));
        await new Promise((r) => setTimeout(r, 50));
      }
      // The reader was not closed, and has every punch.
      expect(reader.ended).toBe(false);
      const all = (await idsOf('SLOW-1')).filter((id) => id > head);
      await until(() => reader.ids.length >= all.length, 60_000);
      expect(reader.ids).toEqual(all);
      for (const s of stalled) {
        // What arrived before the close is a gap-free prefix; the resume from its last id brings exactly the rest.
        s.res.resume();
        await until(() => s.ended, 60_000);
        expect(s.ids.length).toBeLessThan(all.length);
        expect(s.ids).toEqual(all.slice(0, s.ids.length));
        const last = s.ids.length > 0 ? s.ids[s.ids.length - 1] : head;
        const resumed = await openStream(inst, path, { 'Last-Event-ID': String(last), ...(s === stalled[1] ? { apikey: owner.key } : {}) });
        streams.push(resumed);
        await until(() => resumed.ids.length >= all.length - s.ids.length, 60_000);
        expect(resumed.ids).toEqual(all.slice(s.ids.length));
      }
    } finally {
      for (const s of streams) s.close();
      await until(() => inst.hub.connections === 0);
      await inst.close();
    }
  }, 180_000);
});
