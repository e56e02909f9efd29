/**
 * The CLI's answers to options and addresses that cannot work (one line naming the option or variable, exit 1),
 * its bounded reconnects (a message and exit 1 when it gives up), the examples in every `--help`, and the
 * numeric modem serials of `replay --modem-base` (the repository's fixture, as MeOS's modem mode needs them).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readPunchFile } from '../src/punch-file';
import { testTime } from '@sports-timing/shared/src/test-time';

const BIN = path.join(__dirname, '../bin/punches.cjs');
const FIXTURE = path.join(__dirname, '../../../test/live/fixtures/venotte2020-1900-1905.csv');

/** Runs the CLI to its end: exit code and output. */
function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<{ code: number | null; out: string; err: string; ms: number }> {
  const started = Date.now();
  const fullEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const name of ['TIMING_URL', 'ORDERING_URL', 'TIMING_API_KEY']) if (!(name in env)) delete fullEnv[name];
  const child = spawn(process.execPath, [BIN, ...args], { env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out, err, ms: Date.now() - started })));
}

/** A port with nothing listening on it (taken, then released). */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

describe('punches CLI options', () => {
  it('a port variable that is no port: one line naming it, exit 1, no reconnect loop', async () => {
    const r = await cli(['tail', '--event', '1'], { TIMING_PORT: 'abc' });
    expect(r.code).toBe(1);
    expect(r.err.trim()).toBe('error: TIMING_PORT: not a port (1-65535): abc');
    expect(r.err).not.toMatch(/reconnecting|retrying/);
  });

  it('an address that is no http(s) URL, from --url or TIMING_URL / ORDERING_URL: named, exit 1', async () => {
    expect((await cli(['tail', '--event', '1', '--url', 'localhost:8081'])).err).toMatch(/^error: --url: not an http\(s\) address: localhost:8081$/m);
    const r = await cli(['replay', FIXTURE, '--modem-base', '3000000', '--key', 'tk_x'], { TIMING_URL: 'not a url' });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^error: TIMING_URL: not an address: not a url/m);
    const b = await cli(['battery', '8621484'], { ORDERING_PORT: '70000' });
    expect(b.code).toBe(1);
    expect(b.err).toMatch(/^error: ORDERING_PORT: not a port \(1-65535\): 70000$/m);
  });

  it('options that cannot work: an event id that is none, a bad --max, both modem options', async () => {
    expect((await cli(['tail', '--event', 'one'])).err).toMatch(/--event: not an event id/);
    const max = await cli(['tail', '--event', '1', '--max', '0']);
    expect(max.code).toBe(1);
    expect(max.err).toMatch(/--max <n>' argument '0' is invalid/);
    expect((await cli(['replay', FIXTURE, '--modem-base', '1', '--modem-prefix', 'X', '--key', 'tk_x'])).err).toMatch(/not both/);
    const noModems = await cli(['replay', FIXTURE, '--key', 'tk_x']);
    expect(noModems.code).toBe(1);
    expect(noModems.err).toMatch(/no modem column; give --modem-base/);
  });

  it(
    'tail gives up after --give-up-after seconds of an unreachable service, saying why, exit 1',
    async () => {
      const port = await closedPort();
      const r = await cli(['tail', '--event', '1', '--url', `http://127.0.0.1:${port}`, '--give-up-after', '2']);
      expect(r.code).toBe(1);
      // It never connected: no line speaks of an interrupted stream, each names the address.
      expect(r.err).not.toMatch(/interrupted/);
      expect(r.err).toMatch(new RegExp(`^tail: not connected to http://127\\.0\\.0\\.1:${port} yet \\(.*ECONNREFUSED.*\\), retrying$`, 'm'));
      expect(r.err).toMatch(
        new RegExp(
          `error: tail: gave up after \\d+ s: never connected to http://127\\.0\\.0\\.1:${port} \\(last: .*ECONNREFUSED 127\\.0\\.0\\.1:${port}.*\\); check --url`,
        ),
      );
    },
    testTime(20_000),
  );

  it('replay names the refused connection and exits 1', async () => {
    const port = await closedPort();
    const r = await cli(['replay', FIXTURE, '--modem-base', '3000000', '--key', 'tk_x', '--url', `http://127.0.0.1:${port}`]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(new RegExp(`^error: .*ECONNREFUSED 127\\.0\\.0\\.1:${port}`, 'm'));
  });

  it('replay names a row with the wrong number of columns: its line and the expected columns, exit 1', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'replay-columns-'));
    try {
      const file = path.join(dir, 'short.csv');
      writeFileSync(file, 'card,code,time,type\n8000001,53,2020-02-01 18:59:00.000,Control\n8000002,54\n');
      const r = await cli(['replay', file, '--modem-base', '3000000', '--list-modems']);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(
        new RegExp(`^error: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3: 2 columns, expected 4 \\(card,code,time,type\\): 8000002,54$`, 'm'),
      );
      expect(r.err).not.toMatch(/unknown type undefined/);
      // Negative control: the same file without the short row is read.
      writeFileSync(file, 'card,code,time,type\n8000001,53,2020-02-01 18:59:00.000,Control\n');
      expect((await cli(['replay', file, '--modem-base', '3000000', '--list-modems'])).out.trim()).toBe('["3000053"]');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('every --help has examples', async () => {
    for (const args of [['--help'], ['tail', '--help'], ['replay', '--help'], ['battery', '--help']]) {
      const r = await cli(args);
      expect(r.code).toBe(0);
      expect(`${r.out}${r.err}`).toMatch(/\nExamples:\n {2}pnpm punches /);
    }
  });

  it('--modem-base gives the fixture numeric serials, base + control code, and --list-modems prints them as JSON', async () => {
    const punches = readPunchFile(FIXTURE, { modemBase: 3_000_000 });
    expect(punches).toHaveLength(475);
    for (const p of punches) expect(p.modem).toBe(String(3_000_000 + p.code));
    expect(punches.filter((p) => p.type === 'Start').every((p) => p.modem === '3000001')).toBe(true);
    expect(punches.filter((p) => p.type === 'Finish').every((p) => p.modem === '3000002')).toBe(true);
    const r = await cli(['replay', FIXTURE, '--modem-base', '3000000', '--list-modems']);
    expect(r.code).toBe(0);
    const listed = JSON.parse(r.out) as string[];
    expect(listed).toEqual([...new Set(punches.map((p) => p.modem))].sort((a, b) => Number(a) - Number(b)));
    expect(listed.every((m) => /^[1-9]\d*$/.test(m))).toBe(true);
  });
});
