/**
 * Jest global set-up: a temporary directory of the run's own, and, when DATABASE_URL is unset, the embedded
 * PostgreSQL under `.data/test-pg` with its URL exported, so `pnpm test` works on a machine without a
 * PostgreSQL server.
 *
 * `TMPDIR` points at `<temporary directory>/sports-timing-tests-XXXXXX` for the test files and every process
 * they start (jest's workers start after this and inherit it), so global-teardown.ts can list what a test left
 * behind instead of it piling up in /tmp (CONTRIBUTING.md "Tests leave nothing behind").
 */
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '@sports-timing/shared/src/embedded';
import { testNote } from '@sports-timing/shared/src/testing';
import { setRunTmpdir } from './support/run-tmpdir';

export default async function globalSetup(): Promise<void> {
  setRunTmpdir(mkdtempSync(path.join(os.tmpdir(), 'sports-timing-tests-')));
  const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!existsSync(chromium) && process.env.CI !== 'true') {
    testNote(
      `browser tests (*.browser.test.ts) skipped: no Chromium at ${chromium}. Install Debian's browser with ` +
        '`sudo apt-get install chromium` (or set CHROMIUM_PATH to a Chromium binary) to run them; in CI (CI=true) they always run.',
    );
  }
  if (process.env.DATABASE_URL) return;
  const embedded = await startEmbeddedPostgres({ dir: path.join(__dirname, '../.data/test-pg'), port: Number(process.env.TEST_EMBEDDED_PG_PORT ?? 5439) });
  process.env.DATABASE_URL = embedded.url;
  (globalThis as { __EMBEDDED_PG__?: { stop(): Promise<void> } }).__EMBEDDED_PG__ = embedded;
}
