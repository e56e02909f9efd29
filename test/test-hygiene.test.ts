/**
 * The rules of CONTRIBUTING.md "Tests leave nothing behind", read from the test sources: no `console.*` output
 * (figures and skip reasons go through `testNote`), no fixed `/tmp/…` path (temporary files go under
 * `os.tmpdir()`, the run's own directory), every conditional skip says why with a `testNote` line, and the
 * run's temporary directory is the one the global set-up made.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.join(__dirname, '..');
const ROOTS = [
  'test',
  'bench/test',
  'services/ordering/test',
  'services/timing/test',
  ...readdirSync(path.join(root, 'packages')).map((p) => `packages/${p}/test`),
];
/** Long runs started by hand print their reports on purpose (README "Development"). */
const NOT_JEST = /\.(soak|tour)\.ts$|\/soak\//;

function testSources(dir: string): string[] {
  const abs = path.join(root, dir);
  if (!statSync(abs, { throwIfNoEntry: false })?.isDirectory()) return [];
  return readdirSync(abs).flatMap((name) => {
    const rel = `${dir}/${name}`;
    if (name === 'node_modules') return [];
    if (statSync(path.join(root, rel)).isDirectory()) return testSources(rel);
    return name.endsWith('.ts') && !NOT_JEST.test(rel) ? [rel] : [];
  });
}

const files = ROOTS.flatMap(testSources).filter((f) => f !== 'test/test-hygiene.test.ts');
const text = (f: string) => readFileSync(path.join(root, f), 'utf8');

describe('test hygiene', () => {
  it('finds the test sources (the scan is not empty)', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files).toContain('test/topology/topology.test.ts');
  });

  it('no console output in tests: testNote for figures and skip reasons', () => {
    expect(files.filter((f) => /\bconsole\.(log|info|warn|debug)\(/.test(text(f)))).toEqual([]);
  });

  it('no fixed /tmp paths: temporary files go under os.tmpdir()', () => {
    expect(files.filter((f) => /['"`]\/tmp\//.test(text(f)))).toEqual([]);
  });

  it('every conditional skip prints why', () => {
    const skipping = files.filter((f) => /\b(describe|it|test)\.skip\b/.test(text(f)));
    expect(skipping.length).toBeGreaterThan(0);
    expect(skipping.filter((f) => !/testNote\(`[^`]*skipped/.test(text(f)))).toEqual([]);
  });

  it("the run's temporary directory is its own (global-setup.ts)", () => {
    expect(path.basename(os.tmpdir())).toMatch(/^sports-timing-tests-/);
  });
});
