/**
 * OWASP API1/API3 (object-level access, excessive exposure) on reads by modem serial (spec `getPunches`,
 * "Access"): a modem that is in a public event and in a private one. A caller who does not own the modem (no
 * key, or another user's) reads by serial only what the public events containing it expose — their windows —
 * on every read path: JSON and CSV (fast lane), the pipeline (HEAD-less browser requests), ROC by unit, a held
 * long-poll, an SSE stream and shared answers (an owner's answer never serves an anonymous read, and the
 * reverse). The owner and admins read the whole modem; the SI Center public read of the public event its window.
 * Real HTTP on a listening app, real PostgreSQL.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTiming, waitUntilVisible, type TimingTestContext } from '../../services/timing/test/helpers';
import { openSse } from './sse';

jest.setTimeout(90_000);

const MODEM = 'SQ-7001';
const OPEN_MODEM = 'SQ-7002';
/** Local wall-clock ms ("as if UTC"). */
const at = (y: number, m: number, d: number, h: number) => Date.UTC(y, m - 1, d, h);
const DAY_2020 = { from: at(2020, 1, 1, 0), to: at(2020, 1, 1, 23) };
const DAY_2021 = { from: at(2021, 6, 1, 0), to: at(2021, 6, 1, 23) };

let t: TimingTestContext;
let server: Server;
let base: string;
let ownerKey: string;
let strangerKey: string;
let card = 100_000;

async function call(method: string, path: string, key: string, body?: unknown, accept?: string): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = {};
  if (key) headers.apikey = key;
  if (accept) headers.Accept = accept;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}

/** Uploads one punch of `modem` at local time `time` with the owner's key; resolves when readable. */
async function punchAt(modem: string, time: number): Promise<void> {
  const res = await call('POST', '/api/rest/v1/punches', ownerKey, [{ card: String(card++), time, code: 31, type: 'Control', modem }]);
  expect(res.status).toBe(200);
  await waitUntilVisible(t);
}

/** Times of the punches a JSON read answers. */
async function jsonTimes(query: string, key: string): Promise<number[]> {
  const res = await call('GET', `/api/rest/v1/punches?${query}`, key);
  expect(res.status).toBe(200);
  return (JSON.parse(res.text) as { time: number }[]).map((p) => p.time);
}

/** Times of every punch of {@link MODEM} stored (the owner's read). */
const allTimes = () => jsonTimes(`modem=${MODEM}`, ownerKey);
const inDay = (times: number[], day: { from: number; to: number }) => times.filter((x) => x >= day.from && x <= day.to);

beforeAll(async () => {
  t = await startTiming();
  server = t.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  ownerKey = (await t.createUser('club')).key;
  strangerKey = (await t.createUser('stranger')).key;
  // Two punches in the public event's day, two in the private event's year, one between.
  for (const time of [at(2020, 1, 1, 9), at(2020, 1, 1, 10), at(2023, 5, 1, 9), at(2023, 5, 1, 10), at(2021, 6, 1, 12)]) await punchAt(MODEM, time);
  await punchAt(OPEN_MODEM, at(2023, 5, 1, 9));
  const events = [
    { name: 'Open training', public: true, modems: [MODEM], ...DAY_2020 },
    { name: 'Club championship', public: false, modems: [MODEM, OPEN_MODEM], from: at(2023, 1, 1, 0), to: at(2023, 12, 31, 23) },
    { name: 'Always open', public: true, modems: [OPEN_MODEM] },
  ];
  for (const ev of events) expect((await call('POST', '/api/rest/v1/events', ownerKey, ev)).status).toBe(201);
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await t?.close();
});

describe.each([
  ['anonymous', () => ''],
  ["another user's key", () => strangerKey],
])('%s', (_who, keyOf) => {
  test('JSON and CSV by modem: only the public event window, not the private event punches', async () => {
    const all = await allTimes();
    expect(all).toHaveLength(5);
    expect(await jsonTimes(`modem=${MODEM}`, keyOf())).toEqual(inDay(all, DAY_2020));
    const csv = await call('GET', `/api/rest/v1/punches?modem=${MODEM}`, keyOf(), undefined, 'text/csv');
    expect(csv.status).toBe(200);
    const times = csv.text
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => Number(l.split(',')[2]));
    expect(times).toEqual(inDay(all, DAY_2020));
    // A browser request (Origin) takes the Express pipeline instead of the fast lane: the same answer.
    const res = await fetch(`${base}/api/rest/v1/punches?modem=${MODEM}`, {
      headers: { Origin: 'https://results.example.org', ...(keyOf() ? { apikey: keyOf() } : {}) },
    });
    expect(((await res.json()) as { time: number }[]).map((p) => p.time)).toEqual(inDay(all, DAY_2020));
  });

  test('X-Total-Count counts only what the windows expose', async () => {
    const res = await fetch(`${base}/api/rest/v1/punches?modem=${MODEM}`, { headers: keyOf() ? { apikey: keyOf() } : {} });
    expect(res.headers.get('x-total-count')).toBe('2');
  });

  test('ROC by unit: only the public event window', async () => {
    const path = keyOf() ? `/roc/key/${keyOf()}/getpunches.asp?unitId=${MODEM}&lastId=0` : `/getpunches.asp?unitId=${MODEM}&lastId=0`;
    const res = await call('GET', path, '');
    expect(res.status).toBe(200);
    const lines = res.text.split('\r\n').filter((l) => l !== '');
    expect(lines).toHaveLength(2);
    expect(lines.every((l) => l.endsWith(' 09:00:00') || l.endsWith(' 10:00:00'))).toBe(true);
    expect(lines.every((l) => l.includes(';2020-01-01 '))).toBe(true);
  });
});

