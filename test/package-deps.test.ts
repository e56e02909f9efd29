/**
 * The packages sit below the services (docs/architecture.md §1 "Parts and layers"): no file under `packages/`
 * (sources, bin scripts and tests alike; `node_modules` and `dist` aside) imports a service, neither by its
 * package name (`@sports-timing/ordering`, `@sports-timing/timing`, any subpath) nor by a relative path into
 * `services/`, and no package.json of a package depends on one. The API types come from
 * `@sports-timing/contracts`, shared constants from `@sports-timing/shared`; a test that starts a real service
 * to drive a client or the CLI belongs in the root `test/` folder (`test/e2e/`). Comments are ignored.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');

/** Package names of the services (a subpath such as `/src/config` included). */
const SERVICE_PACKAGE = /^@sports-timing\/(ordering|timing)(\/|$)/;

/** Module specifiers of `from '…'`, `import '…'`, `import('…')`, `require('…')` and `export … from '…'`. */
const SPECIFIER = /\b(?:from|import|require)\s*\(?\s*(['"])([^'"\n]+)\1/g;

/** Source text without block comments and whole-line `//` comments. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/^\s*\/\/.*$/gm, '');
}

/** The specifiers in `text` (of the file `file`, relative to the root) that reach a service. */
function serviceImports(file: string, text: string): string[] {
  const out: string[] = [];
  for (const m of withoutComments(text).matchAll(SPECIFIER)) {
    const spec = m[2];
    const target = spec.startsWith('.')
      ? path
          .relative(ROOT, path.resolve(ROOT, path.dirname(file), spec))
          .split(path.sep)
          .join('/')
      : '';
    if (SERVICE_PACKAGE.test(spec) || target.startsWith('services/')) out.push(spec);
  }
  return out;
}

function codeFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'dist' || e.name.startsWith('dist.') ? [] : codeFiles(p);
    return e.isFile() && /\.(ts|cjs|mjs|js)$/.test(e.name) ? [p] : [];
  });
}

const packages = readdirSync(path.join(ROOT, 'packages'), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name);

test('the scanner finds service imports by name and by path, and nothing else', () => {
  const sample = [
    "import type { paths } from '@sports-timing/ordering/src/generated/openapi';",
    "import { createApp } from '../../../services/timing/src/app';",
    "const t = require('@sports-timing/timing');",
    "const c = await import('@sports-timing/ordering/src/config');",
    "export { x } from '../../../services/ordering/src/x';",
    "import { createOrderingClient } from '@sports-timing/ordering-client';",
    "import type { Punch } from '@sports-timing/timing-client';",
    "import type { paths } from '@sports-timing/contracts/src/generated/timing';",
    "import { x } from '../../services-like/y';",
    "const FILE = path.join(root, 'services/timing/demo/venotte2020-punches.csv');",
    "// import { DEV } from '@sports-timing/ordering/src/config';",
    "/** from '../../../services/timing/src/app' */",
  ].join('\n');
  expect(serviceImports('packages/cli/src/main.ts', sample)).toEqual([
    '@sports-timing/ordering/src/generated/openapi',
    '../../../services/timing/src/app',
    '@sports-timing/timing',
    '@sports-timing/ordering/src/config',
    '../../../services/ordering/src/x',
  ]);
});

test('no file under packages/ imports a service', () => {
  const offenders: string[] = [];
  let scanned = 0;
  for (const name of packages) {
    for (const abs of codeFiles(path.join(ROOT, 'packages', name))) {
      const file = path.relative(ROOT, abs).split(path.sep).join('/');
      scanned++;
      for (const spec of serviceImports(file, readFileSync(abs, 'utf8'))) offenders.push(`${file}: ${spec}`);
    }
  }
  expect(scanned).toBeGreaterThan(60);
  // Take the API types from @sports-timing/contracts and shared constants from @sports-timing/shared.
  expect(offenders).toEqual([]);
});

test('no package depends on a service', () => {
  const offenders: string[] = [];
  for (const name of packages) {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'packages', name, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
    for (const field of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'])
      for (const dep of Object.keys(pkg[field] ?? {})) if (SERVICE_PACKAGE.test(dep)) offenders.push(`packages/${name}/package.json ${field}: ${dep}`);
  }
  expect(packages.length).toBeGreaterThan(5);
  expect(offenders).toEqual([]);
});
