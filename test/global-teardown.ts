/**
 * Jest global teardown: stops the embedded PostgreSQL if the set-up started one, then reports what the run left
 * in its temporary directory (global-setup.ts) and removes it. Anything left is a test or service that does not
 * clean up: listed locally, and a failure of the run in CI (`CI=true`).
 */
import { endRunTmpdir } from './support/run-tmpdir';

export default async function globalTeardown(): Promise<void> {
  const embedded = (globalThis as { __EMBEDDED_PG__?: { stop(): Promise<void> } }).__EMBEDDED_PG__;
  await embedded?.stop();
  endRunTmpdir();
}
