/**
 * The README's configuration table is the one list of environment variables a newcomer reads: every variable
 * the code reads (services, packages, the launcher, the CLI, the simulators, tests and benchmarks) must be
 * in it, and nothing in it may be stale. The variables are found in the sources by how they are read:
 * `process.env.NAME`, `process.env['NAME']`, the config readers (`e.int('NAME', …)`, `e.string('NAME')`, …)
 * and the launcher's copy of the environment (`env.NAME`).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.join(__dirname, '..');

/** Set by the platform or the test runner, not by an operator. */
const SYSTEM = new Set(['PATH', 'HOME', 'NODE_ENV', 'JEST_WORKER_ID', 'CI', 'TMPDIR']);

/** Folders scanned (recursively), and folders skipped within them (test fixtures with made-up environments). */
const SCANNED = ['services/ordering/src', 'services/timing/src', 'services/ordering/test', 'services/timing/test', 'packages', 'test', 'bench/src'];
const SKIPPED = [path.join('packages', 'shared', 'test'), 'node_modules', 'generated', 'dist', 'readme-config.test.ts'];

const READS = [
  /process\.env\.([A-Z][A-Z0-9_]+)/g,
  /process\.env\[['"]([A-Z][A-Z0-9_]+)['"]\]/g,
  /\.(?:string|int|bool|oneOf|url|firstOf)\(\s*['"]([A-Z][A-Z0-9_]+)['"]/g,
  /\benv\.([A-Z][A-Z0-9_]+)/g,
];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(root, dir))) {
    const rel = path.join(dir, entry);
    if (SKIPPED.some((s) => rel.endsWith(s))) continue;
    if (statSync(path.join(root, rel)).isDirectory()) out.push(...sourceFiles(rel));
    else if (entry.endsWith('.ts')) out.push(rel);
  }
  return out;
}

/** Every variable name read by the code, with the files reading it. */
function variablesRead(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of SCANNED.flatMap(sourceFiles)) {
    const text = readFileSync(path.join(root, file), 'utf8');
    for (const re of READS) {
      for (const m of text.matchAll(re)) {
        const name = m[1];
        // Other first arguments of the readers (`e.firstOf('A', 'B')` reads both).
        if (SYSTEM.has(name)) continue;
        found.set(name, [...new Set([...(found.get(name) ?? []), file])]);
      }
    }
    for (const m of text.matchAll(/firstOf\(([^)]*)\)/g)) {
      for (const name of m[1].match(/[A-Z][A-Z0-9_]{2,}/g) ?? []) found.set(name, [...new Set([...(found.get(name) ?? []), file])]);
    }
  }
  return found;
}

/** The names in backticks in the README's "Configuration" section. */
function documented(): Set<string> {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('\n## ', readme.indexOf('## Configuration') + 5));
  // A variable is named in a row's first column (a default such as `SHIPPING` in another column is a value).
  const firstCells = [...section.matchAll(/^\|([^|\n]*)\|/gm)].map((m) => m[1]);
  return new Set(firstCells.flatMap((cell) => [...cell.matchAll(/`([A-Z][A-Z0-9_]{2,})`/g)].map((m) => m[1])));
}

describe('README configuration table', () => {
  it('lists every environment variable the code reads', () => {
    const table = documented();
    const missing = [...variablesRead()].filter(([name]) => !table.has(name)).map(([name, files]) => `${name} (read in ${files.join(', ')})`);
    expect(missing).toEqual([]);
  });

  it('lists no variable the code does not read', () => {
    const read = variablesRead();
    expect([...documented()].filter((name) => !read.has(name))).toEqual([]);
  });

  it('the scan finds the variables it should (a negative control of the patterns)', () => {
    const read = variablesRead();
    for (const name of ['DATABASE_URL', 'TIMING_PORT', 'EMBEDDED_PG_PORT', 'ERP_SIMULATOR_TOKEN', 'TIMING_URL', 'FAULT_PG_PORT', 'PASSWORD_HASH_COST_LN'])
      expect(read.has(name)).toBe(true);
  });
});
