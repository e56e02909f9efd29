/**
 * Layering rule of docs/architecture.md §1 ("Layers inside a service"): SQL lives in repositories. No Kysely
 * query builder call (`selectFrom`, `insertInto`, `updateTable`, `deleteFrom`, `replaceInto`, `mergeInto`) and
 * no `sql` template (`` sql`…` ``, `` sql<T>`…` ``, `sql.raw(…)`) may appear in `services/<name>/src` outside
 * `*.repository.ts` files and `src/db/**` (schema, migrations), except the files of {@link ALLOWED}, each with
 * its reason. Comments are ignored.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');

/** Files (relative to the repository root) allowed to build SQL outside a repository, and why. Keep it short. */
const ALLOWED: Readonly<Record<string, string>> = {};

const SQL_CALL = /\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto)\s*\(|\bsql\s*(<[^`;]*?>)?\s*`|\bsql\.raw\s*\(/g;

/** Source text without block comments and whole-line `//` comments (string contents such as URLs are kept). */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/^\s*\/\/.*$/gm, '');
}

/** `line: text` of every SQL builder call in `text`. */
function sqlCalls(text: string): string[] {
  const code = withoutComments(text);
  const lines = code.split('\n');
  const hits = new Set<number>();
  for (const m of code.matchAll(SQL_CALL)) hits.add(code.slice(0, m.index).split('\n').length);
  return [...hits].map((n) => `${n}: ${lines[n - 1].trim().slice(0, 120)}`);
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return tsFiles(p);
    return e.isFile() && e.name.endsWith('.ts') ? [p] : [];
  });
}

/** Whether the layering rule lets `file` (relative, `/`-separated) build SQL. */
function mayBuildSql(file: string): boolean {
  return file.endsWith('.repository.ts') || /^services\/[^/]+\/src\/db\//.test(file) || file in ALLOWED;
}

test('the scanner finds builder calls and sql templates, and skips comments', () => {
  const sample = [
    "const a = await db.selectFrom('orders').selectAll().execute();",
    "await trx\n  .insertInto('x').values(v).execute();",
    'const r = await sql<{ n: number }>`select 1 as n`.execute(db);',
    'await sql`select pg_notify(${c}, ${p})`.execute(db);',
    'const q = sql.raw(text);',
    "// db.updateTable('orders') in a comment",
    "/** `trx.deleteFrom('x')` in a doc comment */",
    "const url = 'http://example.org/selectFrom';",
  ].join('\n');
  expect(sqlCalls(sample).map((h) => Number(h.split(':')[0]))).toEqual([1, 3, 4, 5, 6]);
});

test('SQL is built only in repositories and src/db of each service', () => {
  const services = readdirSync(path.join(ROOT, 'services'), { withFileTypes: true }).filter((e) => e.isDirectory());
  expect(services.length).toBeGreaterThan(0);
  const offenders: string[] = [];
  let scanned = 0;
  for (const s of services) {
    for (const abs of tsFiles(path.join(ROOT, 'services', s.name, 'src'))) {
      const file = path.relative(ROOT, abs).split(path.sep).join('/');
      scanned++;
      if (mayBuildSql(file)) continue;
      for (const hit of sqlCalls(readFileSync(abs, 'utf8'))) offenders.push(`${file}:${hit}`);
    }
  }
  expect(scanned).toBeGreaterThan(50);
  // Move each query into the area's `<area>.repository.ts` (a small function taking the executor first).
  expect(offenders).toEqual([]);
});

test('every allow-listed file exists, gives a reason and still needs the exception', () => {
  for (const [file, reason] of Object.entries(ALLOWED)) {
    expect(reason.trim().length).toBeGreaterThan(10);
    expect(sqlCalls(readFileSync(path.join(ROOT, file), 'utf8')).length).toBeGreaterThan(0);
  }
});
