/**
 * `pnpm sql`: renders every statement of every repository of both services to checked-in files, so that a
 * statement can be read and reviewed whole and a change to it shows as a diff (docs/database.md "Checked-in
 * SQL"). `pnpm sql --check` writes nothing and exits 1 when a file differs (part of `pnpm gen:check`).
 *
 * - Each repository function: `<area>/sql/<repository>/<function>.sql` next to `<area>/<repository>.repository.ts`,
 *   captured by calling the function with the placeholder arguments of scripts/sql/ordering.ts and
 *   scripts/sql/timing.ts against executors that record instead of running (scripts/sql/recorder.ts). The
 *   repositories are not changed for it: what is rendered is exactly what they send.
 * - The punch page statements, every variant: `services/timing/src/punches/sql/*.sql` (scripts/punch-sql.ts).
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PUNCH_SQL_DIR, checkedInPunchStatements, renderPunchStatements } from './punch-sql';
import { driftMessage } from './schema-dump';
import { PLACEHOLDER_TIME, type Call, type RepositoryStatements } from './sql/define';
import { ORDERING_REPOSITORIES } from './sql/ordering';
import { isAnswerStandIn, startRecording, type RecordedStatement } from './sql/recorder';
import { TIMING_REPOSITORIES } from './sql/timing';

const root = path.join(__dirname, '..');

/** Every repository with its rendering calls, both services. */
export const REPOSITORIES: readonly RepositoryStatements[] = [...ORDERING_REPOSITORIES, ...TIMING_REPOSITORIES];

const SUFFIX = '.repository.ts';

/** The rendered file of function `fn` of repository `file` (both relative to the repository root). */
export function statementFile(file: string, fn: string): string {
  return path.posix.join(path.posix.dirname(file), 'sql', path.posix.basename(file, SUFFIX), `${fn}.sql`);
}

/** `text` with its first line trimmed and the indentation its other lines share removed. */
function dedent(text: string): string {
  const [first, ...rest] = text.trim().split('\n');
  const indents = rest.filter((l) => l.trim() !== '').map((l) => l.length - l.trimStart().length);
  const indent = indents.length ? Math.min(...indents) : 0;
  return [first.trim(), ...rest.map((l) => l.slice(indent).trimEnd())].join('\n');
}

/** A parameter value as the header shows it: SQL-like literals; a Date not at the placeholder instant came from the clock. */
function literal(v: unknown): string {
  if (isAnswerStandIn(v)) return '(a value from an earlier answer)';
  if (v === null || v === undefined) return 'null';
  if (v instanceof Date) return v.getTime() === PLACEHOLDER_TIME.getTime() ? `'${v.toISOString()}'` : '(a time taken from the clock)';
  if (Buffer.isBuffer(v)) return `'\\x${v.toString('hex')}'`;
  if (typeof v === 'string') return `'${v.replaceAll("'", "''")}'`;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return `'${JSON.stringify(v).replaceAll("'", "''")}'`;
}

/** The statements one call runs, as file text (a comment line with its parameters, then the statement). */
function renderStatements(statements: readonly RecordedStatement[]): string[] {
  if (statements.length === 0) return ['-- runs no statement'];
  return statements.map((s, i) => {
    const params = s.parameters.map((p, n) => `$${n + 1} = ${literal(p)}`).join(', ');
    const head = `-- statement ${i + 1} of ${statements.length}${params ? `; parameters: ${params}` : '; no parameters'}`;
    return `${head}\n${dedent(s.sql)};`;
  });
}

async function record(call: Call, where: string): Promise<RecordedStatement[]> {
  const { run, answers } = typeof call === 'function' ? { run: call, answers: [] } : call;
  const recording = startRecording(answers);
  try {
    await run(recording);
  } catch (e) {
    throw new Error(`${where}: the placeholder call failed (give it answers in scripts/sql): ${String(e)}`, { cause: e });
  }
  return recording.statements;
}

/**
 * What is wrong with the list of repositories: a `*.repository.ts` of a service missing from it, an exported
 * function neither rendered nor named as a helper, or a name that is not an exported function. Empty when complete.
 */
export function coverageProblems(repositories: readonly RepositoryStatements[] = REPOSITORIES): string[] {
  const problems: string[] = [];
  const listed = new Set(repositories.map((r) => r.file));
  for (const service of readdirSync(path.join(root, 'services'))) {
    const src = path.join(root, 'services', service, 'src');
    if (!existsSync(src)) continue;
    for (const f of readdirSync(src, { recursive: true, encoding: 'utf8' })) {
      const file = path.posix.join('services', service, 'src', f.split(path.sep).join('/'));
      if (file.endsWith(SUFFIX) && !listed.has(file)) problems.push(`${file} is not listed in scripts/sql`);
    }
  }
  for (const r of repositories) {
    for (const fn of r.exported) {
      if (!(fn in r.calls) && !(fn in r.helpers)) problems.push(`${r.file}: ${fn} has no rendering call in scripts/sql`);
    }
    for (const fn of [...Object.keys(r.calls), ...Object.keys(r.helpers)]) {
      if (!r.exported.includes(fn)) problems.push(`${r.file}: ${fn} is not an exported function`);
    }
  }
  return problems;
}

