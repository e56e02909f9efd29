/**
 * No module-level registries (CONTRIBUTING.md "Code rules", docs/architecture.md "Composition root of
 * timing"): state lives in objects that a composition root builds once per app and hands down, never in a
 * module, where every app of the process would share it (or find "its" entry through a hidden lookup keyed by a
 * pool, a Kysely instance or a deps object).
 *
 * The rule, checked with the TypeScript compiler API on every `.ts` file of `services/<name>/src` and
 * `packages/<name>/src` ({@link findModuleState}). At the top level of a module (its own statements, exported
 * or not — not inside a function or class body):
 * 1. every `let` or `var` declaration is module-level mutable state;
 * 2. a `const` is, when its initialiser (through `as`, `satisfies`, `!` and parentheses) is
 *    - `new Map/Set/WeakMap/WeakSet/Array/BlockList(…)` or an array or object literal, and the module mutates it
 *      inside a function: a mutating method called on it (`set`, `add`, `delete`, `clear`, `push`, `splice`,
 *      `sort`, `addAddress`, …), or, for literals, an assignment, `++`/`--` or `delete` on one of its elements or
 *      properties (at any depth), or `Object.assign(it, …)`. Filled while the module loads and only read after,
 *      it is a constant table and passes;
 *    - `new WeakRef(…)` or `new FinalizationRegistry(…)`;
 *    - `new X(…)` of any other class except the value classes of {@link VALUE_CLASSES} (an instance may hold
 *      state behind its methods: a cache, a registry, a counter);
 * 3. every static property of a class that is not `readonly`, and a `static readonly` one initialised as in 2
 *    (without the mutation analysis: any collection or class instance).
 * Other initialisers (a call, a primitive) pass: the scan cannot see what a function returns. Names are
 * matched by text within the module (a local of the same name inside a function is taken for the module's).
 *
 * Allowed: {@link CONSTANT_MEMO_TABLES} only (each a memo of values that are a pure function of their key, so
 * sharing it between apps changes no answer). Every entry must still be found, so each one is deleted when its
 * table goes.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '..');

/** Classes whose instances are values (no state a caller can change through them). */
const VALUE_CLASSES = new Set(['RegExp', 'Date', 'URL', 'URLSearchParams', 'TextEncoder', 'TextDecoder', 'Error', 'TypeError', 'RangeError']);

/** Collections whose mutation is analysed (rule 2, first case), with their mutating methods. */
const COLLECTION_MUTATORS: Readonly<Record<string, readonly string[]>> = {
  Map: ['set', 'delete', 'clear'],
  WeakMap: ['set', 'delete'],
  Set: ['add', 'delete', 'clear'],
  WeakSet: ['add', 'delete'],
  Array: ['push', 'pop', 'shift', 'unshift', 'splice', 'sort', 'reverse', 'fill', 'copyWithin'],
  BlockList: ['addAddress', 'addRange', 'addSubnet'],
};

/** Mutating methods of anything reached from a literal (arrays, maps and sets inside it). */
const ANY_MUTATOR = new Set(Object.values(COLLECTION_MUTATORS).flat());

/** A piece of module-level mutable state: `<file>:<name>` and where. */
interface Finding {
  id: string;
  line: number;
  why: string;
}

/**
 * Allowed: memo tables of constants, `<file>:<name>` → why sharing it between apps in one process changes no
 * answer (the value is a pure function of its key and the build). There is no other allowed state.
 */
const CONSTANT_MEMO_TABLES: Readonly<Record<string, string>> = {
  'services/timing/src/punches/punches.repository.ts:pageTexts':
    'page statement texts by statement name: the text is a function of the name alone (bounded by the few thousand names)',
  'packages/shared/src/db.ts:preparedNames':
    "prepared-statement names by statement text (the code's own marked texts, at most MAX_PREPARED_TEXTS): one name stands for one text for the whole process, so two apps can only ever agree on it",
  'packages/shared/src/weclapp-contract.ts:loaded': 'the parsed checked-in weclapp contract file, read once: a constant of the build',
  'services/ordering/src/countries/countries.service.ts:builtInSorted':
    'the built-in country list sorted per locale: a function of the locale and the installed data',
  'services/ordering/src/orders/mail/order-confirmation.mail.ts:formattersCache':
    'Intl formatters per culture, language and currency (bounded): a function of the key',
  'services/ordering/src/orders/mail/order-confirmation.mail.ts:moneyCache':
    'Intl currency formatters per locale and currency (bounded): a function of the key',
};

/** The initialiser without type assertions, `satisfies`, `!` and parentheses. */
function unwrap(e: ts.Expression): ts.Expression {
  while (ts.isAsExpression(e) || ts.isSatisfiesExpression(e) || ts.isNonNullExpression(e) || ts.isParenthesizedExpression(e) || ts.isTypeAssertionExpression(e))
    e = e.expression;
  return e;
}

/** The class name of `new X(…)` (`Intl.NumberFormat` → `Intl.NumberFormat`). */
function classOf(e: ts.NewExpression, file: ts.SourceFile): string {
  return e.expression.getText(file);
}

