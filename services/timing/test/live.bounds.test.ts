/**
 * Live punches, access and bounds: who may hold a long-poll or stream, the instance's and each client's
 * share of live connections, shutdown, and the pool-exhaustion answer. Real PostgreSQL over real HTTP
 * (live-helpers.ts).
 */
import { createTimingClient, type Punch, type TimingClient } from '../../../packages/timing-client/src';
import { startTiming, type TimingTestContext } from './helpers';
import { client as clientOf, headId as headIdOf, punches, startInstance as startInstanceOn, until, type Instance } from './live-helpers';

let ctx: TimingTestContext;
let a: Instance;

const startInstance = (opts: Parameters<typeof startInstanceOn>[1] = {}) => startInstanceOn(ctx, opts);
const client = (inst: Instance, key = ctx.adminKey) => clientOf(inst, key);
const headId = (c: TimingClient, modem: string) => headIdOf(ctx, c, modem);

beforeAll(async () => {
  ctx = await startTiming();
  a = await startInstance();
});
afterAll(async () => {
  await a?.close();
  await ctx?.close();
});

describe('access and bounds', () => {
  it('applies the read access rules: a private event answers as a missing one without its owner key; public event anonymous', async () => {
    const owner = await ctx.createUser('live-owner');
    const other = await ctx.createUser('live-other');
    const co = client(a, owner.key);
    const priv = (await co.api.POST('/api/rest/v1/events', { body: { name: 'private', public: false, modems: ['PRV-1'] } })).data!.id;
    const pub = (await co.api.POST('/api/rest/v1/events', { body: { name: 'public', public: true, modems: ['PUB-1'] } })).data!.id;
    await co.uploadPunches([...punches('PRV-1', 1), ...punches('PUB-1', 1)]);
    for (const path of [`/api/rest/v1/punches/stream?eventId=${priv}`, `/api/rest/v1/punches?eventId=${priv}&wait=5`]) {
      const anon = await fetch(a.url + path, { headers: { Accept: path.includes('stream') ? 'text/event-stream' : 'application/json' } });
      expect(anon.status).toBe(404);
      const foreign = await fetch(a.url + path, { headers: { apikey: other.key, Accept: path.includes('stream') ? 'text/event-stream' : 'application/json' } });
      expect(foreign.status).toBe(404);
    }
    const anonymous = createTimingClient({ baseUrl: a.url });
    const got: Punch[] = [];
    const ac = new AbortController();
    const s = anonymous.stream({ eventId: pub }, (p) => void got.push(p), { signal: ac.signal });
    await until(() => got.length === 1);
    ac.abort();
    await s;
    await expect(anonymous.stream({ eventId: priv }, () => undefined)).rejects.toMatchObject({ status: 404 });
    const notStream = await fetch(`${a.url}/api/rest/v1/punches/stream?eventId=${pub}`, { headers: { Accept: 'application/json' } });
    expect(notStream.status).toBe(406);
  });

  it('bounds held connections (503 with Retry-After), frees a slot when the client disconnects, and ends everything on shutdown', async () => {
    const inst = await startInstance({ maxConnections: 2 });
    try {
      const c = client(inst);
      await c.uploadPunches(punches('BND-1', 1));
      const afterId = await headId(c, 'BND-1');
      const ac1 = new AbortController();
      const poll1 = c.readPunches({ modem: ['BND-1'] }, { afterId, wait: 30, signal: ac1.signal }).catch((e: unknown) => e);
      const ac2 = new AbortController();
      const stream2 = c.stream({ modem: ['BND-1'] }, () => undefined, { afterId, signal: ac2.signal });
      await until(() => inst.hub.connections === 2);

      const full = await fetch(`${inst.url}/api/rest/v1/punches?modem=BND-1&afterId=${afterId}&wait=5`, { headers: { apikey: ctx.adminKey } });
      expect(full.status).toBe(503);
      expect(full.headers.get('Retry-After')).toMatch(/^\d+$/);
      const fullStream = await fetch(`${inst.url}/api/rest/v1/punches/stream?modem=BND-1&afterId=${afterId}`, {
        headers: { apikey: ctx.adminKey, Accept: 'text/event-stream' },
      });
      expect(fullStream.status).toBe(503);
      // A read without wait is never refused.
      expect((await fetch(`${inst.url}/api/rest/v1/punches?modem=BND-1&afterId=${afterId}`, { headers: { apikey: ctx.adminKey } })).status).toBe(200);

      ac1.abort();
      expect(await poll1).toMatchObject({ name: 'AbortError' });
      await until(() => inst.hub.connections === 1);

      // Shutdown: a held long-poll answers empty at once, open streams end.
      // The longest wait: answered before it runs out, the answer came from the shutdown.
      const poll3 = c.readPunches({ modem: ['BND-1'] }, { afterId, wait: 60 });
      await until(() => inst.hub.connections === 2);
      const raw = await fetch(`${inst.url}/api/rest/v1/punches?modem=BND-1&afterId=${afterId}&wait=30`, { headers: { apikey: ctx.adminKey } });
      expect(raw.status).toBe(503);
      const closedAt = Date.now();
      inst.hub.close();
      const page3 = await poll3;
      expect(page3).toEqual({ punches: [], total: 0 });
      expect(Date.now() - closedAt).toBeLessThan(50_000);
      await until(() => inst.hub.connections === 0);
      ac2.abort();
      await stream2;
    } finally {
      await inst.close();
    }
  });

  it('gives each client a share of the live slots: 429 with Retry-After beyond it, while another client still gets one', async () => {
    const inst = await startInstance({ maxConnections: 4, maxConnectionsPerClient: 2 });
    const other = await ctx.createUser('live-share-other');
    const held: AbortController[] = [];
    try {
      const c = client(inst);
      await c.uploadPunches(punches('SHR-1', 1));
      const afterId = await headId(c, 'SHR-1');
      const polls = [0, 1].map(() => {
        const ac = new AbortController();
        held.push(ac);
        return c.readPunches({ modem: ['SHR-1'] }, { afterId, wait: 30, signal: ac.signal }).catch((e: unknown) => e);
      });
      await until(() => inst.hub.connections === 2);
      const third = await fetch(`${inst.url}/api/rest/v1/punches?modem=SHR-1&afterId=${afterId}&wait=5`, { headers: { apikey: ctx.adminKey } });
      expect(third.status).toBe(429);
      expect(third.headers.get('Retry-After')).toMatch(/^\d+$/);
      expect(((await third.json()) as { detail: string }).detail).toMatch(/holds 2 live connections/);
      const thirdStream = await fetch(`${inst.url}/api/rest/v1/punches/stream?modem=SHR-1&afterId=${afterId}`, {
        headers: { apikey: ctx.adminKey, Accept: 'text/event-stream' },
      });
      expect(thirdStream.status).toBe(429);
      // The instance has room: another user's long-poll is held, not refused.
      const co = client(inst, other.key);
      await co.uploadPunches(punches('SHR-2', 1));
      const theirAfterId = await headId(co, 'SHR-2');
      const ac = new AbortController();
      held.push(ac);
      const theirs = co.readPunches({ modem: ['SHR-2'] }, { afterId: theirAfterId, wait: 30, signal: ac.signal }).catch((e: unknown) => e);
      await until(() => inst.hub.connections === 3);
      for (const h of held) h.abort();
      await Promise.all([...polls, theirs]);
      await until(() => inst.hub.connections === 0);
    } finally {
      for (const h of held) h.abort();
      await inst.close();
    }
  });

  it('answers 503 "busy" with Retry-After when every pooled connection stays in use, while /readyz stays 200', async () => {
    const inst = await startInstance({ poolSize: 2 });
    const busy = await Promise.all([inst.database.pool.connect(), inst.database.pool.connect()]);
    try {
      const started = Date.now();
      const res = await fetch(`${inst.url}/api/rest/v1/punches?modem=BUSY-1`, { headers: { apikey: ctx.adminKey } });
      expect(res.status).toBe(503);
      expect(res.headers.get('Retry-After')).toBe('1');
      expect(((await res.json()) as { detail: string }).detail).toBe('The service is busy; retry shortly.');
      // The pool's own wait (5 s) ran out: overload, not an outage.
      expect(Date.now() - started).toBeGreaterThanOrEqual(4_000);
      const ready = await fetch(`${inst.url}/readyz`);
      expect(ready.status).toBe(200);
    } finally {
      for (const c of busy) c.release();
      await inst.close();
    }
  });
});
