/**
 * Uploads that try to make the timing service work before it knows the caller (RELIABILITY.md "Attacks",
 * docs/decisions.md §5 "Work before authentication"): a 4 MB gzip bomb of nested brackets with a bogus key is
 * answered 401 from its headers alone — the rest of the body is never sent, and the server closes the
 * connection instead of reading it — on the upload fast lane and on the pipeline (a request with `Origin`
 * takes the pipeline). With a valid key the bomb is a 400 (nesting) or 413 (inflated size) in milliseconds.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import { localMs, startTiming, type TimingTestContext } from '../../services/timing/test/helpers';
import { testNote } from '@sports-timing/shared/src/testing';
import { testTime } from '@sports-timing/shared/src/test-time';

jest.setTimeout(testTime(60_000));

let t: TimingTestContext;
let server: Server;
let port: number;
let key: string;

/** One gzip member of 4 MiB of `[`; {@link BOMB} repeats it (gzip allows concatenated members). */
const MEMBER = gzipSync(Buffer.alloc(4 * 1024 * 1024, '['), { level: 9 });
/** A 4 MB gzip body that inflates to gigabytes of nested brackets. */
const BOMB = Buffer.concat(Array.from({ length: Math.ceil((4 * 1000 * 1000) / MEMBER.length) }, () => MEMBER));
/** 8 MiB of nesting in ~8 KB of gzip: inflates within the 10 MiB upload limit, so only the depth check stops it. */
const SMALL_BOMB = gzipSync(Buffer.alloc(8 * 1024 * 1024, '['), { level: 9 });

beforeAll(async () => {
  t = await startTiming();
  key = (await t.createUser('uploader')).key;
  server = t.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await t.close();
});

interface RawAnswer {
  status: number;
  head: string;
  /** ms from sending the headers to the status line. */
  ms: number;
  /** Body bytes this client had written when the answer came. */
  sentBeforeAnswer: number;
  /** Whether the server closed the connection after the answer. */
  closedByServer: boolean;
}

/**
 * POSTs `body` to the upload path on a raw socket: headers, then `firstChunk` bytes of the body, then (when
 * `sendAll`) the rest in 64 KiB pieces while nothing has been answered yet. Resolves when the connection
 * ends or 2 s after the answer.
 */
function rawUpload(headers: Record<string, string>, body: Buffer, opts: { firstChunk: number; sendAll: boolean }): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    let sent = 0;
    let answeredAt = 0;
    let answer: RawAnswer | undefined;
    const started = performance.now();
    const finish = (closedByServer: boolean) => {
      if (!answer) return reject(new Error(`no answer; got ${JSON.stringify(received.slice(0, 200))}`));
      socket.destroy();
      resolve({ ...answer, closedByServer });
    };
    socket.on('error', () => undefined);
    socket.on('data', (d) => {
      received += d.toString('latin1');
      if (!answer && received.includes('\r\n\r\n')) {
        answeredAt = performance.now();
        const head = received.slice(0, received.indexOf('\r\n\r\n')).toLowerCase();
        answer = {
          status: Number(head.slice(9, 12)),
          head,
          ms: answeredAt - started,
          sentBeforeAnswer: sent,
          closedByServer: false,
        };
        setTimeout(() => finish(false), 2000).unref();
      }
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('connect', () => {
      const lines = [
        'POST /api/rest/v1/punches HTTP/1.1',
        'Host: localhost',
        `Content-Length: ${body.length}`,
        ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      ];
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
      socket.write(body.subarray(0, opts.firstChunk));
      sent = opts.firstChunk;
      const more = () => {
        while (opts.sendAll && !answer && sent < body.length && !socket.destroyed) {
          const piece = body.subarray(sent, sent + 65536);
          sent += piece.length;
          if (!socket.write(piece)) return socket.once('drain', more);
        }
      };
      more();
    });
  });
}

