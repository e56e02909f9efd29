/**
 * The `punches` CLI as organisers run it (child processes of bin/punches.cjs) against a real timing app on
 * port 0 with its LISTEN session, on real PostgreSQL: a replay at high speed while a tail appends CSV, the
 * tail killed mid-way and restarted on the same file; every replayed punch ends up in the file exactly once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { main } from '@sports-timing/cli/src/main';
import { readPunchFile } from '@sports-timing/cli/src/punch-file';
import { createLogger } from '@sports-timing/shared';
import { createTimingClient } from '@sports-timing/timing-client';
import { createApp } from '../../services/timing/src/app';
import type { LiveHub } from '../../services/timing/src/live/hub';
import { composeTiming } from '../../services/timing/src/composition';
import { startPunchListener, type PunchListener } from '../../services/timing/src/live/listener';
import { startTiming, type TimingTestContext } from '../../services/timing/test/helpers';
import { testTime } from '@sports-timing/shared/src/test-time';

const BIN = path.join(__dirname, '../../packages/cli/bin/punches.cjs');
const CODES = [31, 32, 33, 34, 35];
const PREFIX = 'RH-';

let ctx: TimingTestContext;
let hub: LiveHub;
let listener: PunchListener;
let server: http.Server;
let url: string;
let dir: string;

beforeAll(async () => {
  ctx = await startTiming();
  const logger = createLogger('cli-test');
  const composed = composeTiming({ database: ctx.database, logger });
  hub = composed.live;
  listener = startPunchListener(ctx.database.url, composed, logger);
  await listener.ready;
  server = http.createServer(createApp(composed));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = mkdtempSync(path.join(os.tmpdir(), 'punches-cli-'));
});
afterAll(async () => {
  hub?.close();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await listener?.stop();
  await ctx?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A child process of the CLI with its collected output. */
interface Run {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exit: Promise<number | null>;
}

function run(args: string[]): Run {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, out: () => out, err: () => err, exit };
}

async function until(cond: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + testTime(timeoutMs);
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function csvIds(file: string): number[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => /^\d+,/.test(l))
    .map((l) => Number(l.split(',')[0]));
}

/** A demo-format file (`card,code,time,type`): 60 punches over 30 event minutes, plus a start and a finish. */
function writeDemoFile(file: string): void {
  const rows = ['card,code,time,type', '7000001,,2020-02-01T18:00:00,Start'];
  for (let i = 0; i < 60; i++) {
    const t = new Date(Date.UTC(2020, 1, 1, 18, 0, 30) + i * 30_000).toISOString().slice(0, 19);
    rows.push(`${7000001 + (i % 6)},${CODES[i % CODES.length]},${t},Control`);
  }
  rows.push('7000001,,2020-02-01T18:31:00,Finish');
  writeFileSync(file, `${rows.join('\n')}\n`);
}

it('replays a file at high speed while a restarted tail writes every punch to its CSV exactly once', async () => {
  const punchFile = path.join(dir, 'rehearsal.csv');
  writeDemoFile(punchFile);
  const expected = readPunchFile(punchFile, { modemPrefix: PREFIX });
  expect(expected).toHaveLength(62);
  const modems = [...new Set(expected.map((p) => p.modem))];
  expect(modems.sort()).toEqual([...CODES.map((c) => `${PREFIX}${c}`), `${PREFIX}FINISH`, `${PREFIX}START`].sort());

  const admin = createTimingClient({ baseUrl: url, apiKey: ctx.adminKey });
  const eventId = (await admin.api.POST('/api/rest/v1/events', { body: { name: 'rehearsal', public: false, modems } })).data!.id;
  const out = path.join(dir, 'tail.csv');
  const tailArgs = ['tail', '--event', String(eventId), '--url', url, '--key', ctx.adminKey, '--csv', out];

  const tail1 = run(tailArgs);
  await until(() => tail1.err().includes('following live (SSE)'), 'tail 1 to connect');

  // 31 event minutes at 900× ≈ 2 s of replay.
  const replay = run(['replay', punchFile, '--modem-prefix', PREFIX, '--speed', '900', '--url', url, '--key', ctx.adminKey]);
  await until(() => csvIds(out).length >= 10, 'the first rows in the tail file');
  tail1.child.kill('SIGKILL');
  await tail1.exit;
  const afterCrash = csvIds(out).length;

  const tail2 = run(tailArgs);
  expect(await replay.exit).toBe(0);
  expect(replay.out()).toContain('sent 62, stored 62, duplicates 0, rejected 0');
  expect(replay.err()).toMatch(/replay: 62\/62 \(100\.0%\)/);
  await until(() => csvIds(out).length >= expected.length, 'all punches in the tail file');
  await new Promise((r) => setTimeout(r, 300));

  tail2.child.kill('SIGTERM');
  expect(await tail2.exit).toBe(0);
  expect(tail2.err()).toMatch(/tail: resuming after id \d+/);
  expect(afterCrash).toBeLessThan(expected.length);

  const ids = csvIds(out);
  expect(ids).toHaveLength(expected.length);
  expect(new Set(ids).size).toBe(ids.length);
  const { rows } = await ctx.database.pool.query<{ id: string }>('select id from punches where modem = any($1) order by id', [modems]);
  expect(ids).toEqual(rows.map((r) => Number(r.id)));
  const text = readFileSync(out, 'utf8');
  expect(text.startsWith('id,card,time,code,type,modem,receptionTimeUtc\n')).toBe(true);
  expect(text.match(/^id,/gm)).toHaveLength(1);
  // The file's rows are the punches of the replay, in time order of upload.
  const firstRow = text.split('\n')[1].split(',');
  expect(firstRow.slice(1, 6)).toEqual(['7000001', String(Date.UTC(2020, 1, 1, 18)), '1', 'Start', `${PREFIX}START`]);
});

