/**
 * A mass start on an event evening: every modem of an event posts one punch at the same moment, each on a
 * connection of its own, as LTE modems send each punch as it happens (docs/decisions.md §5; the `postPunches`
 * fast lane). 500 modems already registered (a club's second race of the day), and 500 modems posting for the
 * first time (each first upload registers its modem). Every upload is answered 200 with its punch stored once, and
 * a poller of the event that follows with `afterId` from before the burst receives exactly the burst's punches,
 * once each, in ascending id order.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { testTime } from '@sports-timing/shared/src/test-time';
import { localMs, startTiming, upload, type TestUser, type TimingTestContext } from './helpers';

jest.setTimeout(testTime(120_000));

const MODEMS = 500;

let ctx: TimingTestContext;
let server: Server;
let base: string;

beforeAll(async () => {
  ctx = await startTiming();
  server = ctx.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await ctx.close();
});

const serial = (prefix: string, i: number) => `${prefix}-${String(i).padStart(3, '0')}`;

/** The head of the event's punches as a poller sees it: the highest id of a poll from 0 (paged). */
async function head(eventId: number): Promise<number> {
  let afterId = 0;
  for (;;) {
    const page = (await (await fetch(`${base}/api/rest/v1/punches?eventId=${eventId}&afterId=${afterId}`)).json()) as { id: number }[];
    if (page.length === 0) return afterId;
    afterId = page[page.length - 1].id;
  }
}

/** Polls from `afterId` until `n` punches arrived (each page from the last id received); returns them in order. */
async function follow(eventId: number, afterId: number, n: number): Promise<{ id: number; card: string; modem: string }[]> {
  const got: { id: number; card: string; modem: string }[] = [];
  let last = afterId;
  while (got.length < n) {
    const page = (await (await fetch(`${base}/api/rest/v1/punches?eventId=${eventId}&afterId=${last}`)).json()) as {
      id: number;
      card: string;
      modem: string;
    }[];
    if (page.length === 0) await new Promise((r) => setTimeout(r, 50));
    else last = page[page.length - 1].id;
    got.push(...page);
  }
  return got;
}

/** Every modem posts one punch at once, each request on its own connection; resolves with the answers. */
async function burst(user: TestUser, modems: string[], cardBase: number): Promise<{ status: number; body: unknown }[]> {
  return Promise.all(
    modems.map(async (modem, i) => {
      const res = await fetch(`${base}/api/rest/v1/punches`, {
        method: 'POST',
        headers: { apikey: user.key, 'content-type': 'application/json', connection: 'close' },
        body: JSON.stringify([{ card: String(cardBase + i), time: localMs(19, 0, i % 60), code: 100, type: 'Start', modem }]),
      });
      return { status: res.status, body: await res.json() };
    }),
  );
}

describe.each([
  ['500 registered modems (a second race of the day)', 'MS-R', true],
  ['500 modems posting for the first time (each registers its modem)', 'MS-N', false],
])('mass start: %s', (_name, prefix, registered) => {
  it('every upload is 200 with its punch stored once; a poller from before the burst gets exactly the burst, once each', async () => {
    const user = await ctx.createUser(`club-${prefix}`);
    const modems = Array.from({ length: MODEMS }, (_, i) => serial(prefix, i));
    if (registered) {
      // Registered earlier: at most 100 new modems per upload (docs/decisions.md §5 "Quotas").
      for (let i = 0; i < MODEMS; i += 100)
        await upload(
          ctx,
          user.key,
          modems.slice(i, i + 100).map((modem, j) => ({ card: String(9_000 + i + j), time: localMs(18), code: 31, type: 'Control', modem })),
        );
    }
    // The event's public page: the spectators' and result software's read of the start.
    const event = await fetch(`${base}/api/rest/v1/events`, {
      method: 'POST',
      headers: { apikey: user.key, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Mass start ${prefix}`, public: true, modems }),
    });
    expect(event.status).toBe(201);
    const eventId = ((await event.json()) as { id: number }).id;
    const before = await head(eventId);
    const answers = await burst(user, modems, 1_000_000);
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    expect(answers.every((a) => (a.body as { stored: number }).stored === 1)).toBe(true);
    const received = await follow(eventId, before, MODEMS);
    expect(received).toHaveLength(MODEMS);
    expect(received.map((p) => p.id)).toEqual([...received.map((p) => p.id)].sort((a, b) => a - b));
    expect(new Set(received.map((p) => p.modem)).size).toBe(MODEMS);
    expect(new Set(received.map((p) => p.card)).size).toBe(MODEMS);
    const { rows } = await ctx.database.pool.query<{ n: number }>(`select count(*)::int n from punches where modem like $1 and code = 100`, [`${prefix}-%`]);
    expect(rows[0].n).toBe(MODEMS);
  });
});
