/** Jest global teardown: stops the embedded PostgreSQL if the set-up started one. */
export default async function globalTeardown(): Promise<void> {
  const embedded = (globalThis as { __EMBEDDED_PG__?: { stop(): Promise<void> } }).__EMBEDDED_PG__;
  await embedded?.stop();
}
