/**
 * `LOG_FORMAT=pretty` (README "Configuration"): the timing service, started as `pnpm start` starts it at a
 * terminal, writes one line per request — method, path, status and milliseconds — and every other entry on one
 * line too (no continuation lines of nested objects).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './support/service-process';
import { testTime } from '@sports-timing/shared/src/test-time';

const GOOD_DB = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
// eslint-disable-next-line no-control-regex -- the colour codes pino-pretty writes
const ANSI = /\u001b\[[0-9;]*m/g;

it(
  'one line per request in pretty mode, and one line per entry',
  async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pretty-logs-'));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: GOOD_DB,
      TIMING_PORT: '0',
      DEMO_DATA: 'false',
      DATA_DIR: dataDir,
      LOG_FORMAT: 'pretty',
      LOG_LEVEL: 'info',
    };
    for (const name of ['HTTP_LOG', 'APP_ENV', 'JEST_WORKER_ID']) delete env[name];
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'services/timing/src/server.ts')], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      const port = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`not listening within 60 s:\n${out}`)), 60_000);
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          // Found in any layout, so that a format of several lines per entry fails on the counts below, not here.
          const m = /timing service listening[\s\S]*?port"?:\s*(\d+)/.exec(out.replace(ANSI, ''));
          if (m) {
            clearTimeout(timer);
            resolve(Number(m[1]));
          }
        });
      });
      const base = `http://127.0.0.1:${port}`;
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      expect((await fetch(`${base}/api/rest/v1/punches?eventId=999999999`)).status).toBe(404);
      expect((await fetch(`${base}/no-such-page`)).status).toBe(404);
      // The line of the last request is written when its answer ends; give the pipe a moment.
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
    const lines = out
      .replace(ANSI, '')
      .split('\n')
      .filter((l) => l.trim() !== '');
    expect(lines.filter((l) => l.includes('/healthz'))).toEqual([
      expect.stringMatching(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO \(timing\): GET \/healthz 200 \d+ ms$/),
    ]);
    expect(lines.filter((l) => l.includes('/api/rest/v1/punches'))).toEqual([
      expect.stringMatching(/: GET \/api\/rest\/v1\/punches\?eventId=999999999 404 \d+ ms$/),
    ]);
    expect(lines.filter((l) => l.includes('/no-such-page'))).toEqual([expect.stringMatching(/: GET \/no-such-page 404 \d+ ms$/)]);
    // Every line is an entry of its own: a clock time, a level, the service.
    for (const line of lines) expect(line).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] [A-Z]+ \(timing\): /);
  },
  testTime(90_000),
);
