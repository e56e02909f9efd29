// Long fuzz run: the CI fuzz (`test/fuzz/spec-fuzz.test.ts`) with many more requests per
// operation and a fresh seed each run. Usage (needs a PostgreSQL, e.g. the machine's):
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx jest test/soak/fuzz.soak.ts --testPathIgnorePatterns=/node_modules/ --testMatch='**/soak/*.soak.ts'
// It reuses the CI test body; only the run count differs.
process.env.FUZZ_RUNS ??= '200';
process.env.FUZZ_SEED ??= String(Date.now() % 1_000_000);
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('../fuzz/spec-fuzz.test');
