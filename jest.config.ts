import { existsSync } from 'node:fs';
import type { Config } from 'jest';
import { testTime } from './packages/shared/src/test-time';

/**
 * Browser tests (`*.browser.test.ts`) need Debian's Chromium. Without it they are left out of a local run
 * (test/global-setup.ts says how to install it); in CI (`CI=true`) they always run, so a missing browser fails.
 */
const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SKIP_BROWSER_TESTS = !existsSync(chromium) && process.env.CI !== 'true';

// One run for the whole workspace: every test talks to a real PostgreSQL (DATABASE_URL, else the embedded
// cluster started by the global set-up), each file in a database of its own.
const config: Config = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/services', '<rootDir>/test', '<rootDir>/bench'],
  testMatch: ['**/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/test/soak/', ...(SKIP_BROWSER_TESTS ? ['\\.browser\\.test\\.ts$'] : [])],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }] },
  globalSetup: '<rootDir>/test/global-setup.ts',
  // Jest's transform cache beside the dependencies, not in /tmp: a run leaves the temporary directory as found.
  cacheDirectory: '<rootDir>/node_modules/.cache/jest',
  setupFiles: ['<rootDir>/test/jest-env.ts'],
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  // A base minute per test, scaled for a busy machine (packages/shared/src/test-time.ts, TEST_TIME_SCALE).
  testTimeout: testTime(60_000),
  maxWorkers: 2,
};

export default config;
