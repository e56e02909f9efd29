/**
 * The specs as the single source (docs/architecture.md, "The spec is the single source"): a default, limit or
 * path that specs/*.yaml states is read from the loaded spec (packages/shared/src/spec-values.ts) or taken
 * from the generated types, never written a second time in the code. This test reads both specs and scans the
 * sources of the services and packages (generated code and comments left out) for the three ways such values
 * used to be restated:
 *
 * - a default repeated with `??`: `<name> ?? <default>` for every parameter and property with a `default`
 *   (`limit ?? 1000`, `culture ?? 'en'`, `emailOptIn ?? false`). The request validator fills defaults in (ajv
 *   `useDefaults`), so a handler takes the value as validated (shared `specFilled`);
 * - a limit the code enforces itself ({@link LIMITS}) as a constant of its service: `const MAX_… = <value>;`
 *   (`MAX_BATCH = 10_000`, `MIN_PASSWORD_LENGTH = 12`);
 * - an operation's path as a constant (a fast lane finds its path by `operationId`).
 *
 * The rules are built from the specs' current values; the scanner test is their negative control (the lines
 * the code held before this rule). {@link ALLOWED} lists the matches left, each with its reason.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import {
  componentSchemaOf,
  findOperation,
  loadSpec,
  parameterSchemaOf,
  requestBodySchemaOf,
  responseSchemaOf,
  specNumber,
  type OpenApiDocument,
} from '@sports-timing/shared';

const ROOT = path.resolve(__dirname, '..');
const SPECS = ['specs/timing.yaml', 'specs/ordering.yaml'];

type Node = Record<string, unknown>;

/** A limit a service enforces in its own code (beyond the request validator), read from its spec. */
interface Limit {
  spec: string;
  where: string;
  keyword: string;
  schema: (doc: OpenApiDocument) => Node;
  /** The sources that must not restate it. */
  dir: string;
}

const property = (doc: OpenApiDocument, schema: string, name: string) => (componentSchemaOf(doc, schema).properties as Record<string, Node>)[name];

const LIMITS: readonly Limit[] = [
  {
    spec: 'specs/timing.yaml',
    where: 'getPunches page maxItems',
    keyword: 'maxItems',
    schema: (d) => responseSchemaOf(d, 'getPunches'),
    dir: 'services/timing',
  },
  {
    spec: 'specs/timing.yaml',
    where: 'postPunches maxItems',
    keyword: 'maxItems',
    schema: (d) => requestBodySchemaOf(d, 'postPunches'),
    dir: 'services/timing',
  },
  {
    spec: 'specs/timing.yaml',
    where: 'postPunches x-max-new-modems',
    keyword: 'x-max-new-modems',
    schema: (d) => findOperation(d, 'postPunches').operation,
    dir: 'services/timing',
  },
  {
    spec: 'specs/timing.yaml',
    where: 'postPunches x-max-modems-per-user',
    keyword: 'x-max-modems-per-user',
    schema: (d) => findOperation(d, 'postPunches').operation,
    dir: 'services/timing',
  },
  {
    spec: 'specs/timing.yaml',
    where: 'getPunches modem x-max-list-items',
    keyword: 'x-max-list-items',
    schema: (d) => parameterSchemaOf(d, 'getPunches', 'modem'),
    dir: 'services/timing',
  },
  {
    spec: 'specs/timing.yaml',
    where: 'NewPunch.card x-value-maximum',
    keyword: 'x-value-maximum',
    schema: (d) => property(d, 'NewPunch', 'card'),
    dir: 'services',
  },
  {
    spec: 'specs/ordering.yaml',
    where: 'NewUser.password minLength',
    keyword: 'minLength',
    schema: (d) => property(d, 'NewUser', 'password'),
    dir: 'services/ordering',
  },
  {
    spec: 'specs/ordering.yaml',
    where: 'NewUser.password maxLength',
    keyword: 'maxLength',
    schema: (d) => property(d, 'NewUser', 'password'),
    dir: 'services/ordering',
  },
  {
    spec: 'specs/ordering.yaml',
    where: 'devGetRandomPassword length minimum',
    keyword: 'minimum',
    schema: (d) => parameterSchemaOf(d, 'devGetRandomPassword', 'length'),
    dir: 'services/ordering/src/devtools',
  },
];

/** How a constant holding a limit is named (`MAX_BATCH`, `MIN_PASSWORD_LENGTH`, `PAGE_SIZE`). */
const LIMIT_NAME = '(?:[A-Z0-9_]*_)?(?:MAX|MIN|LIMIT|SIZE|LENGTH|BATCH)(?:_[A-Z0-9_]*)?';

/**
 * Matches left (`<file>: <rule>`, file relative to the repository root), each with its reason. Only shrinks;
 * each entry must still match (last test).
 */
