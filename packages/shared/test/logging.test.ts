/**
 * Log format: readable lines for a person at a terminal in development, JSON for collectors and always in
 * production.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { logFormat } from '../src/logging';

describe('log format', () => {
  it('is pretty only when asked for and never in production', () => {
    expect(logFormat({})).toBe('json');
    expect(logFormat({ LOG_FORMAT: 'pretty' })).toBe('pretty');
    expect(logFormat({ LOG_FORMAT: 'pretty', APP_ENV: 'production' })).toBe('json');
    expect(logFormat({ LOG_FORMAT: 'json' })).toBe('json');
  });

  it('writes one readable line with a clock time in pretty mode, one JSON object otherwise', () => {
    const script = `require('${path.join(__dirname, '../src/logging.ts')}').createLogger('demo', 'info').info({ port: 8081 }, 'service listening');`;
    const run = (env: Record<string, string>) =>
      spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
        env: { ...process.env, JEST_WORKER_ID: '', ...env },
        encoding: 'utf8',
        cwd: path.join(__dirname, '../../..'),
      }).stdout;
    const pretty = run({ LOG_FORMAT: 'pretty' });
    expect(pretty).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] .*INFO.*service listening/);
    expect(pretty).not.toMatch(/^\{/);
    const json = JSON.parse(run({ LOG_FORMAT: 'json' }).trim()) as { msg: string; time: number; port: number };
    expect(json).toMatchObject({ msg: 'service listening', port: 8081 });
    expect(Number.isInteger(json.time)).toBe(true);
  });
});
