/**
 * `pnpm restore` refuses what is not a backup before touching `DATA_DIR` (docs/backup.md "How a restore
 * works"): a directory without a manifest, and a manifest naming a path outside the clusters and files a backup
 * writes (it would make the restore copy outside `DATA_DIR`). The whole backup and restore of a running server
 * is walked by the README test (`test/readme-walkthroughs.test.ts`, "a copy before day 2").
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { testTime } from '@sports-timing/shared/src/test-time';

const ROOT = path.join(__dirname, '..');

let work: string;
beforeEach(() => {
  work = mkdtempSync(path.join(os.tmpdir(), 'backup-refusals-'));
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

function restore(dir: string): { status: number | null; output: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'packages/launcher/src/backup.ts'), 'restore', dir], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: path.join(work, 'data') },
    encoding: 'utf8',
    timeout: testTime(60_000),
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

test('a directory without a manifest is no backup: one line, exit 1, DATA_DIR untouched', () => {
  mkdirSync(path.join(work, 'empty'));
  const r = restore(path.join(work, 'empty'));
  expect(r.output.trim()).toMatch(/^\[restore\] .*empty is not a backup \(no backup\.json\)/);
  expect(r.status).toBe(1);
  expect(existsSync(path.join(work, 'data'))).toBe(false);
});

test('a manifest naming a path outside the clusters and files of a backup is refused before anything is copied', () => {
  const bad = path.join(work, 'bad');
  mkdirSync(path.join(bad, 'escape'), { recursive: true });
  writeFileSync(path.join(bad, 'backup.json'), JSON.stringify({ createdAt: '2026-12-02T00:00:00Z', clusters: [{ name: '../escape' }], files: [] }));
  const r = restore(bad);
  expect(r.output.trim()).toMatch(/^\[restore\] .*backup\.json does not describe a backup/);
  expect(r.status).toBe(1);
  // Nothing was written beside DATA_DIR, and DATA_DIR holds at most the lock it released.
  expect(readdirSync(work).sort()).toEqual(['bad']);
});
