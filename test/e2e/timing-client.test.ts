/**
 * The typed timing client against a real timing app (port 0, real PostgreSQL): CSV and JSON reads with
 * `X-Total-Count`, gzip uploads, problem errors, the §4.1 rule 6 poller across pages, and the SSE parser.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTiming, waitUntilVisible, type TimingTestContext } from '../../services/timing/test/helpers';
import { createTimingClient, readEventStream, TimingApiError, type NewPunch, type Punch } from '@sports-timing/timing-client';

let ctx: TimingTestContext;
let server: http.Server;
let baseUrl: string;

beforeAll(async () => {
  ctx = await startTiming();
  server = http.createServer(ctx.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await ctx.close();
});

function batch(modem: string, n: number, from = 0): NewPunch[] {
  return Array.from({ length: n }, (_, i) => ({
    card: String(100 + i),
    time: 1_580_000_000_000 + (from + i) * 1000,
    code: 40,
    type: 'Control' as const,
    modem,
  }));
}

it('uploads (plain and gzip) and reads JSON and CSV pages with X-Total-Count', async () => {
  const c = createTimingClient({ baseUrl, apiKey: ctx.adminKey });
  expect(await c.uploadPunches(batch('TC-1', 3))).toEqual({ received: 3, stored: 3, duplicates: 0, rejected: [] });
  expect(await c.uploadPunches(batch('TC-1', 4), { gzip: true })).toEqual({ received: 4, stored: 1, duplicates: 3, rejected: [] });
  await waitUntilVisible(ctx);
  const page = await c.readPunches({ modem: ['TC-1'] });
  expect(page.total).toBe(4);
  expect(page.punches.map((p) => p.card)).toEqual(['100', '101', '102', '103']);
  const csv = await c.readPunches({ modem: ['TC-1'] }, { format: 'csv', afterId: page.punches[1].id });
  expect(csv.total).toBe(2);
  expect(csv.csv.split('\n')[0]).toBe('id,card,time,code,type,modem,receptionTimeUtc');
  expect(csv.csv.split('\n').filter(Boolean)).toHaveLength(3);
});

it('turns error answers into TimingApiError with the problem body', async () => {
  const anonymous = createTimingClient({ baseUrl });
  await expect(anonymous.uploadPunches(batch('TC-2', 1))).rejects.toBeInstanceOf(TimingApiError);
  await expect(anonymous.readPunches({})).rejects.toMatchObject({ status: 400, problem: { status: 400 } });
});

it('polls by rule 6 across full pages, each punch once', async () => {
  const c = createTimingClient({ baseUrl, apiKey: ctx.adminKey });
  await c.uploadPunches(batch('TC-3', 2500));
  await waitUntilVisible(ctx);
  const got: Punch[] = [];
  const ac = new AbortController();
  const polling = c.poll(
    { modem: ['TC-3'] },
    (ps) => {
      got.push(...ps);
      if (got.length >= 2500) ac.abort();
    },
    { signal: ac.signal, wait: 1 },
  );
  const last = await polling;
  expect(got).toHaveLength(2500);
  expect(new Set(got.map((p) => p.id)).size).toBe(2500);
  expect(last).toBe(got[got.length - 1].id);
});

it('parses Server-Sent Events split at arbitrary points, with comments and multi-line data', async () => {
  const text = 'retry: 1000\n\n: keep-alive\n\nid: 7\nevent: punch\ndata: {"a":\ndata: 1}\n\nid: 8\r\nevent: punch\r\ndata: x\r\n\r\n';
  const bytes = new TextEncoder().encode(text);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      // Cut right after the CR of a CRLF too.
      const cr = text.indexOf('\r') + 1;
      controller.enqueue(bytes.slice(0, cr));
      for (let i = cr; i < bytes.length; i += 5) controller.enqueue(bytes.slice(i, i + 5));
      controller.close();
    },
  });
  const events: { id?: string; event: string; data: string }[] = [];
  const comments: string[] = [];
  await readEventStream(
    body,
    (e) => void events.push(e),
    (c) => comments.push(c),
  );
  expect(events).toEqual([
    { id: '7', event: 'punch', data: '{"a":\n1}' },
    { id: '8', event: 'punch', data: 'x' },
  ]);
  expect(comments).toEqual(['keep-alive']);
});
