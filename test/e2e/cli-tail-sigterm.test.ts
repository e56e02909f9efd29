/**
 * `punches tail` as a real process stops cleanly on SIGTERM while it follows a live stream: exit code 0
 * (not the 130 of the forced exit after 10 s) within 5 s, with its last position reported.
 * Background: against the timing service running as its own process, a tail once stayed alive after SIGTERM
 * (its waiting SSE body read never ended); the timing client now cancels the reader on abort. That hang did
 * not reproduce against this in-process app, so this test guards the clean exit path, not the hang itself
 * (reproduced by hand: before the fix exit 130 after 3 s, after it exit 0 in 26 ms).
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startTiming, type TimingTestContext } from '../../services/timing/test/helpers';
import { testTime } from '@sports-timing/shared/src/test-time';

jest.setTimeout(testTime(60_000));

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

test('SIGTERM ends a following tail at once with exit code 0', async () => {
  const child = spawn(
    process.execPath,
    [path.join(__dirname, '../../packages/cli/bin/punches.cjs'), 'tail', '--modem', 'SIGTERM-1', '--url', baseUrl, '--key', ctx.adminKey],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + testTime(30_000);
  while (!/following live \(SSE\)/.test(err) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(err).toMatch(/following live \(SSE\)/);
  // Punches arrive on the stream, then it settles into a waiting read; then stop it.
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`${baseUrl}/api/rest/v1/punches`, {
      method: 'POST',
      headers: { apikey: ctx.adminKey, 'Content-Type': 'application/json' },
      body: JSON.stringify([{ card: String(700 + i), time: 1_600_000_000_000 + i * 1000, code: 31, type: 'Control', modem: 'SIGTERM-1' }]),
    });
    expect(res.status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
  }
  while (out.split('\n').filter(Boolean).length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 500));
  child.kill('SIGTERM');
  const code = await exited;
  // Exit code 0 (not 130) rules out the forced exit.
  expect(code).toBe(0);
  expect(err).toMatch(/tail: stopped after id [1-9]\d*/);
});