/** The identifier a property/element access chain starts from (`a.b[c].d` → `a`), if any. */
function rootOf(e: ts.Expression): string | undefined {
  let x = unwrap(e);
  while (ts.isPropertyAccessExpression(x) || ts.isElementAccessExpression(x)) x = unwrap(x.expression);
  return ts.isIdentifier(x) ? x.text : undefined;
}

function insideFunction(node: ts.Node): boolean {
  for (let p = node.parent; p !== undefined; p = p.parent) if (ts.isFunctionLike(p) || ts.isClassStaticBlockDeclaration(p)) return true;
  return false;
}

const ASSIGNMENTS = new Set([
  ts.SyntaxKind.EqualsToken,
  ts.SyntaxKind.PlusEqualsToken,
  ts.SyntaxKind.MinusEqualsToken,
  ts.SyntaxKind.AsteriskEqualsToken,
  ts.SyntaxKind.SlashEqualsToken,
  ts.SyntaxKind.BarBarEqualsToken,
  ts.SyntaxKind.QuestionQuestionEqualsToken,
  ts.SyntaxKind.AmpersandAmpersandEqualsToken,
]);

/** Names (of `kinds`: `collection:<Class>` or `literal`) that the module mutates inside a function (rule 2). */
function mutatedInFunctions(file: ts.SourceFile, kinds: ReadonlyMap<string, string>): Set<string> {
  const mutated = new Set<string>();
  const element = (target: ts.Expression) => {
    const t = unwrap(target);
    if (!ts.isPropertyAccessExpression(t) && !ts.isElementAccessExpression(t)) return;
    const root = rootOf(t);
    if (root !== undefined && kinds.get(root) === 'literal') mutated.add(root);
  };
  const visit = (node: ts.Node) => {
    if (insideFunction(node)) {
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
        const method = node.expression.name.text;
        const target = unwrap(node.expression.expression);
        const root = rootOf(target);
        const kind = root === undefined ? undefined : kinds.get(root);
        if (kind?.startsWith('collection:') && ts.isIdentifier(target) && COLLECTION_MUTATORS[kind.slice('collection:'.length)].includes(method))
          mutated.add(root!);
        if (kind === 'literal' && ANY_MUTATOR.has(method)) mutated.add(root!);
        if (node.expression.getText(file) === 'Object.assign' && node.arguments.length > 0) {
          const first = rootOf(node.arguments[0]);
          if (first !== undefined && kinds.get(first) === 'literal' && ts.isIdentifier(unwrap(node.arguments[0]))) mutated.add(first);
        }
      }
      if (ts.isBinaryExpression(node) && ASSIGNMENTS.has(node.operatorToken.kind)) element(node.left);
      if (
        (ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) &&
        [ts.SyntaxKind.PlusPlusToken, ts.SyntaxKind.MinusMinusToken].includes(node.operator)
      )
        element(node.operand);
      if (ts.isDeleteExpression(node)) element(node.expression);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return mutated;
}

/** What a `const` (or `static readonly`) initialiser is for rules 2 and 3: a kind to analyse, state at once, or nothing. */
function initialiserKind(init: ts.Expression | undefined, file: ts.SourceFile): { analyse: string } | { state: string } | null {
  if (init === undefined) return null;
  const e = unwrap(init);
  if (ts.isArrayLiteralExpression(e) || ts.isObjectLiteralExpression(e)) return { analyse: 'literal' };
  if (!ts.isNewExpression(e)) return null;
  const cls = classOf(e, file);
  if (cls in COLLECTION_MUTATORS) return { analyse: `collection:${cls}` };
  if (cls === 'WeakRef' || cls === 'FinalizationRegistry') return { state: `a ${cls}` };
  if (VALUE_CLASSES.has(cls) || cls.startsWith('Intl.')) return null;
  return { state: `an instance of ${cls}` };
}

/** The module-level mutable state of one module (see the module comment for the rule). */
function findModuleState(fileName: string, text: string): Finding[] {
  const file = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const findings: Finding[] = [];
  const candidates = new Map<string, { kind: string; line: number }>();
  const lineOf = (n: ts.Node) => file.getLineAndCharacterOfPosition(n.getStart(file)).line + 1;
  for (const statement of file.statements) {
    if (ts.isVariableStatement(statement)) {
      if (statement.modifiers?.some((m) => m.kind === ts.SyntaxKind.DeclareKeyword)) continue;
      const isConst = (statement.declarationList.flags & ts.NodeFlags.Const) !== 0;
      for (const d of statement.declarationList.declarations) {
        const names = ts.isIdentifier(d.name)
          ? [d.name.text]
          : d.name.elements.flatMap((el) => (ts.isBindingElement(el) && ts.isIdentifier(el.name) ? [el.name.text] : []));
        for (const name of names) {
          if (!isConst) {
            findings.push({ id: `${fileName}:${name}`, line: lineOf(d), why: 'a module-level let/var' });
            continue;
          }
          const kind = initialiserKind(d.initializer, file);
          if (kind === null) continue;
          if ('state' in kind) findings.push({ id: `${fileName}:${name}`, line: lineOf(d), why: `a module-level const holding ${kind.state}` });
          else candidates.set(name, { kind: kind.analyse, line: lineOf(d) });
        }
      }
    }
    if (ts.isClassDeclaration(statement)) {
      for (const member of statement.members) {
        if (!ts.isPropertyDeclaration(member) || !member.modifiers?.some((m) => m.kind === ts.SyntaxKind.StaticKeyword)) continue;
        const name = `${statement.name?.text ?? 'default'}.${member.name.getText(file)}`;
        const readonly = member.modifiers.some((m) => m.kind === ts.SyntaxKind.ReadonlyKeyword);
        if (!readonly) findings.push({ id: `${fileName}:${name}`, line: lineOf(member), why: 'a static property that is not readonly' });
        else if (initialiserKind(member.initializer, file) !== null)
          findings.push({ id: `${fileName}:${name}`, line: lineOf(member), why: 'a static readonly collection or instance' });
      }
    }
  }
  const mutated = mutatedInFunctions(file, new Map([...candidates].map(([n, c]) => [n, c.kind])));
  for (const [name, c] of candidates)
    if (mutated.has(name))
      findings.push({ id: `${fileName}:${name}`, line: c.line, why: `a module-level ${c.kind.replace('collection:', '')} mutated inside a function` });
  return findings;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return tsFiles(p);
    return e.isFile() && e.name.endsWith('.ts') ? [p] : [];
  });
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

