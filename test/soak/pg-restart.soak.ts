// Soak: the PostgreSQL-restart fault test at full size — 3,000 orders and 400 punch batches (10,000
// punches) across a fast and an immediate restart of a private server on port 5680. About 2 minutes.
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx jest test/soak/pg-restart.soak.ts --testPathIgnorePatterns=/node_modules/ --testMatch='**/soak/*.soak.ts'
process.env.FAULT_ORDERS ??= '3000';
process.env.FAULT_PUNCH_BATCHES ??= '400';
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('../faults/pg-restart.test');