it('prints punches (long-poll mode, in-process), resumes from a state file and replays the download CSV format', async () => {
  const modem = 'DL-1';
  const download = path.join(dir, 'download.csv');
  writeFileSync(
    download,
    // The third row's card is above 24 bits: the service stores the other two and reports it.
    [
      'id,card,time,code,type,modem,receptionTimeUtc',
      `5,123,${Date.UTC(2020, 1, 1, 10)},40,Control,${modem},0`,
      `9,124,${Date.UTC(2020, 1, 1, 10, 0, 1)},40,Control,${modem},0`,
      `11,16777216,${Date.UTC(2020, 1, 1, 10, 0, 1)},40,Control,${modem},0`,
      '',
    ].join('\n'),
  );
  const state = path.join(dir, 'state.json');
  const lines: string[] = [];
  const status: string[] = [];
  const ac = new AbortController();
  const tailing = main(['node', 'punches', 'tail', '--modem', modem, '--url', url, '--key', ctx.adminKey, '--poll', '--state', state], {
    out: (l) => lines.push(l),
    err: (l) => status.push(l),
    signal: ac.signal,
  });
  await until(() => status.some((s) => s.includes('long-poll')), 'tail to start');
  const replayOut: string[] = [];
  const replayErr: string[] = [];
  expect(
    await main(['node', 'punches', 'replay', download, '--speed', '1000', '--url', url, '--key', ctx.adminKey], {
      out: (l) => replayOut.push(l),
      err: (l) => replayErr.push(l),
    }),
  ).toBe(1);
  expect(replayOut).toEqual(['sent 3, stored 2, duplicates 0, rejected 1']);
  expect(replayErr).toContain(
    'rejected: card 16777216 code 40 Control modem DL-1 at 2020-02-01 10:00:01.000: card: must be at most 16777215: no SPORTident card carries a larger number',
  );
  await until(() => lines.length === 2, 'two printed punches');
  expect(lines[0]).toMatch(/^\d+\t123\t2020-02-01 10:00:00\.000\t40\tControl\tDL-1$/);
  ac.abort();
  expect(await tailing).toBe(0);
  const lastId = (JSON.parse(readFileSync(state, 'utf8')) as { lastId: number }).lastId;
  expect(lastId).toBe(Number(lines[1].split('\t')[0]));

  // Restarted on the state file: nothing is printed twice, the next upload is.
  await admin().uploadPunches([{ card: '125', time: Date.UTC(2020, 1, 1, 10, 0, 2), code: 40, type: 'Control', modem }]);
  const more: string[] = [];
  const ac2 = new AbortController();
  const again = main(['node', 'punches', 'tail', '--modem', modem, '--url', url, '--key', ctx.adminKey, '--state', state], {
    out: (l) => more.push(l),
    err: () => undefined,
    signal: ac2.signal,
  });
  await until(() => more.length === 1, 'the new punch');
  await new Promise((r) => setTimeout(r, 200));
  ac2.abort();
  expect(await again).toBe(0);
  expect(more).toHaveLength(1);
  expect(more[0]).toContain('\t125\t');
});

it('replays a rehearsal now: a card punching one control twice stays two punches when they go out in one batch', async () => {
  const modem = 'NOW-1';
  const file = path.join(dir, 'twice.csv');
  // One second apart at 1000×: both are due within the first tick, so they leave in one batch.
  writeFileSync(
    file,
    ['card,time,code,type,modem', `126,${Date.UTC(2020, 1, 1, 10)},40,Control,${modem}`, `126,${Date.UTC(2020, 1, 1, 10, 0, 1)},40,Control,${modem}`, ''].join(
      '\n',
    ),
  );
  const out: string[] = [];
  expect(
    await main(['node', 'punches', 'replay', file, '--now', '--speed', '1000', '--url', url, '--key', ctx.adminKey], {
      out: (l) => out.push(l),
      err: () => undefined,
    }),
  ).toBe(0);
  expect(out).toEqual(['sent 2, stored 2, duplicates 0, rejected 0']);
  const { punches } = await admin().readPunches({ modem: [modem] });
  expect(new Set(punches.map((p) => p.time)).size).toBe(2);
});

it('fails clearly on bad usage and access errors', async () => {
  const err: string[] = [];
  expect(await main(['node', 'punches', 'tail', '--url', url], { out: () => undefined, err: (l) => err.push(l) })).toBe(1);
  expect(err.join('\n')).toContain('give --event or --modem');
  const priv = (await admin().api.POST('/api/rest/v1/events', { body: { name: 'private', public: false, modems: ['PV-1'] } })).data!.id;
  err.length = 0;
  expect(await main(['node', 'punches', 'tail', '--event', String(priv), '--url', url], { out: () => undefined, err: (l) => err.push(l) })).toBe(1);
  // A private event answers as a missing one without its owner's key.
  expect(err.join('\n')).toContain('404');
  expect(err.join('\n')).toContain('A private event needs an API key of its owner');
});

function admin() {
  return createTimingClient({ baseUrl: url, apiKey: ctx.adminKey });
}
