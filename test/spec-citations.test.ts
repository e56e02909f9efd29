/**
 * Source files cite the API contract by what it names, not by the section numbers of the prose specifications
 * it was written from: an operationId (`importArticles`), a schema (`ShopOrderDTO`), a tag or a part of
 * `specs/*.yaml` say directly what is meant, where a section number resolved only through a lookup table.
 * Two rules over every source file (`.ts`, `.js`, `.mjs`, `.cjs`, `.html` under packages/, services/, test/,
 * bench/ and scripts/, and the specs themselves; generated files are made from the specs and left out):
 * - no section sign except after an RFC or BCP number or a `.md` document (`docs/decisions.md §6`);
 * - every name in "operation `x`", "schema `X`" (or `X.field`) and "tag `x`" (also plural, as a list
 *   "operations `a`, `b`") exists in specs/ordering.yaml or specs/timing.yaml.
 * Each rule has a negative control on a sample text, so a rule that silently matches nothing fails.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { load } from 'js-yaml';

const ROOT = path.join(__dirname, '..');
const ROOTS = ['packages', 'services', 'test', 'bench', 'scripts'];
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'generated', 'results', 'coverage']);
const SOURCE = /\.(?:[cm]?[jt]s|html)$/;
/** The section sign, spelled as an escape so that this file's own samples are not findings. */
const S = '\u00a7';

/** Paths (relative to the repository root) of every source file the rules apply to. */
function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return e.name.startsWith('.') || SKIPPED_DIRS.has(e.name) ? [] : sourceFiles(rel);
    return SOURCE.test(e.name) ? [rel] : [];
  });
}

/** What may stand before a section sign: an RFC/BCP number or a Markdown document, then earlier sections of it. */
const ALLOWED_BEFORE = new RegExp(`(?:RFC \\d+|BCP(?: \\d+)?|\\.md)(?:,? ?${S}[\\w.]+)*(?:,| and| or)? ?$`);

/** A line without its comment marker (`*`, `//`), so a wrapped comment's lines can be read as one. */
const uncommented = (line: string) => line.replace(/^\s*(?:\*(?!\/)|\/\/)?\s*/, '');

/**
 * 1-based line numbers of `text` holding a section sign that cites no RFC, BCP or `.md` document. A sign that
 * opens a comment line continues the previous one (`docs/decisions.md` at the end of a line, its section at the start of the next).
 */
function proseSectionCitations(text: string): number[] {
  const lines = text.split('\n');
  return lines.flatMap((line, i) => {
    const at = [...line.matchAll(new RegExp(S, 'g'))].map((m) => m.index);
    const before = (pos: number) => {
      const own = uncommented(line.slice(0, pos));
      return own === '' && i > 0 ? `${uncommented(lines[i - 1]).trimEnd()} ` : own;
    };
    return at.some((pos) => !ALLOWED_BEFORE.test(before(pos))) ? [i + 1] : [];
  });
}

/** The parts of a spec this check reads. */
interface SpecParts {
  paths: Record<string, Record<string, { operationId?: string } | undefined>>;
  components: { schemas: Record<string, SchemaParts> };
  tags: { name: string }[];
}
/** A schema as far as citations go: its properties, or `allOf` parts by `$ref`. */
interface SchemaParts {
  $ref?: string;
  properties?: Record<string, unknown>;
  allOf?: SchemaParts[];
}
const specs = ['ordering', 'timing'].map((name) => load(readFileSync(path.join(ROOT, 'specs', `${name}.yaml`), 'utf8')) as SpecParts);
const operationIds = new Set(specs.flatMap((spec) => Object.values(spec.paths).flatMap((item) => Object.values(item).map((op) => op?.operationId))));
const schemas = new Map<string, SchemaParts>(specs.flatMap((spec) => Object.entries(spec.components.schemas)));
const tags = new Set(specs.flatMap((spec) => spec.tags.map((t) => t.name)));

/** Does a cited schema exist, and for `Schema.field` a property of that name (also inside `allOf`)? */
function schemaExists(cited: string): boolean {
  const [name, field] = cited.split('.');
  const schema = schemas.get(name);
  if (!schema || field === undefined) return schema !== undefined;
  const parts = [schema, ...(schema.allOf ?? [])].map((p) => (p.$ref ? schemas.get(p.$ref.split('/').pop() ?? '') : p));
  return parts.some((p) => p?.properties?.[field] !== undefined);
}

