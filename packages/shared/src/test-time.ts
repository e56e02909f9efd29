/**
 * How long a test may wait, on any machine: every test timeout and every "until this happens" deadline is a
 * base figure (what a quiet two-core machine needs, with room) times `TEST_TIME_SCALE` (default 3, at least 1).
 *
 * A deadline only ends a test that is already failing (the awaited event never came), so a generous scale costs
 * nothing on a passing run; it keeps the suite passing on a contributor's busy laptop (CONTRIBUTING.md "Test").
 * Tests never assert how fast something happened: speed is the benchmark harness's business.
 */
const DEFAULT_SCALE = 3;

/** The factor every base duration is multiplied by (`TEST_TIME_SCALE`, a number ≥ 1; default 3). */
function testTimeScale(): number {
  const raw = Number(process.env.TEST_TIME_SCALE);
  return Number.isFinite(raw) && raw >= 1 ? raw : DEFAULT_SCALE;
}

/** `ms` (a base duration in milliseconds, as needed on a quiet machine) scaled for this machine, in milliseconds. @internal */
export function testTime(ms: number): number {
  return Math.round(ms * testTimeScale());
}

/**
 * Longest wait for a database connection in a test's pool and in every service a test starts, ms (20 s scaled;
 * production waits 5 s, `DATABASE_CONNECT_TIMEOUT_MS`). Longer because on a loaded machine a jest worker's
 * event loop can stay busy (module transforms, hashing) for longer than 5 s scaled, and node-postgres's connect
 * timer then fires before the socket that is already open is read. Like every test deadline it only ends a test
 * that is already failing.
 * @internal
 */
export function testConnectTimeoutMs(): number {
  return testTime(20_000);
}
