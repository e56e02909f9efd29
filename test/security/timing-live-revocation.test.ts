/**
 * OWASP API2 (broken authentication) on the live reads of the timing service (spec `getPunchStream`, `getPunches`
 * `wait`; info "Authentication": a revoked key stops working immediately): two app instances on one database
 * (real HTTP, real PostgreSQL, each with its own LISTEN session). A key revoked through instance A
 * - ends a punch stream held on instance B with an `error` event carrying the 401's ProblemDetails, and no punch
 *   uploaded after the revocation reaches it;
 * - answers a long-poll held on instance B with 401, not with the punch uploaded after the revocation;
 * and a stream closes after its lifetime (`TIMING_STREAM_MAX_SECONDS`), the client resuming with
 * `Last-Event-ID` without gaps or repeats.
 */
import { startTiming, waitUntilVisible, type TimingTestContext } from '../../services/timing/test/helpers';
import { punches, startInstance, type Instance } from '../../services/timing/test/live-helpers';
import { openSse, type SseEvent } from './sse';

jest.setTimeout(90_000);

let t: TimingTestContext;
let a: Instance;
let b: Instance;
let short: Instance;
let ownerKey: string;
let eventId: number;
const MODEM = 'REVOKE-1';

async function call(inst: Instance, method: string, path: string, key: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${inst.url}${path}`, {
    method,
    headers: { apikey: key, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as unknown) : undefined };
}

/** Uploads `n` new punches of {@link MODEM} through `inst` with the owner's key; resolves once they are readable. */
async function uploadThrough(inst: Instance, n: number): Promise<void> {
  const res = await call(inst, 'POST', '/api/rest/v1/punches', ownerKey, punches(MODEM, n));
  expect(res.status).toBe(200);
  await waitUntilVisible(t);
}

/** A new key of the owner (through `inst`): its id and text. */
async function newKey(inst: Instance, name: string): Promise<{ id: number; key: string }> {
  const res = await call(inst, 'POST', '/api/rest/v1/keys', ownerKey, { name });
  expect(res.status).toBe(201);
  return res.json as { id: number; key: string };
}

const punchIds = (events: SseEvent[]) => events.filter((e) => e.event === 'punch').map((e) => Number(e.id));

/** Ids of every punch of the private event, read with the owner's key. */
async function allIds(): Promise<number[]> {
  const res = await call(a, 'GET', `/api/rest/v1/punches?eventId=${eventId}`, ownerKey);
  return (res.json as { id: number }[]).map((p) => p.id);
}

beforeAll(async () => {
  t = await startTiming();
  a = await startInstance(t);
  b = await startInstance(t);
  short = await startInstance(t, { streamMaxMs: 1500 });
  ownerKey = (await t.createUser('revoker')).key;
  await uploadThrough(a, 2);
  const ev = await call(a, 'POST', '/api/rest/v1/events', ownerKey, { name: 'Private club night', public: false, modems: [MODEM] });
  expect(ev.status).toBe(201);
  eventId = (ev.json as { id: number }).id;
});
afterAll(async () => {
  await short?.close();
  await b?.close();
  await a?.close();
  await t?.close();
});

test('a key revoked on instance A ends its stream on instance B with an error event; no later punch reaches it', async () => {
  const k = await newKey(a, 'stream');
  const stream = await openSse(`${b.url}/api/rest/v1/punches/stream?eventId=${eventId}`, { apikey: k.key });
  try {
    expect(stream.status).toBe(200);
    const before = await allIds();
    await stream.until((e) => punchIds(e).length >= before.length);
    // Live delivery works for this key: a new punch through A arrives on B.
    await uploadThrough(a, 1);
    await stream.until((e) => punchIds(e).length >= before.length + 1);

    expect((await call(a, 'DELETE', `/api/rest/v1/keys/${k.id}`, ownerKey)).status).toBe(204);
    expect((await call(b, 'GET', `/api/rest/v1/punches?eventId=${eventId}`, k.key)).status).toBe(401);
    const delivered = punchIds(stream.events).length;
    await uploadThrough(a, 1);
    // The stream ends (error event, then close) or, on the broken behaviour, delivers the new punch.
    await stream.until((e) => e.some((x) => x.event === 'error') || punchIds(e).length > delivered);
    expect(punchIds(stream.events)).toHaveLength(delivered);
    const last = stream.events[stream.events.length - 1];
    expect(last.event).toBe('error');
    expect(JSON.parse(last.data)).toMatchObject({ status: 401, title: 'Unauthorized', detail: 'The API key is unknown or revoked.' });
    await stream.until(() => false);
    expect(stream.closed).toBe(true);
  } finally {
    stream.close();
  }
});

test('an idle stream ends as soon as its key is revoked on another instance (nothing uploaded)', async () => {
  const k = await newKey(a, 'idle');
  const head = (await allIds()).at(-1) ?? 0;
  const stream = await openSse(`${b.url}/api/rest/v1/punches/stream?eventId=${eventId}&afterId=${head}`, { apikey: k.key });
  try {
    expect(stream.status).toBe(200);
    // Negative control: an idle stream of a valid key stays open.
    await new Promise((r) => setTimeout(r, 300));
    expect(stream.closed).toBe(false);
    expect((await call(a, 'DELETE', `/api/rest/v1/keys/${k.id}`, ownerKey)).status).toBe(204);
    await stream.until((e) => e.some((x) => x.event === 'error'));
    expect(stream.events.map((e) => e.event)).toEqual(['error']);
    await stream.until(() => false);
    expect(stream.closed).toBe(true);
  } finally {
    stream.close();
  }
});

test('a long-poll held on instance B with a key revoked on instance A answers 401, not the punch uploaded after', async () => {
  const k = await newKey(a, 'poll');
  const head = (await allIds()).at(-1) ?? 0;
  const held = fetch(`${b.url}/api/rest/v1/punches?eventId=${eventId}&afterId=${head}&wait=60`, { headers: { apikey: k.key } });
  // The poll is held once B counts it.
  while (b.hub.connections === 0) await new Promise((r) => setTimeout(r, 10));
  expect((await call(a, 'DELETE', `/api/rest/v1/keys/${k.id}`, ownerKey)).status).toBe(204);
  await uploadThrough(a, 1);
  const res = await held;
  const body = (await res.json()) as Record<string, unknown>;
  expect([res.status, body.detail]).toEqual([401, 'The API key is unknown or revoked.']);
});

test('negative control: a long-poll held with a valid key answers the punch uploaded on the other instance', async () => {
  const k = await newKey(a, 'poll-ok');
  const head = (await allIds()).at(-1) ?? 0;
  const before = b.hub.connections;
  const held = fetch(`${b.url}/api/rest/v1/punches?eventId=${eventId}&afterId=${head}&wait=60`, { headers: { apikey: k.key } });
  while (b.hub.connections === before) await new Promise((r) => setTimeout(r, 10));
  await uploadThrough(a, 1);
  const res = await held;
  expect(res.status).toBe(200);
  expect(((await res.json()) as unknown[]).length).toBe(1);
});

test('a stream closes after its lifetime; resuming with Last-Event-ID misses and repeats nothing, and a revoked key cannot resume', async () => {
  const k = await newKey(a, 'lifetime');
  const seen: number[] = [];
  let lastId = 0;
  let uploads = 0;
  for (let round = 0; round < 3; round++) {
    const stream = await openSse(`${short.url}/api/rest/v1/punches/stream?eventId=${eventId}`, {
      apikey: k.key,
      ...(lastId > 0 ? { 'Last-Event-ID': String(lastId) } : {}),
    });
    try {
      expect(stream.status).toBe(200);
      await uploadThrough(a, 2);
      uploads += 2;
      await stream.until(() => false);
      expect(stream.closed).toBe(true);
      seen.push(...punchIds(stream.events));
      lastId = seen.at(-1) ?? 0;
    } finally {
      stream.close();
    }
  }
  // Punches uploaded after the last close arrive on the next resume.
  const rest = await openSse(`${short.url}/api/rest/v1/punches/stream?eventId=${eventId}`, { apikey: k.key, 'Last-Event-ID': String(lastId) });
  await rest.until(() => false);
  seen.push(...punchIds(rest.events));
  expect(uploads).toBe(6);
  expect(seen).toEqual(await allIds());

  expect((await call(a, 'DELETE', `/api/rest/v1/keys/${k.id}`, ownerKey)).status).toBe(204);
  const refused = await openSse(`${short.url}/api/rest/v1/punches/stream?eventId=${eventId}`, { apikey: k.key, 'Last-Event-ID': String(lastId) });
  expect(refused.status).toBe(401);
});
