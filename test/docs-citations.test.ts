/**
 * The documents cite the code by its real names: every file a Markdown document names in backticks
 * (`timing/punches/punches.repository.ts`, `packages/shared/src/db.ts`, `schema.sql`) exists, and every
 * identifier it places in that file exists there. Two citation forms bind a name to a file:
 * "(`file.ts` `name`, `other`)" — names after a file up to the group's end — and "`name` (`file.ts`)".
 * Shorthands resolve as the documents use them: `timing/…` and `ordering/…` under `services/<service>/src/`,
 * a path that ends a tracked file's path (`src/generated/openapi.ts`), a bare file name found anywhere.
 * Checked: README.md, CONTRIBUTING.md, RELIABILITY.md, SCALING.md, SECURITY.md, docs/, infra/README.md and the
 * READMEs of the services, packages, bench and tests. Each rule has a negative control.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..');
const TRACKED = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f !== '' && existsSync(path.join(ROOT, f)));

/** A cited file: a path of word characters, dots, dashes and slashes with a known extension. */
const FILE = /^[\w./-]+\.(?:ts|sql|md|yaml|yml|json|conf|cfg|cjs|mjs|html|sh)$/;
/** A cited identifier: a function, class, constant or type name. */
const IDENT = /^[A-Za-z_$][\w$]*$/;

/** The tracked files `cited` (from document `doc`) can mean, per the shorthands of the module docstring. */
function resolveCited(cited: string, doc: string, files: readonly string[] = TRACKED): string[] {
  const clean = cited.replace(/^\.\//, '');
  const candidates = [clean, path.posix.join(path.posix.dirname(doc), clean)];
  const short = /^(timing|ordering)\/(.+)$/.exec(clean);
  if (short) candidates.push(`services/${short[1]}/src/${short[2]}`);
  const exact = files.filter((f) => candidates.includes(f));
  if (exact.length > 0) return exact;
  return files.filter((f) => f.endsWith(`/${clean}`) || (!clean.includes('/') && path.posix.basename(f) === clean));
}

/** Each (file, names) binding of a line (see the module docstring). */
function bindings(line: string): { file: string; names: string[] }[] {
  const out: { file: string; names: string[] }[] = [];
  // Backticked tokens with their offsets, and the parenthesis groups they sit in.
  const tokens = [...line.matchAll(/`([^`]+)`/g)].map((m) => ({ text: m[1], at: m.index }));
  const groupOf = (at: number): number => {
    let depth = 0;
    let start = -1;
    for (let i = 0; i < at; i++) {
      if (line[i] === '(') {
        depth++;
        if (depth === 1) start = i;
      } else if (line[i] === ')' && depth > 0) {
        depth--;
        if (depth === 0) start = -1;
      }
    }
    return start;
  };
  tokens.forEach((t, i) => {
    if (!FILE.test(t.text)) return;
    const group = groupOf(t.at);
    const names: string[] = [];
    let end = t.at + t.text.length + 2;
    for (const next of tokens.slice(i + 1)) {
      // Names follow their file separated by punctuation alone ("`file` `a`, `b` and `c`"), in its group.
      if (FILE.test(next.text) || groupOf(next.at) !== group || group === -1 || !/^[\s,;]*(?:(?:and|or)\s+)?$/.test(line.slice(end, next.at))) break;
      if (IDENT.test(next.text)) names.push(next.text);
      end = next.at + next.text.length + 2;
    }
    // "`name` (`file`)": the token right before an opening parenthesis that starts with this file.
    const before = tokens[i - 1];
    if (group !== -1 && before && IDENT.test(before.text) && /^\s*\($/.test(line.slice(before.at + before.text.length + 2, t.at))) names.push(before.text);
    out.push({ file: t.text, names });
  });
  return out;
}

/** Words that read as identifiers in a citation but are values, never names of the cited file. */
const NOT_NAMES = new Set(['true', 'false', 'null', 'undefined']);

/** Configuration variables (README "Configuration"): named beside the file that reads them, checked by test/readme-config.test.ts. */
const VARIABLES = new Set([...readFileSync(path.join(ROOT, 'README.md'), 'utf8').matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1]));

/**
 * Cited names that are not files of this repository, by document: other projects' files, files a run writes.
 * URL paths (`/openapi.json`), run outputs under `.data/`, suffixes (`.repository.ts`) and placeholders
 * (`00NN_name.ts`) are never files and are left out everywhere.
 */
const NOT_OURS: Record<string, string[]> = {
  // fartOLa's and RadioSender's files (docs/roc.md "Readers").
  'docs/roc.md': ['apps/edge/src/integrations/roc/poller.ts', 'parse.ts', 'appsettings.json'],
  // weclapp's own documentation.
  'docs/weclapp.md': ['docs/load-management.md'],
  // swagger-ui-dist's stock page.
  'RELIABILITY.md': ['index.html'],
  // The manifest each backup writes.
  'docs/backup.md': ['backup.json'],
};
const NEVER_FILES = /^\/|^\.data\/|^\.[a-z]+\.[a-z]+$|NN/;

/** Findings of document `doc` (its text `text`): unresolved files and names missing from their file. */
function findings(doc: string, text: string, files: readonly string[] = TRACKED, read = (f: string) => readFileSync(path.join(ROOT, f), 'utf8')): string[] {
  const out: string[] = [];
  let fence = false;
  text.split('\n').forEach((line, n) => {
    if (/^\s*```/.test(line)) fence = !fence;
    if (fence) return;
    for (const b of bindings(line)) {
      if (NEVER_FILES.test(b.file) || NOT_OURS[doc]?.includes(b.file)) continue;
      const found = resolveCited(b.file, doc, files);
      if (found.length === 0) {
        out.push(`${doc}:${n + 1}: no file ${b.file}`);
        continue;
      }
      for (const name of b.names) {
        if (NOT_NAMES.has(name) || VARIABLES.has(name)) continue;
        const word = new RegExp(`(?<![\\w$])${name.replace(/\$/g, '\\$')}(?![\\w$])`);
        if (!found.some((f) => word.test(read(f)))) out.push(`${doc}:${n + 1}: ${name} not in ${found.join(' or ')}`);
      }
    }
  });
  return out;
}