/** Every finding of the source tree, by id (scanned once per run). */
let scanned: Map<string, Finding> | undefined;
function scanTree(): Map<string, Finding> {
  if (scanned) return scanned;
  const files = sourceFiles();
  expect(files.length).toBeGreaterThan(100);
  scanned = new Map(files.flatMap((f) => findModuleState(f, readFileSync(path.join(ROOT, f), 'utf8'))).map((x) => [x.id, x]));
  return scanned;
}

test('negative control: registries, counters, caches and mutable statics are found; constant tables are not', () => {
  const fixture = [
    "import type pg from 'pg';",
    'const caches = new WeakMap<pg.Pool, Cache>();',
    'export function cacheFor(pool: pg.Pool): Cache {',
    '  let c = caches.get(pool);',
    '  if (!c) caches.set(pool, (c = new Cache()));',
    '  return c;',
    '}',
    'let requests = 0;',
    'export const all = new Set<WeakRef<Cache>>();',
    'export const registry = new CacheRegistry();',
    'const ref = new WeakRef(registry);',
    'const seen: string[] = [];',
    'const byName: Record<string, number> = {};',
    'export function remember(name: string): void {',
    '  seen.push(name);',
    '  byName[name] = (byName[name] ?? 0) + 1;',
    '  all.add(ref);',
    '}',
    'class Cache {',
    '  static hits = 0;',
    '  static readonly instances = new Map<string, Cache>();',
    '  static readonly LIMIT = 10;',
    '  private readonly entries = new Map<string, string>();',
    '}',
    // Constants: filled while the module loads, or never mutated, or values.
    "const STATES = new Set(['a', 'b']);",
    "const LOOKUP = new Map([['a', 1]]);",
    "LOOKUP.set('b', 2);",
    'const DEFAULTS = { limit: 10 } as const;',
    'const PATTERN = new RegExp(`^x$`);',
    "const FORMAT = new Intl.NumberFormat('de-CH');",
    'const NAMES = [...STATES].sort();',
    'const config = loadConfig();',
    'export function read(): number { return (LOOKUP.get("a") ?? 0) + DEFAULTS.limit + NAMES.length + (STATES.has("a") ? 1 : 0); }',
  ].join('\n');
  const found = findModuleState('fixture.ts', fixture).map((f) => f.id.replace('fixture.ts:', ''));
  expect(found.sort()).toEqual(['Cache.hits', 'Cache.instances', 'all', 'byName', 'caches', 'ref', 'registry', 'requests', 'seen'].sort());
  // A set that is only read, and a table mutated only by module initialisation, are constants.
  expect(findModuleState('x.ts', "const S = new Set(['a']);\nexport const has = (v: string) => S.has(v);")).toEqual([]);
  expect(findModuleState('x.ts', "const S = new Set(['a']);\nexport const add = (v: string) => S.add(v);")).toHaveLength(1);
});

test('services and packages keep no module-level mutable state beyond the documented allow-lists', () => {
  const findings = scanTree();
  const allowed = new Set(Object.keys(CONSTANT_MEMO_TABLES));
  const offenders = [...findings.values()].filter((f) => !allowed.has(f.id)).map((f) => `${f.id} (line ${f.line}): ${f.why}`);
  // Build the state once in the service's composition root (src/composition.ts of each) and hand it down; a
  // memo of constants goes into CONSTANT_MEMO_TABLES with its reason.
  expect(offenders).toEqual([]);
});

test('every allow-list entry is still found and gives its reason', () => {
  const findings = scanTree();
  for (const [id, reason] of Object.entries(CONSTANT_MEMO_TABLES)) {
    expect([id, findings.has(id)]).toEqual([id, true]);
    expect(reason.length).toBeGreaterThan(20);
  }
});
