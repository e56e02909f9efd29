/**
 * Jest global set-up: when DATABASE_URL is unset, start the embedded PostgreSQL under `.data/test-pg` and
 * export its URL, so `pnpm test` works on a machine without a PostgreSQL server.
 */
import path from 'node:path';
import { startEmbeddedPostgres } from '@sports-timing/shared/src/embedded';

export default async function globalSetup(): Promise<void> {
  if (process.env.DATABASE_URL) return;
  const embedded = await startEmbeddedPostgres({ dir: path.join(__dirname, '../.data/test-pg'), port: Number(process.env.TEST_EMBEDDED_PG_PORT ?? 5439) });
  process.env.DATABASE_URL = embedded.url;
  (globalThis as { __EMBEDDED_PG__?: { stop(): Promise<void> } }).__EMBEDDED_PG__ = embedded;
}
