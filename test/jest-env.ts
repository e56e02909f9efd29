/**
 * Environment of every test file (jest `setupFiles`): password hashes at a test-only cost
 * (`PASSWORD_HASH_COST_LN`, see services/ordering/src/identity/passwords.ts) so that the suites do not spend
 * most of their time in 128 MiB scrypt hashes. Production refuses this setting.
 *
 * The wait for a pooled database connection of every service process a test starts scales with
 * `TEST_TIME_SCALE` like the tests' own deadlines (CONTRIBUTING.md "Tests pass on a busy machine"): on a loaded
 * machine opening a session can outlast the production default.
 */
import { testConnectTimeoutMs } from '@sports-timing/shared/src/test-time';

process.env.PASSWORD_HASH_COST_LN ??= '10';
process.env.DATABASE_CONNECT_TIMEOUT_MS ??= String(testConnectTimeoutMs());
