// Soak: 64 workers × 10,000 random card-number reservations (640,000 claims in the 1,000,000-number
// SI-Card 9 range, so the range gets crowded and the redraw path is exercised). About 6 minutes on two idle
// cores, 45 on loaded ones (CI runs 64 × 50).
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx jest test/soak/card-reservations.soak.ts --testPathIgnorePatterns=/node_modules/ --testMatch='**/soak/*.soak.ts' -t reservations
process.env.CARD_RESERVATIONS ??= '10000';
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('../faults/concurrency.test');
