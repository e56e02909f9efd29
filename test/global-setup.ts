/**
 * Jest global set-up: when DATABASE_URL is unset, start the embedded PostgreSQL under `.data/test-pg` and
 * export its URL, so `pnpm test` works on a machine without a PostgreSQL server.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { startEmbeddedPostgres } from '@sports-timing/shared/src/embedded';

export default async function globalSetup(): Promise<void> {
  const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!existsSync(chromium) && process.env.CI !== 'true') {
    console.warn(
      `\nBrowser tests (*.browser.test.ts) are skipped: no Chromium at ${chromium}. Install Debian's browser with ` +
        '`sudo apt-get install chromium` (or set CHROMIUM_PATH to a Chromium binary) to run them; in CI (CI=true) they always run.\n',
    );
  }
  if (process.env.DATABASE_URL) return;
  const embedded = await startEmbeddedPostgres({ dir: path.join(__dirname, '../.data/test-pg'), port: Number(process.env.TEST_EMBEDDED_PG_PORT ?? 5439) });
  process.env.DATABASE_URL = embedded.url;
  (globalThis as { __EMBEDDED_PG__?: { stop(): Promise<void> } }).__EMBEDDED_PG__ = embedded;
}
