/**
 * Layering rule of docs/architecture.md §1 ("Layers inside a service"): SQL lives in repositories. No Kysely
 * query builder call (`selectFrom`, `insertInto`, `updateTable`, `deleteFrom`, `replaceInto`, `mergeInto`), no
 * `sql` template (`` sql`…` ``, `` sql<T>`…` ``, `sql.raw(…)`) and no `pg` call (`.query(…)`, `.query<T>(…)`:
 * LISTEN, advisory locks and plain statements alike) may appear in `services/<name>/src` or `packages/<name>/src`
 * outside `*.repository.ts` files, a service's `src/db/**` (schema, migrations) and the files of {@link ALLOWED},
 * each with its reason. Comments are ignored.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');

/**
 * Files (relative to the repository root) allowed to run SQL outside a repository, and why. Only the shared
 * database infrastructure that the services' repositories themselves stand on; keep it that short.
 */
const ALLOWED: Readonly<Record<string, string>> = {
  'packages/shared/src/db.ts':
    'the database factory: migrations under their advisory lock, the advisory-lock helper, LISTEN and the readiness and version probes that every service uses',
  'packages/shared/src/testing.ts': 'creates and drops the throw-away test databases (no service schema exists yet)',
  'packages/shared/src/embedded.ts': 'creates the database of the embedded PostgreSQL of `pnpm start` before any schema exists',
};

const SQL_CALL =
  /\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto)\s*\(|\bsql\s*(<[^`;]*?>)?\s*`|\bsql\.raw\s*\(|\.query\s*(<[^;]*?>)?\s*\(/g;

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

/** Whether the layering rule lets `file` (relative, `/`-separated) run SQL. */
function mayBuildSql(file: string): boolean {
  return file.endsWith('.repository.ts') || /^services\/[^/]+\/src\/db\//.test(file) || file in ALLOWED;
}

/** Every `.ts` file of `services/<name>/src` and `packages/<name>/src`, relative to the root, `/`-separated. */
function sourceFiles(): string[] {
  return ['services', 'packages'].flatMap((top) =>
    readdirSync(path.join(ROOT, top), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .flatMap((e) => {
        const src = path.join(ROOT, top, e.name, 'src');
        return existsSync(src) ? tsFiles(src) : [];
      })
      .map((abs) => path.relative(ROOT, abs).split(path.sep).join('/')),
  );
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
    "await client.query('listen outbox');",
    "const { rows } = await pool.query<{ visible: boolean }>('select 1', []);",
    'const q = req.query;',
  ].join('\n');
  expect(sqlCalls(sample).map((h) => Number(h.split(':')[0]))).toEqual([1, 3, 4, 5, 6, 10, 11]);
});

test('SQL runs only in repositories, src/db of each service and the allow-listed infrastructure', () => {
  const files = sourceFiles();
  expect(files.length).toBeGreaterThan(50);
  const offenders: string[] = [];
  for (const file of files) {
    if (mayBuildSql(file)) continue;
    for (const hit of sqlCalls(readFileSync(path.join(ROOT, file), 'utf8'))) offenders.push(`${file}:${hit}`);
  }
  // Move each query into the area's `<area>.repository.ts` (a small function taking the executor first).
  expect(offenders).toEqual([]);
});

test('every allow-listed file exists, gives a reason and still needs the exception', () => {
  for (const [file, reason] of Object.entries(ALLOWED)) {
    expect(reason.trim().length).toBeGreaterThan(10);
    expect(sqlCalls(readFileSync(path.join(ROOT, file), 'utf8')).length).toBeGreaterThan(0);
  }
});
