/**
 * The test run's own temporary directory (test/global-setup.ts, test/global-teardown.ts): `TMPDIR` points there
 * during the run, and at the end every entry left in it is reported by name and size, then the directory removed.
 */
import { chmodSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { testNote } from '@sports-timing/shared/src/testing';

/**
 * Entries tools keep for the length of a run and that go with the directory: the compile caches of tsx
 * (`tsx-<uid>`) and of pnpm (`v8-compile-cache-<uid>`), shared by the processes the tests start.
 */
const TOOL_CACHES = [/^tsx-\d+$/, /^v8-compile-cache-\d+$/];

interface RunTmpdir {
  dir: string;
  /** `TMPDIR` before the run (undefined: unset). */
  previous: string | undefined;
}

const KEY = '__RUN_TMPDIR__';
const holder = globalThis as { [KEY]?: RunTmpdir };

/** Points `TMPDIR` (and with it `os.tmpdir()`) at `dir` for this process and every process started after. */
export function setRunTmpdir(dir: string): void {
  // Open like /tmp (sticky, everyone may write): embedded PostgreSQL run as root hands initdb, which runs as the
  // user postgres, a password file in the temporary directory.
  chmodSync(dir, 0o1777);
  holder[KEY] = { dir, previous: process.env.TMPDIR };
  process.env.TMPDIR = dir;
}

/** Bytes under `p` (files and directories, not following links). */
function sizeOf(p: string): number {
  const st = statSync(p, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.size;
  return readdirSync(p).reduce((sum, name) => sum + sizeOf(path.join(p, name)), 0);
}

/**
 * Lists what the run left (besides {@link TOOL_CACHES}), removes the directory and restores `TMPDIR`. Throws
 * in CI (`CI=true`) when something was left, so the run fails; prints the list otherwise.
 */
export function endRunTmpdir(): void {
  const run = holder[KEY];
  if (!run) return;
  const left = readdirSync(run.dir)
    .filter((name) => !TOOL_CACHES.some((re) => re.test(name)))
    .map((name) => `${name} (${Math.ceil(sizeOf(path.join(run.dir, name)) / 1024)} KiB)`);
  rmSync(run.dir, { recursive: true, force: true });
  if (run.previous === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = run.previous;
  delete holder[KEY];
  if (left.length === 0) return;
  const message = `the tests left ${left.length} entr${left.length === 1 ? 'y' : 'ies'} in the temporary directory (removed now): ${left.join(', ')}`;
  if (process.env.CI === 'true') throw new Error(message);
  testNote(message);
}