const DOCS = TRACKED.filter(
  (f) =>
    /^(README|CONTRIBUTING|RELIABILITY|SCALING|SECURITY)\.md$/.test(f) ||
    /^docs\/[^/]+\.md$/.test(f) ||
    /^(infra|bench|test|services\/[^/]+|packages\/[^/]+)\/README\.md$/.test(f),
);

describe('documents cite files and names that exist', () => {
  it('reads the documents', () => {
    expect(DOCS).toEqual(expect.arrayContaining(['README.md', 'docs/architecture.md', 'docs/database.md']));
  });

  it.each(DOCS)('%s', (doc) => {
    expect(findings(doc, readFileSync(path.join(ROOT, doc), 'utf8'))).toEqual([]);
  });

  it('negative controls: a missing file, a name not in its file, both citation forms', () => {
    const files = ['services/timing/src/punches/punches.service.ts', 'packages/shared/src/db.ts'];
    const texts: Record<string, string> = {
      'services/timing/src/punches/punches.service.ts': 'export function readPunches() {}',
      'packages/shared/src/db.ts': 'export function createDatabase() {}',
    };
    const check = (line: string) => findings('docs/x.md', line, files, (f) => texts[f]);
    expect(check('see (`timing/punches/punches.service.ts` `readPunches`)')).toEqual([]);
    expect(check('see (`timing/punches/punches.service.ts` `readPunchez`)')).toEqual([
      'docs/x.md:1: readPunchez not in services/timing/src/punches/punches.service.ts',
    ]);
    expect(check('`createDatabas` (`packages/shared/src/db.ts`)')).toEqual(['docs/x.md:1: createDatabas not in packages/shared/src/db.ts']);
    expect(check('the pool in `db.ts`, then `gone/file.ts`')).toEqual(['docs/x.md:1: no file gone/file.ts']);
    expect(check('```\n`gone.ts`\n```')).toEqual([]);
  });
});