const ALLOWED: Readonly<Record<string, string>> = {
  // `afterId` has a default (0) only in getPublicEventPunches; elsewhere absent means "from the first one".
  'services/timing/src/events/events.service.ts: default afterId ?? 0': 'listEvents declares afterId without a default: absent is from the start',
  'services/timing/src/http/live.handlers.ts: default afterId ?? 0': 'getPunchStream declares afterId without a default: absent is from the start',
  'services/timing/src/punches/punch-scope.ts: default afterId ?? 0': 'getPunches declares afterId without a default; the fast lane passes it absent',
  'packages/timing-client/src/index.ts: default afterId ?? 0': "the client's own start position of a poll, not a server default",
  // The item quantity of an order read from the ERP or the demo catalogue, not a request value.
  'services/ordering/src/demo/catalog.ts: default quantity ?? 1': 'a demo catalogue entry without a quantity, not a request value',
  'services/ordering/src/quotations/center-quotation.service.ts: default quantity ?? 1': 'an ERP quotation line without a quantity, not a request value',
  'packages/erp-simulator/src/seed.ts: default quantity ?? 1': "the ERP simulator's seed data, not a request value",
  'services/ordering/src/orders/placement/cart.ts: default currency ?? "EUR"': 'the cart currency of a catalogue price, not a request value',
  'services/ordering/src/payment/payment.client.ts: default limit ?? 100':
    "Payrexx's page size of its transaction list (it caps `limit` at 100), not a value of our spec",
  // Numbers equal to a limit by coincidence.
  'services/timing/src/demo/load.ts: getPunches page maxItems (1000) as a constant': "the demo loader's upload batch size, not the page size",
  'services/timing/src/events/event-cache.ts: postPunches maxItems (10000) as a constant': 'entries of the event cache, not punches per upload',
  'services/timing/src/demo/load.ts: postPunches x-max-modems-per-user (1000) as a constant': "the demo loader's upload batch size, not a modem cap",
  'services/ordering/src/discounts/discounts.service.ts: NewUser.password minLength (12) as a constant': 'characters of a generated discount code',
};

/** What the specs state: defaults by name, the enforced limits, operation paths. */
interface SpecFacts {
  defaults: { name: string; value: string | number | boolean }[];
  limits: { where: string; value: number; dir: string }[];
  paths: Set<string>;
}

function collect(): SpecFacts {
  const facts: SpecFacts = { defaults: [], limits: [], paths: new Set() };
  const walk = (node: unknown, name: string | undefined): void => {
    if (Array.isArray(node)) return node.forEach((n) => walk(n, name));
    if (typeof node !== 'object' || node === null) return;
    const o = node as Node;
    // A parameter names its schema; a property is named by its key in `properties`.
    const own = typeof o.name === 'string' && 'in' in o ? o.name : name;
    if ('default' in o && own !== undefined && ['string', 'number', 'boolean'].includes(typeof o.default)) {
      facts.defaults.push({ name: own, value: o.default as string | number | boolean });
    }
    for (const [k, v] of Object.entries(o)) {
      if (k === 'properties' && typeof v === 'object' && v !== null) for (const [p, s] of Object.entries(v)) walk(s, p);
      else if (k === 'schema') walk(v, own);
      else if (k !== 'example' && k !== 'examples') walk(v, k === 'items' ? own : undefined);
    }
  };
  for (const file of SPECS) {
    const spec = yaml.load(readFileSync(path.join(ROOT, file), 'utf8')) as Node;
    for (const p of Object.keys(spec.paths as Node)) facts.paths.add(p);
    walk(spec, undefined);
  }
  for (const l of LIMITS) facts.limits.push({ where: l.where, value: specNumber(l.schema(loadSpec(path.join(ROOT, l.spec))), l.keyword, l.where), dir: l.dir });
  return facts;
}

