/**
 * The `timing` schema as its migrations build it: the checks of test/support/schema-checks.ts
 * (docs/database.md "What the tests check"), and every function of the schema holds the text of its newest
 * version file under src/db/functions/ (docs/database.md "Function texts").
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { SCHEMA_SERVICES } from '../../../scripts/schema-dump';
import { schemaChecks } from '../../../test/support/schema-checks';

const FUNCTIONS_DIR = path.join(__dirname, '../src/db/functions');

/** Functions whose files stay although the schema no longer has them (an older migration still applies them). */
const DROPPED = ['insert_punch_batch'];

/** The newest version file of each function: name → { file, body between the `$fn$` quotes }. */
function newestFunctionFiles(): Map<string, { file: string; body: string }> {
  const newest = new Map<string, { version: number; file: string }>();
  for (const file of readdirSync(FUNCTIONS_DIR)) {
    const m = /^(\w+)\.v(\d+)\.sql$/.exec(file);
    if (!m) continue;
    const version = Number(m[2]);
    if ((newest.get(m[1])?.version ?? 0) < version) newest.set(m[1], { version, file });
  }
  return new Map(
    [...newest].map(([name, { file }]) => {
      const parts = readFileSync(path.join(FUNCTIONS_DIR, file), 'utf8').split('$fn$');
      if (parts.length !== 3) throw new Error(`${file}: expected one body quoted by $fn$ … $fn$`);
      return [name, { file, body: parts[1] }];
    }),
  );
}

test('every version file is named <function>.v<N>.sql with versions 1…N, one function each', () => {
  const files = readdirSync(FUNCTIONS_DIR).filter((f) => f.endsWith('.sql'));
  const versions = new Map<string, number[]>();
  for (const file of files) {
    const m = /^(\w+)\.v(\d+)\.sql$/.exec(file);
    expect({ file, named: Boolean(m) }).toEqual({ file, named: true });
    const text = readFileSync(path.join(FUNCTIONS_DIR, file), 'utf8');
    expect({ file, functions: [...text.matchAll(/^create or replace function (\w+)\(/gm)].map((f) => f[1]) }).toEqual({ file, functions: [m![1]] });
    versions.set(m![1], [...(versions.get(m![1]) ?? []), Number(m![2])]);
  }
  for (const [name, list] of versions) expect({ name, versions: list.sort((a, b) => a - b) }).toEqual({ name, versions: list.map((_, i) => i + 1) });
});

schemaChecks(SCHEMA_SERVICES.timing, {
  'every function of the schema has exactly the text of its newest version file': async (database) => {
    const { rows } = await database.pool.query<{ name: string; body: string }>(
      `select p.proname as name, p.prosrc as body from pg_proc p where p.pronamespace = 'timing'::regnamespace order by 1`,
    );
    const files = newestFunctionFiles();
    expect(rows.map((r) => r.name)).toEqual([...files.keys()].filter((n) => !DROPPED.includes(n)).sort());
    for (const r of rows) expect({ function: r.name, text: r.body }).toEqual({ function: r.name, text: files.get(r.name)?.body });
  },
});