/** A comment's word, a list of backticked names after it ("operations `a`, `b` and `c`"). */
const NAMED = /\b(operation|schema|tag)s? ((?:`[\w.]+`(?:,? (?:and |or )?)?)+)/g;

/** Names cited after "operation", "schema" or "tag" in `text` that the specs do not define. */
function unknownSpecNames(text: string): string[] {
  // Comment continuation lines are joined, so a list may wrap.
  const flat = text.replace(/\n\s*(?:\*(?!\/)|\/\/)?\s*/g, ' ');
  return [...flat.matchAll(NAMED)].flatMap(([, kind, list]) =>
    [...list.matchAll(/`([\w.]+)`/g)]
      .map((m) => m[1])
      // Lower-case "schema `x`" is a database schema (`bench_api`), not an API schema.
      .filter((name) => !(kind === 'schema' && /^[a-z]/.test(name)))
      .filter((name) => !(kind === 'operation' ? operationIds.has(name) : kind === 'tag' ? tags.has(name) : schemaExists(name)))
      .map((name) => `${kind} \`${name}\``),
  );
}

const files = [...ROOTS.flatMap(sourceFiles), path.join('specs', 'ordering.yaml'), path.join('specs', 'timing.yaml')];
/** This file, whose documentation and samples name made-up operations and schemas on purpose. */
const SELF = path.join('test', 'spec-citations.test.ts');

test('the source files and the specs are found', () => {
  expect(files.length).toBeGreaterThan(300);
  expect(files).toContain(SELF);
  expect(operationIds.has('importArticles') && operationIds.has('getPunches')).toBe(true);
  expect(schemas.has('ShopOrderDTO') && schemas.has('Punch')).toBe(true);
});

test('the section rule finds prose-spec citations and leaves RFC and docs citations alone', () => {
  expect(proseSectionCitations(`a\n * Imports (ordering spec ${S}4.8 \`import-articles\`).`)).toEqual([2]);
  expect(proseSectionCitations(`(${S}4.2)`)).toEqual([1]);
  expect(proseSectionCitations(`Rate limits (${S} Errors)`)).toEqual([1]);
  expect(proseSectionCitations(`docs/decisions.md ${S}6 identity, ordering spec ${S}4.1`)).toEqual([1]);
  expect(proseSectionCitations(`/**\n * quota (docs/decisions.md\n * ${S}5 "Quotas").`)).toEqual([]);
  expect(proseSectionCitations(`/**\n * lists (ordering spec\n * ${S}4.5).`)).toEqual([3]);
  expect(proseSectionCitations(`RFC 6749 ${S}5.2; RFC 6749 ${S}4.3, ${S}4.4, ${S}6; docs/decisions.md ${S}4, ${S}6; BCP ${S}4.14`)).toEqual([]);
});

test('no source file cites a prose specification by section', () => {
  const found = files.flatMap((f) => proseSectionCitations(readFileSync(path.join(ROOT, f), 'utf8')).map((line) => `${f}:${line}`));
  expect(found).toEqual([]);
});

test('the name rule finds names the specs do not define', () => {
  expect(unknownSpecNames('/**\n * Imports (operations `importArticles`,\n * `noSuchOperation`; schema `ShopOrderDTO`).')).toEqual([
    'operation `noSuchOperation`',
  ]);
  expect(unknownSpecNames('schemas `AddressDTO.phoneNumber`, `AddressDTO.fax`, `NoSuchDTO`; tag `shop`, tags `nope`')).toEqual([
    'schema `AddressDTO.fax`',
    'schema `NoSuchDTO`',
    'tag `nope`',
  ]);
  expect(unknownSpecNames('the database schema `bench_api`')).toEqual([]);
});

test('every operation, schema and tag a source file names exists in the specs', () => {
  const found = files.filter((f) => f !== SELF).flatMap((f) => unknownSpecNames(readFileSync(path.join(ROOT, f), 'utf8')).map((name) => `${f}: ${name}`));
  expect(found).toEqual([]);
});