/** A number as the code may spell it: `10000`, `10_000`. */
function numberPattern(n: number): string {
  const plain = String(n);
  const grouped = plain.replace(/\B(?=(\d{3})+(?!\d))/g, '_');
  return grouped === plain ? `${plain}\\b` : `(?:${plain}|${grouped})\\b`;
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function literalPattern(v: string | number | boolean): string {
  if (typeof v === 'string') return `['"\`]${escape(v)}['"\`]`;
  if (typeof v === 'number') return numberPattern(v);
  return `${v}\\b`;
}

/** A rule of the scanner: its name in the report, the pattern, and the directory it applies to (default: all). */
interface Rule {
  rule: string;
  pattern: RegExp;
  dir?: string;
}

function rules(facts: SpecFacts): Rule[] {
  const out = new Map<string, Rule>();
  for (const d of facts.defaults) {
    const rule = `default ${d.name} ?? ${JSON.stringify(d.value)}`;
    out.set(rule, { rule, pattern: new RegExp(`\\b${escape(d.name)}\\s*\\?\\?\\s*${literalPattern(d.value)}`) });
  }
  for (const l of facts.limits) {
    const rule = `${l.where} (${l.value}) as a constant`;
    out.set(rule, { rule, dir: l.dir, pattern: new RegExp(`\\bconst\\s+${LIMIT_NAME}(?:\\s*:\\s*\\w+)?\\s*=\\s*${numberPattern(l.value)}\\s*;`) });
  }
  for (const p of facts.paths) {
    const rule = `path ${p} as a constant`;
    out.set(rule, { rule, pattern: new RegExp(`\\bconst\\s+\\w+(?:\\s*:\\s*\\w+)?\\s*=\\s*['"\`]${escape(p)}['"\`]`) });
  }
  return [...out.values()];
}

/** Source text without block comments and whole-line `//` comments. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/^\s*\/\/.*$/gm, '');
}

/** The rules `text` (of `file`, relative to the root) breaks, one entry per line and rule. */
function scan(text: string, all: readonly Rule[], file: string): { line: number; rule: string }[] {
  const hits: { line: number; rule: string }[] = [];
  withoutComments(text)
    .split('\n')
    .forEach((line, i) => {
      for (const r of all) if ((r.dir === undefined || file.startsWith(`${r.dir}/`)) && r.pattern.test(line)) hits.push({ line: i + 1, rule: r.rule });
    });
  return hits;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return ['generated', 'node_modules', 'dist'].includes(e.name) ? [] : sourceFiles(p);
    return e.isFile() && e.name.endsWith('.ts') ? [p] : [];
  });
}

/** Every `.ts` file under `services/*\/src` and `packages/*\/src`, relative to the root. */
function sources(): string[] {
  return ['services', 'packages'].flatMap((top) =>
    readdirSync(path.join(ROOT, top), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .flatMap((e) => {
        const src = path.join(ROOT, top, e.name, 'src');
        try {
          return sourceFiles(src);
        } catch {
          return [];
        }
      })
      .map((abs) => path.relative(ROOT, abs).split(path.sep).join('/')),
  );
}

const facts = collect();
const all = rules(facts);

test('the specs state the values this test looks for', () => {
  expect(facts.defaults).toEqual(
    expect.arrayContaining([
      { name: 'limit', value: 1000 },
      { name: 'culture', value: 'en' },
    ]),
  );
  expect(facts.limits.map((l) => l.value)).toEqual([1000, 10000, 100, 1000, 200, 16777215, 12, 128, 8]);
  expect(facts.paths.has('/api/rest/v1/punches')).toBe(true);
});

test('the scanner finds the restatements the code used to hold (negative control), and skips comments', () => {
  const timing = [
    'const q = { eventId: req.params.eventId, afterId: req.query.afterId, limit: req.query.limit ?? 1000 };',
    'const MAX_BATCH = 10_000;',
    'const MAX_MODEMS_PER_QUERY = 200;',
    'const MAX_CARD_NUMBER = 16_777_215;',
    "const PATH = '/api/rest/v1/punches';",
    '// limit ?? 1000 in a comment',
    'const n = opts.limit ?? PAGE_SIZE;',
    'const MAX_BATCH = 10_0000;',
    'export const MAX_NEW_MODEMS_PER_UPLOAD = 100;',
  ].join('\n');
  expect(scan(timing, all, 'services/timing/src/x.ts').map((h) => h.line)).toEqual([1, 2, 3, 4, 5, 9]);
  const ordering = ["contact: { ...c, emailOptIn: c.emailOptIn ?? false, culture: c.culture ?? 'en' },", 'const MIN_PASSWORD_LENGTH = 12;'].join('\n');
  expect(scan(ordering, all, 'services/ordering/src/identity/x.ts').map((h) => h.rule)).toEqual([
    'default emailOptIn ?? false',
    'default culture ?? "en"',
    'NewUser.password minLength (12) as a constant',
  ]);
  // A limit is only a restatement in the sources of the service that enforces it.
  expect(scan('const MIN_PASSWORD_LENGTH = 12;', all, 'services/timing/src/x.ts')).toEqual([]);
});

test('no default, limit or path of the specs is written a second time in the services and packages', () => {
  const files = sources();
  expect(files.length).toBeGreaterThan(100);
  const offenders = files.flatMap((file) =>
    scan(readFileSync(path.join(ROOT, file), 'utf8'), all, file)
      .filter((h) => !(`${file}: ${h.rule}` in ALLOWED))
      .map((h) => `${file}:${h.line}: ${h.rule}`),
  );
  // Read the value from the loaded spec (packages/shared/src/spec-values.ts) or use the generated types.
  expect(offenders).toEqual([]);
});

test('every allow-listed match gives a reason and still occurs', () => {
  for (const [key, reason] of Object.entries(ALLOWED)) {
    expect(reason.trim().length).toBeGreaterThan(10);
    const [file, rule] = key.split(': ');
    expect(scan(readFileSync(path.join(ROOT, file), 'utf8'), all, file).map((h) => h.rule)).toContain(rule);
  }
});
