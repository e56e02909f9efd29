/**
 * The page statements of punches.repository.ts as checked in under src/punches/sql (docs/database.md
 * "What the tests check"): rendered again from `pageQuery`, every variant must be there with exactly the
 * checked-in text, and no file may be left that the code no longer produces.
 */
import { PUNCH_SQL_DIR, checkedInPunchStatements, renderPunchStatements } from '../../../scripts/punch-sql';
import { driftMessage } from '../../../scripts/schema-dump';

const HOW = 'pnpm sql';

test(`the rendered page statements equal the checked-in ${PUNCH_SQL_DIR}/*.sql`, () => {
  const rendered = renderPunchStatements();
  const checkedIn = checkedInPunchStatements();
  expect(rendered.size).toBeGreaterThan(0);
  const missing = [...rendered.keys()].filter((f) => !checkedIn.has(f));
  const stale = [...checkedIn.keys()].filter((f) => !rendered.has(f));
  expect(
    missing.length || stale.length ? `run \`${HOW}\`: missing ${missing.join(', ') || '-'}; no longer produced ${stale.join(', ') || '-'}` : undefined,
  ).toBeUndefined();
  for (const [file, text] of rendered) {
    expect(driftMessage(`${PUNCH_SQL_DIR}/${file}`, text, checkedIn.get(file)!, HOW)).toBeUndefined();
  }
});
