/**
 * No enum of the specs is written out a second time in the code (docs/architecture.md, "The spec is the single
 * source"): a list or union of string literals holding exactly the values of a spec enum (three or more) is a
 * copy that drifts when the spec changes. Take the type from the generated contracts instead, and a runtime list
 * from `enumValues<T>({ … })` (packages/shared/src/spec-values.ts), whose record a changed spec turns into a type
 * error. Frozen migrations and generated files are not scanned.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';

const ROOT = path.resolve(__dirname, '..');

/** Matches left, `<file>: <enum>`, each with its reason; each entry must still match. */
const ALLOWED: Readonly<Record<string, string>> = {
  'packages/erp-simulator/src/seed-catalogue.ts: UserGroup':
    "the values of the ERP's own LIST attribute `shopUserGroup` in the simulator's seed, the ERP side of the contract",
  'packages/erp-simulator/src/seed-catalogue.ts: CardType':
    "the values of the ERP's own LIST attribute `cardType` in the simulator's seed, the ERP side of the contract",
};

/** Every string enum of three or more values in `doc`, named by its schema (or the path to it). */
function enumsOf(doc: unknown, name = ''): { name: string; values: string[] }[] {
  if (doc === null || typeof doc !== 'object') return [];
  const o = doc as Record<string, unknown>;
  const own = Array.isArray(o.enum) && o.enum.length >= 3 && o.enum.every((v) => typeof v === 'string') ? [{ name, values: o.enum }] : [];
  return [...own, ...Object.entries(o).flatMap(([k, v]) => enumsOf(v, name === '' || name === 'components' || name === 'schemas' ? k : `${name}.${k}`))];
}

const ENUMS = ['specs/ordering.yaml', 'specs/timing.yaml'].flatMap((f) => enumsOf(yaml.load(readFileSync(path.join(ROOT, f), 'utf8'))));

/** A bracketed list (`['a', 'b', 'c']`) or a union (`'a' | 'b' | 'c'`) of single-quoted string literals. */
const LITERAL_LIST = /\[\s*(?:'[^'\n]*'\s*,\s*)+'[^'\n]*'\s*,?\s*\]|(?:'[^'\n]*'\s*\|\s*)+'[^'\n]*'/g;

/** The enums of {@link ENUMS} that `text` writes out as a literal list, as `<file>: <enum>` keys. */
function restatedEnums(file: string, text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(LITERAL_LIST)) {
    const values = new Set([...m[0].matchAll(/'([^'\n]*)'/g)].map((x) => x[1]));
    for (const e of ENUMS) if (values.size === e.values.length && e.values.every((v) => values.has(v))) found.add(`${file}: ${e.name}`);
  }
  return [...found];
}

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile() && d.name.endsWith('.ts'))
    .map((d) => path.relative(ROOT, path.join(d.parentPath, d.name)))
    .filter(
      (f) => !f.includes(`${path.sep}generated${path.sep}`) && !f.includes(`${path.sep}migrations${path.sep}`) && f.includes(`${path.sep}src${path.sep}`),
    );
}

const FILES = [...readdirSync(path.join(ROOT, 'services')).map((s) => `services/${s}`), ...readdirSync(path.join(ROOT, 'packages')).map((p) => `packages/${p}`)]
  .flatMap((d) => sources(d))
  .map((f) => f.split(path.sep).join('/'));

test('the specs have enums to compare with', () => {
  expect(ENUMS.map((e) => e.name)).toEqual(expect.arrayContaining(['OrderState', 'Role', 'UserGroup', 'CardType', 'Courier', 'PunchType']));
});

test('no source file writes a spec enum out as a literal list', () => {
  const found = FILES.flatMap((f) => restatedEnums(f, readFileSync(path.join(ROOT, f), 'utf8')));
  expect(found.filter((k) => !(k in ALLOWED))).toEqual([]);
  expect(Object.keys(ALLOWED).filter((k) => !found.includes(k))).toEqual([]);
});

test('negative control: a hand-written list or union of an enum is found', () => {
  expect(restatedEnums('x.ts', "const ROLES = ['admin', 'support', 'retailer', 'customer'] as const;")).toEqual(['x.ts: Role']);
  expect(restatedEnums('y.ts', "type G = 'public' | 'retailer' | 'internal';")).toEqual(['y.ts: UserGroup']);
  expect(restatedEnums('z.ts', 'const ok = enumValues<Role>({ admin: true, support: true, retailer: true, customer: true });')).toEqual([]);
});