const BOGUS = `tk_${'A'.repeat(43)}`;
const gzipJson = { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' };

describe.each([
  ['the fast lane', {}],
  ['the pipeline (a browser request)', { Origin: 'https://results.example.org' }],
])('%s', (_name, extra: Record<string, string>) => {
  test('a 4 MB gzip bomb with a bogus key: 401 from the headers alone, the body never read, the connection closed', async () => {
    expect(BOMB.length).toBeGreaterThanOrEqual(4_000_000);
    const r = await rawUpload({ ...gzipJson, ...extra, apikey: BOGUS }, BOMB, {
      firstChunk: 16 * 1024,
      sendAll: false,
    });
    testNote(`${_name}: 4 MB bomb with a bogus key: ${r.status} in ${r.ms.toFixed(1)} ms after ${r.sentBeforeAnswer} body bytes`);
    expect(r.status).toBe(401);
    expect(r.head).toContain('connection: close');
    // Only the first 16 KiB of 4 MB were ever sent: the answer could not have waited for the body.
    expect(r.sentBeforeAnswer).toBe(16 * 1024);
    expect(r.closedByServer).toBe(true);
  });

  test('without any key: 401 the same way', async () => {
    const r = await rawUpload({ ...gzipJson, ...extra }, BOMB, { firstChunk: 16 * 1024, sendAll: false });
    expect(r.status).toBe(401);
    expect(r.closedByServer).toBe(true);
  });

  test('a valid key with 8 MiB of nested brackets (8 KB of gzip): 400 for the nesting', async () => {
    const r = await rawUpload({ ...gzipJson, ...extra, apikey: key }, SMALL_BOMB, {
      firstChunk: SMALL_BOMB.length,
      sendAll: false,
    });
    testNote(`${_name}: nested-bracket bomb with a valid key: ${r.status} in ${r.ms.toFixed(1)} ms`);
    expect(r.status).toBe(400);
  });

  test('a valid key with the 4 MB bomb: 413 once 10 MiB are inflated (the rest is read off the wire, not inflated)', async () => {
    const r = await rawUpload({ ...gzipJson, ...extra, apikey: key }, BOMB, { firstChunk: 16 * 1024, sendAll: true });
    expect(r.status).toBe(413);
  });

  test('negative control: a gzip batch with the valid key is stored', async () => {
    const batch = Buffer.from(JSON.stringify([{ card: '7', time: localMs(9), code: 31, type: 'Control', modem: `BOMB-${extra.Origin ? 'P' : 'F'}` }]));
    const r = await rawUpload({ ...gzipJson, ...extra, apikey: key }, gzipSync(batch), {
      firstChunk: gzipSync(batch).length,
      sendAll: false,
    });
    expect(r.status).toBe(200);
    expect(r.head).not.toContain('connection: close');
  });
});

test('a key revoked after it uploaded: its next upload stores nothing (401), and the one after that is refused from its headers', async () => {
  // The fast lane keeps keys it found valid (users/key-owner-memo.ts) and reads their bodies before the upload's
  // statement checks the key again: a revoked key costs at most that one body, then it is forgotten.
  const user = await t.createUser('revoked-uploader');
  const batch = (card: string) => Buffer.from(JSON.stringify([{ card, time: localMs(9), code: 31, type: 'Control', modem: 'REV-1' }]));
  const ok = await rawUpload({ 'Content-Type': 'application/json', apikey: user.key }, batch('1'), { firstChunk: batch('1').length, sendAll: false });
  expect(ok.status).toBe(200);
  await t.database.pool.query('update api_keys set revoked_at = now() where user_id = $1', [user.id]);
  const refused = await rawUpload({ 'Content-Type': 'application/json', apikey: user.key }, batch('2'), { firstChunk: batch('2').length, sendAll: false });
  expect(refused.status).toBe(401);
  const bomb = await rawUpload({ ...gzipJson, apikey: user.key }, BOMB, { firstChunk: 16 * 1024, sendAll: false });
  expect(bomb.status).toBe(401);
  expect(bomb.sentBeforeAnswer).toBe(16 * 1024);
  expect(bomb.closedByServer).toBe(true);
  const { rows } = await t.database.pool.query<{ n: number }>(`select count(*)::int as n from punches where modem = 'REV-1'`);
  expect(rows[0].n).toBe(1);
});

test('six bogus-key bombs sent in full at once: none is inflated and memory stays flat', async () => {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  delay.enable();
  const answers = await Promise.all(Array.from({ length: 6 }, () => rawUpload({ ...gzipJson, apikey: BOGUS }, BOMB, { firstChunk: 16 * 1024, sendAll: true })));
  delay.disable();
  const rssGrowth = process.memoryUsage().rss - rssBefore;
  testNote(
    `6 bogus-key 4 MB bombs: ${answers.map((a) => `${a.status} in ${a.ms.toFixed(1)} ms`).join(', ')}; event-loop delay max ${(delay.max / 1e6).toFixed(1)} ms; RSS +${(rssGrowth / 1e6).toFixed(1)} MB`,
  );
  expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 401, 401, 401]);
  // The bodies together would inflate to gigabytes; none of it is read.
  expect(rssGrowth).toBeLessThan(100e6);
});
