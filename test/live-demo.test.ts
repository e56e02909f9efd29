/**
 * `DEMO_LIVE=<speed> pnpm start` (README "Configuration"): the demo event replayed live, shifted to now. The stack
 * runs on a fresh data directory and free ports; the live replay's event must fill with punches stamped with the
 * local time they were sent, its modems numeric, and a stop must still be clean. A bad value stops the launcher
 * with one line naming the variable.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { testTime } from '@sports-timing/shared/src/test-time';
import { freePorts } from '@sports-timing/shared/src/testing';

const root = path.join(__dirname, '..');

/** The local wall-clock time now, as the API's local-time fields count it. */
function localNow(): number {
  const now = new Date();
  return now.getTime() - now.getTimezoneOffset() * 60_000;
}

it('DEMO_LIVE=abc: one line naming the variable, exit 1, nothing started', () => {
  const r = spawnSync('pnpm', ['start'], {
    cwd: root,
    env: { ...process.env, DEMO_LIVE: 'abc', COREPACK_ENABLE_DOWNLOAD_PROMPT: '0' },
    encoding: 'utf8',
    timeout: testTime(60_000),
  });
  expect(r.status).toBe(1);
  expect(`${r.stdout}${r.stderr}`).toMatch(/^\[start\] DEMO_LIVE: not a replay speed \(a positive number, 1 = real pace\): abc$/m);
  expect(r.stdout).not.toMatch(/embedded PostgreSQL/);
});

it(
  'DEMO_LIVE=600: the live replay event fills with punches of now, and the stack still stops cleanly',
  async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'live-demo-'));
    const [pg, ordering, timing, erp, payment] = await freePorts(5);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATA_DIR: dataDir,
      EMBEDDED_PG_PORT: String(pg),
      ORDERING_PORT: String(ordering),
      TIMING_PORT: String(timing),
      ERP_SIMULATOR_PORT: String(erp),
      PAYMENT_SIMULATOR_PORT: String(payment),
      DEMO_LIVE: '600',
      COREPACK_ENABLE_DOWNLOAD_PROMPT: '0',
    };
    delete env.DATABASE_URL;
    const child = spawn('pnpm', ['start'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const base = `http://127.0.0.1:${timing}`;
      let event: { id: number; modems: string[]; from: number } | undefined;
      let total = 0;
      const deadline = Date.now() + testTime(150_000);
      while (Date.now() < deadline && total < 100) {
        await new Promise((r) => setTimeout(r, 1000));
        try {
          const events = (await (await fetch(`${base}/api/rest/v1/events`)).json()) as {
            id: number;
            name: string;
            modems: string[];
            from: number;
          }[];
          event = events.find((e) => e.name === 'VeNotte 2020 (live replay)');
          if (event) total = Number((await fetch(`${base}/api/rest/v1/punches?eventId=${event.id}`, { method: 'HEAD' })).headers.get('x-total-count'));
        } catch {
          // not up yet
        }
      }
      expect(output).toMatch(new RegExp(`DEMO_LIVE=600: replaying VeNotte 2020 now at 600x; live page ${base}/events/\\d+/live`));
      expect(event).toBeDefined();
      expect(total).toBeGreaterThanOrEqual(100);
      expect(event!.modems.every((m) => /^212\d{4}$/.test(m))).toBe(true);
      const punches = (await (await fetch(`${base}/api/rest/v1/punches?eventId=${event!.id}`)).json()) as {
        time: number;
      }[];
      // Stamped with the local time they were sent: within the last few minutes, none in the future.
      for (const p of punches) {
        expect(p.time).toBeGreaterThan(localNow() - 10 * 60_000);
        expect(p.time).toBeLessThanOrEqual(localNow() + 1000);
      }
      expect(event!.from).toBeLessThanOrEqual(Math.min(...punches.map((p) => p.time)));
    } finally {
      child.kill('SIGTERM');
      const code = await exited;
      rmSync(dataDir, { recursive: true, force: true });
      expect(code).toBe(0);
    }
  },
  testTime(200_000),
);