/** One placeholder call of a repository function and the statements it ran. */
export interface RecordedCall {
  fn: string;
  /** The variant name, or null when the function has a single call. */
  variant: string | null;
  statements: RecordedStatement[];
}

/** Runs every placeholder call of repository `r` on fresh recording executors, in the order listed. */
export async function recordCalls(r: RepositoryStatements): Promise<RecordedCall[]> {
  const calls: RecordedCall[] = [];
  for (const [fn, rendering] of Object.entries(r.calls)) {
    const where = `${r.file} ${fn}`;
    if (typeof rendering === 'function' || 'run' in rendering) {
      calls.push({ fn, variant: null, statements: await record(rendering as Call, where) });
    } else {
      for (const [variant, call] of Object.entries(rendering)) {
        calls.push({ fn, variant, statements: await record(call, `${where} (${variant})`) });
      }
    }
  }
  return calls;
}

/** Every repository function's statements, rendered file (relative to the repository root) → content. */
export async function renderRepositoryStatements(): Promise<Map<string, string>> {
  const problems = coverageProblems();
  if (problems.length) throw new Error(problems.join('\n'));
  const files = new Map<string, string>();
  for (const r of REPOSITORIES) {
    const service = r.file.split('/')[1];
    const blocks = new Map<string, string[]>();
    for (const { fn, variant, statements } of await recordCalls(r)) {
      if (!blocks.has(fn)) {
        blocks.set(fn, [
          `-- ${fn} (${path.posix.basename(r.file)}): generated by \`pnpm sql\` from the placeholder call in scripts/sql/${service}.ts; do not edit.`,
        ]);
      }
      const text = renderStatements(statements).join('\n\n');
      blocks.get(fn)!.push(variant === null ? text : `-- variant ${variant}\n${text}`);
    }
    for (const [fn, [header, ...rest]] of blocks) files.set(statementFile(r.file, fn), `${header}\n${rest.join('\n\n')}\n`);
  }
  return files;
}

/** The checked-in repository statements: every `.sql` file in a `sql/<repository>/` folder of a service, path → content. */
export function checkedInRepositoryStatements(): Map<string, string> {
  const files = new Map<string, string>();
  for (const service of readdirSync(path.join(root, 'services'))) {
    const src = path.join(root, 'services', service, 'src');
    if (!existsSync(src)) continue;
    for (const f of readdirSync(src, { recursive: true, encoding: 'utf8' }).map((p) => p.split(path.sep).join('/'))) {
      const parts = f.split('/');
      if (f.endsWith('.sql') && parts.length >= 3 && parts[parts.length - 3] === 'sql') {
        const file = path.posix.join('services', service, 'src', f);
        files.set(file, readFileSync(path.join(root, file), 'utf8'));
      }
    }
  }
  return files;
}

/**
 * How the checked-in files differ from the rendered ones, one message per file (missing, no longer produced,
 * or changed with its first differing line); empty when they match.
 */
export function statementDrift(rendered: ReadonlyMap<string, string>, checkedIn: ReadonlyMap<string, string>): string[] {
  const drift: string[] = [];
  for (const [f, text] of rendered) {
    const old = checkedIn.get(f);
    if (old === undefined) drift.push(`${f} is missing: run \`pnpm sql\` and commit it`);
    else {
      const message = driftMessage(f, text, old, 'pnpm sql');
      if (message) drift.push(message);
    }
  }
  for (const f of checkedIn.keys()) if (!rendered.has(f)) drift.push(`${f} is no longer produced: run \`pnpm sql\` (it removes the file)`);
  return drift;
}

/** Every rendered file of `pnpm sql` (repository statements and punch page variants), path → content. */
async function renderAll(): Promise<{ rendered: Map<string, string>; checkedIn: Map<string, string> }> {
  const rendered = await renderRepositoryStatements();
  const checkedIn = checkedInRepositoryStatements();
  for (const [f, text] of renderPunchStatements()) rendered.set(`${PUNCH_SQL_DIR}/${f}`, text);
  for (const [f, text] of checkedInPunchStatements()) checkedIn.set(`${PUNCH_SQL_DIR}/${f}`, text);
  return { rendered, checkedIn };
}

async function main(): Promise<void> {
  const { rendered, checkedIn } = await renderAll();
  const stale = [...checkedIn.keys()].filter((f) => !rendered.has(f));
  const changed = [...rendered].filter(([f, text]) => checkedIn.get(f) !== text).map(([f]) => f);
  if (process.argv.includes('--check')) {
    const drift = statementDrift(rendered, checkedIn);
    if (drift.length) {
      console.error(drift.join('\n'));
      process.exit(1);
    }
    console.log(`${rendered.size} checked-in statement files match`);
    return;
  }
  // A file the code no longer produces must not stay behind.
  for (const f of stale) rmSync(path.join(root, f));
  for (const f of changed) {
    mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
    writeFileSync(path.join(root, f), rendered.get(f)!);
  }
  console.log(`${rendered.size} statement files: ${changed.length} written, ${stale.length} removed`);
}

if (require.main === module) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
