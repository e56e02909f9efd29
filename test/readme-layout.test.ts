/**
 * The README's "Layout" section matches the tree: every top-level entry, every package and service, every
 * script and every document in docs/ is named there, and everything named there exists.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..');
const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const layout = /## Layout\n+```\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
const IGNORED = new Set([
  'node_modules',
  'README.md',
  'package.json',
  'pnpm-lock.yaml',
  'pnpm-workspace.yaml',
  'tsconfig.json',
  'jest.config.ts',
  'redocly.yaml',
  'dist',
]);

test('the layout section exists', () => {
  expect(layout.length).toBeGreaterThan(500);
});

test('every top-level entry, package, service, script and document is in the layout', () => {
  const missing: string[] = [];
  const named = (entry: string) => layout.includes(entry);
  for (const e of readdirSync(ROOT)) if (!e.startsWith('.') && !IGNORED.has(e) && !named(e.replace(/\/$/, ''))) missing.push(e);
  for (const parent of ['packages', 'services'])
    for (const e of readdirSync(path.join(ROOT, parent))) if (!named(`${parent}/${e}/`)) missing.push(`${parent}/${e}/`);
  for (const e of readdirSync(path.join(ROOT, 'scripts'))) if (!named(`scripts/${e}`)) missing.push(`scripts/${e}`);
  for (const e of readdirSync(path.join(ROOT, 'docs'))) if (e.endsWith('.md') && !named(e)) missing.push(`docs/${e}`);
  expect(missing).toEqual([]);
});

test('every path the layout names exists', () => {
  const paths = [...layout.matchAll(/^(\S+\/\S*|\S+\.(?:ts|md|json|yaml))(?=\s)/gm)].map((m) => m[1]).flatMap((p) => p.split(','));
  expect(paths.length).toBeGreaterThan(10);
  expect(paths.filter((p) => !existsSync(path.join(ROOT, p.trim())))).toEqual([]);
});