test('a modem in a public event without a window reads whole anonymously (negative control of the window rule)', async () => {
  expect(await jsonTimes(`modem=${OPEN_MODEM}`, '')).toEqual([at(2023, 5, 1, 9)]);
});

test('the owner and an admin read the whole modem; the SI Center public read of the public event shows its window', async () => {
  const all = await allTimes();
  expect(all).toHaveLength(5);
  expect(await jsonTimes(`modem=${MODEM}`, t.adminKey)).toEqual(all);
  const events = JSON.parse((await call('GET', '/api/rest/v1/events', '')).text) as { id: number; name: string }[];
  const open = events.find((e) => e.name === 'Open training')!;
  const center = await call('GET', `/api/rest/v1/public/events/${open.id}/punches`, '');
  expect(center.status).toBe(200);
  expect((JSON.parse(center.text) as unknown[]).length).toBe(2);
});

test('shared answers: an owner read right before does not serve the anonymous one, nor the reverse', async () => {
  for (let i = 0; i < 3; i++) {
    const [own, anon, own2] = [await allTimes(), await jsonTimes(`modem=${MODEM}`, ''), await allTimes()];
    expect(own).toHaveLength(5);
    expect(anon).toEqual(inDay(own, DAY_2020));
    expect(own2).toEqual(own);
  }
  // Concurrently, too.
  const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? jsonTimes(`modem=${MODEM}`, '') : allTimes())));
  for (const [i, a] of answers.entries()) expect(a).toHaveLength(i % 2 ? 2 : 5);
});

test('two public events: the union of their windows; `after` narrows it', async () => {
  const ev = await call('POST', '/api/rest/v1/events', ownerKey, { name: 'Summer sprint', public: true, modems: [MODEM], ...DAY_2021 });
  expect(ev.status).toBe(201);
  const all = await allTimes();
  const union = all.filter((x) => inDay([x], DAY_2020).length > 0 || inDay([x], DAY_2021).length > 0);
  expect(union).toHaveLength(3);
  expect(await jsonTimes(`modem=${MODEM}`, '')).toEqual(union);
  expect(await jsonTimes(`modem=${MODEM}&after=${at(2021, 1, 1, 0)}`, '')).toEqual([at(2021, 6, 1, 12)]);
  // Two modems with different windows in one read.
  expect(await jsonTimes(`modem=${MODEM},${OPEN_MODEM}`, '')).toEqual([...union, at(2023, 5, 1, 9)].sort((x, y) => x - y));
  expect((await call('DELETE', `/api/rest/v1/events/${(JSON.parse(ev.text) as { id: number }).id}`, ownerKey)).status).toBe(204);
});

/** Highest id of the modem's punches (owner's read). */
async function headId(): Promise<number> {
  const res = await call('GET', `/api/rest/v1/punches?modem=${MODEM}`, ownerKey);
  const ps = JSON.parse(res.text) as { id: number }[];
  return ps[ps.length - 1].id;
}

test('a held anonymous long-poll answers the punch in the public window, never one of the private event', async () => {
  // After the last public punch only the private event's punches follow: the read finds nothing and holds.
  const visible = JSON.parse((await call('GET', `/api/rest/v1/punches?modem=${MODEM}`, '')).text) as { id: number }[];
  const held = call('GET', `/api/rest/v1/punches?modem=${MODEM}&afterId=${visible[visible.length - 1].id}&wait=30`, '');
  await punchAt(MODEM, at(2023, 6, 1, 9));
  await punchAt(MODEM, at(2020, 1, 1, 11));
  const res = await held;
  expect(res.status).toBe(200);
  expect((JSON.parse(res.text) as { time: number }[]).map((p) => p.time)).toEqual([at(2020, 1, 1, 11)]);
});

test('an anonymous SSE stream by modem carries only punches in the public window', async () => {
  const head = await headId();
  const stream = await openSse(`${base}/api/rest/v1/punches/stream?modem=${MODEM}`, {});
  try {
    expect(stream.status).toBe(200);
    await punchAt(MODEM, at(2023, 7, 1, 9));
    await punchAt(MODEM, at(2020, 1, 1, 12));
    await stream.until((e) => e.some((x) => Number(x.id) > head));
    const times = stream.events.filter((e) => e.event === 'punch').map((e) => (JSON.parse(e.data) as { time: number }).time);
    expect(times).toEqual([at(2020, 1, 1, 9), at(2020, 1, 1, 10), at(2020, 1, 1, 11), at(2020, 1, 1, 12)]);
  } finally {
    stream.close();
  }
});
