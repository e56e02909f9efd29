/**
 * Layering rules of docs/architecture.md §1 ("Layers inside a service", "Folder layers").
 *
 * SQL lives in repositories. No Kysely
 * query builder call (`selectFrom`, `insertInto`, `updateTable`, `deleteFrom`, `replaceInto`, `mergeInto`), no
 * `sql` template (`` sql`…` ``, `` sql<T>`…` ``, `sql.raw(…)`) and no `pg` call (`.query(…)`, `.query<T>(…)`:
 * LISTEN, advisory locks and plain statements alike) may appear in `services/<name>/src` or `packages/<name>/src`
 * outside `*.repository.ts` files, a service's `src/db/**` (schema, migrations) and the files of {@link ALLOWED},
 * each with its reason. Comments are ignored.
 *
 * Each service's folders import one way: {@link ORDERING_LAYERS} and {@link TIMING_LAYERS} list the top-level
 * folders (and the files directly in `src`) of the service's `src` from the top (entry points) down; a module
 * may import only from its own folder and from folders of lower layers, never upwards and never sideways into
 * another folder of its own layer. A folder or root file missing from the list fails the test, so each new
 * one is placed. Inside a unit, {@link FOLDER_LAYERS} orders the sub-folders of a large folder (ordering's
 * `orders/`: placement and admin → flow → mail → the core files directly in the folder) by the same rule.
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
    'the database factory: migrations under their advisory lock, the advisory-lock helper, and the readiness and version probes that every service uses',
  'packages/shared/src/listen.ts': 'sends LISTEN on the dedicated notification sessions of both services',
  'packages/shared/src/testing.ts': 'creates and drops the throw-away test databases (no service schema exists yet)',
  'packages/shared/src/embedded.ts': 'creates the database of the embedded PostgreSQL of `pnpm start` before any schema exists',
  'packages/launcher/src/backup.ts':
    "`pnpm backup`/`pnpm restore` on the embedded cluster itself: the base-backup functions and a restore's move of the punch ids, while no service runs (docs/backup.md)",
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

/**
 * Ordering's layers, top down (docs/architecture.md "Folder layers"). A unit is a top-level folder
 * of `services/ordering/src` or a file directly in it.
 */
const ORDERING_LAYERS: readonly (readonly string[])[] = [
  // Process entry points.
  ['server.ts', 'migrate.ts'],
  // The Express app: middleware, validator, handler map; the start-up checks of settings, development defaults and third parties.
  ['app.ts', 'startup-checks.ts', 'development-defaults.ts'],
  // One handler per operationId; thin.
  ['http'],
  // Builds the long-lived objects once and says which handler runs which outbox job and ERP webhook entity.
  ['composition.ts'],
  // The dependencies type of the app.
  ['context.ts'],
  // Start-up data, utilities and gauges that read several domains.
  ['demo', 'devtools', 'metrics'],
  // The orders (placement, flow after storing, operator views, mails; layered inside by ORDERS_LAYERS) and the Center quotation.
  ['orders', 'quotations'],
  // Domains the orders use, each on its own.
  ['battery', 'discounts', 'identity', 'localization', 'retailers'],
  // The catalogue (used by discounts, localization and the orders).
  ['catalog'],
  // Services the domains above stand on: the ERP client and webhook worker, caches and maintenance flag,
  // the job outbox, the payment client, card numbers.
  ['erp', 'maintenance', 'outbox', 'payment', 'siid'],
  ['auth', 'countries', 'crypto', 'mail'],
  // Pure helpers: language tags, money arithmetic.
  ['culture', 'money'],
  // Table types, the DB type and migrations: below every domain.
  ['db'],
  ['config.ts', 'version.ts', 'generated'],
];

/** Timing's layers, top down (docs/architecture.md "Folder layers of timing"); units as for ordering. */
const TIMING_LAYERS: readonly (readonly string[])[] = [
  ['server.ts', 'migrate.ts'],
  // The Express app; the start-up tasks (bootstrap key, demo event).
  ['app.ts', 'bootstrap.ts'],
  // The composition root: builds every stateful object of one app once and hands it down.
  ['composition.ts'],
  // Handlers; the demo data loader (uploads through the punch service).
  ['demo', 'http'],
  ['metrics.ts'],
  // Long-poll and stream: the hub, its LISTEN session and the waiting reads.
  ['live'],
  ['punches'],
  ['events'],
  ['modems', 'users'],
  ['config.ts'],
  ['auth'],
  ['db'],
  ['version.ts', 'generated'],
];

/** The layers of each service's `src`, checked by the tests below. */
const SERVICE_LAYERS: Readonly<Record<string, readonly (readonly string[])[]>> = {
  'services/ordering/src': ORDERING_LAYERS,
  'services/timing/src': TIMING_LAYERS,
};

/** The unit of a path relative to a service's `src` (`catalog/x.ts` → `catalog`, `app.ts` → `app.ts`). */
function unitOf(relToSrc: string): string {
  return relToSrc.split('/')[0];
}

const IMPORT = /\b(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

/**
 * `line: text (unit → unit)` of every relative import in `text` (the source of `file`, relative to the root and
 * inside one of {@link SERVICE_LAYERS}) that leaves its unit for a unit that is not in a lower layer. Throws
 * when a unit is not listed.
 */
function upwardImports(file: string, text: string): string[] {
  const src = Object.keys(SERVICE_LAYERS).find((dir) => file.startsWith(`${dir}/`));
  if (src === undefined) throw new Error(`${file} is in no service of SERVICE_LAYERS`);
  const layerOf = new Map(SERVICE_LAYERS[src].flatMap((units, i) => units.map((u) => [u, i] as const)));
  const from = unitOf(path.posix.relative(src, file));
  const fromLayer = layerOf.get(from);
  if (fromLayer === undefined) throw new Error(`${file}: its unit ${from} is not in the layers of ${src}; place it in a layer`);
  const code = withoutComments(text);
  const hits: string[] = [];
  for (const m of code.matchAll(IMPORT)) {
    const target = path.posix.relative(src, path.posix.join(path.posix.dirname(file), m[1]));
    if (target.startsWith('..')) continue;
    // `../config` is the file config.ts, `./http` the folder http (its index.ts).
    const bare = !target.includes('/') && !target.endsWith('.ts') && !existsSync(path.join(ROOT, src, target));
    const to = unitOf(bare ? `${target}.ts` : target);
    if (to === from) continue;
    const toLayer = layerOf.get(to);
    if (toLayer === undefined) throw new Error(`${file}: imports ${m[1]}, whose unit ${to} is not in the layers of ${src}`);
    if (toLayer <= fromLayer) hits.push(`${code.slice(0, m.index).split('\n').length}: ${m[1]} (${from} → ${to})`);
  }
  return hits;
}

/**
 * The sub-folders of ordering's `orders/`, top down (docs/architecture.md "The orders folder"). `.` is its core: the
 * files directly in `orders/` (states, types, the orders repository and mapper, couriers).
 */
const ORDERS_LAYERS: readonly (readonly string[])[] = [
  // Placing an order (cart, checks, totals, idempotency); the operator views (listing, attention list).
  ['placement', 'admin'],
  // What happens after an order is stored: paylinks, payment status, ERP hand-off, expiry, sales-order sync.
  ['flow'],
  // The order e-mails and their texts.
  ['mail'],
  ['.'],
];

/** Folders (relative to the root) whose sub-folders are layered too, each with its layers. */
const FOLDER_LAYERS: Readonly<Record<string, readonly (readonly string[])[]>> = {
  'services/ordering/src/orders': ORDERS_LAYERS,
};

/** The unit of a path relative to a layered folder: its sub-folder, or `.` for a file directly in it. */
function subUnitOf(dir: string, relToDir: string): string {
  const [first, ...rest] = relToDir.split('/');
  if (rest.length > 0) return first;
  // `./flow` is the folder flow (its index.ts), `./cart` a file of the core.
  return existsSync(path.join(ROOT, dir, first)) && !first.endsWith('.ts') ? first : '.';
}

/**
 * `line: text (unit → unit)` of every relative import in `text` (the source of `file`, relative to the root) that
 * stays inside the layered folder of {@link FOLDER_LAYERS} holding `file` but leaves its sub-folder for one that is
 * not in a lower layer. Files outside those folders have none. Throws when a sub-folder is not listed.
 */
function upwardFolderImports(file: string, text: string): string[] {
  const dir = Object.keys(FOLDER_LAYERS).find((d) => file.startsWith(`${d}/`));
  if (dir === undefined) return [];
  const layerOf = new Map(FOLDER_LAYERS[dir].flatMap((units, i) => units.map((u) => [u, i] as const)));
  const from = subUnitOf(dir, path.posix.relative(dir, file));
  const fromLayer = layerOf.get(from);
  if (fromLayer === undefined) throw new Error(`${file}: its sub-folder ${from} is not in the layers of ${dir}; place it in a layer`);
  const code = withoutComments(text);
  const hits: string[] = [];
  for (const m of code.matchAll(IMPORT)) {
    const target = path.posix.relative(dir, path.posix.join(path.posix.dirname(file), m[1]));
    if (target.startsWith('..')) continue;
    const to = subUnitOf(dir, target);
    if (to === from) continue;
    const toLayer = layerOf.get(to);
    if (toLayer === undefined) throw new Error(`${file}: imports ${m[1]}, whose sub-folder ${to} is not in the layers of ${dir}`);
    if (toLayer <= fromLayer) hits.push(`${code.slice(0, m.index).split('\n').length}: ${m[1]} (${from} → ${to})`);
  }
  return hits;
}

test('the import checker flags upward and sideways imports and lets downward ones pass', () => {
  const file = 'services/ordering/src/catalog/bad.ts';
  const sample = [
    "import { JsonBody } from '../http/json-body';",
    "import { mapper } from './catalog.mapper';",
    "import type { DB } from '../db/schema';",
    "export { enqueue } from '../outbox/outbox.service';",
    "const m = await import('../orders/placement/cart');",
    "// import { x } from '../http/commented';",
    "import { composeOrdering } from '../composition';",
    "import { loadOrderingConfig } from '../config';",
    "import { discount } from '../discounts/discounts.service';",
  ].join('\n');
  expect(upwardImports(file, sample).map((h) => Number(h.split(':')[0]))).toEqual([1, 5, 7, 9]);
  // Sideways: two folders of one layer stay independent.
  expect(upwardImports('services/ordering/src/erp/bad.ts', "import { caches } from '../maintenance/caches';")).toHaveLength(1);
  expect(upwardImports('services/timing/src/punches/bad.ts', "import { LiveHub } from '../live/hub';")).toHaveLength(1);
  expect(upwardImports('services/timing/src/live/ok.ts', "import { readPunches } from '../punches/punches.service';")).toEqual([]);
  expect(() => upwardImports('services/ordering/src/newfolder/x.ts', '')).toThrow(/not in the layers/);
});

test('the sub-folder checker flags upward and sideways imports inside orders/ and lets downward ones pass', () => {
  const orders = 'services/ordering/src/orders';
  const lines = (file: string, sample: string[]) => upwardFolderImports(`${orders}/${file}`, sample.join('\n')).map((h) => Number(h.split(':')[0]));
  // From placement: down to flow, mail and the core pass; its own files pass; sideways into admin does not.
  expect(
    lines('placement/bad.ts', [
      "import { newOrderJobs } from '../flow/flow-jobs';",
      "import { renderOrderConfirmation } from '../mail/order-confirmation.mail';",
      "import { findOrder } from '../orders.mapper';",
      "import { buildCart } from './cart';",
      "import { listOrders } from '../admin/order-listing';",
      "// import { x } from '../admin/commented';",
    ]),
  ).toEqual([5]);
  // From flow: placement and admin are above it.
  expect(
    lines('flow/bad.ts', [
      "import { placeShopOrder } from '../placement/orders.service';",
      "import { renderPaylinkMail } from '../mail/order-confirmation.mail';",
      "const m = await import('../admin/attention.service');",
      "import { transitionOrder } from '../order-states';",
    ]),
  ).toEqual([1, 3]);
  // From mail, flow is above; from the core every sub-folder is.
  expect(lines('mail/bad.ts', ["import { FLOW_JOBS } from '../flow/flow-jobs';", "import type { StoredOrder } from '../order.types';"])).toEqual([1]);
  expect(lines('bad.ts', ["import { renderPaylinkMail } from './mail/order-confirmation.mail';", "import { isCourierId } from './couriers';"])).toEqual([1]);
  // Imports leaving orders/ are the service layers' business; files outside orders/ have no sub-folder rule.
  expect(lines('mail/ok.ts', ["import { Mailer } from '../../mail/mailer';"])).toEqual([]);
  expect(upwardFolderImports('services/ordering/src/http/x.ts', "import { listOrders } from '../orders/admin/order-listing';")).toEqual([]);
  expect(() => upwardFolderImports(`${orders}/newfolder/x.ts`, '')).toThrow(/not in the layers/);
});

test.each(Object.keys(FOLDER_LAYERS))('%s: sub-folders import one way, down its layers', (dir) => {
  const files = tsFiles(path.join(ROOT, dir)).map((abs) => path.relative(ROOT, abs).split(path.sep).join('/'));
  expect(files.length).toBeGreaterThan(20);
  const offenders = files.flatMap((file) => upwardFolderImports(file, readFileSync(path.join(ROOT, file), 'utf8')).map((h) => `${file}:${h}`));
  // Move the imported code down (often into the core) or hand it in from the composition root.
  expect(offenders).toEqual([]);
});

test.each(Object.keys(FOLDER_LAYERS))('%s: every sub-folder of its layers exists and appears once, and every sub-folder is listed', (dir) => {
  const units = FOLDER_LAYERS[dir].flat();
  expect(new Set(units).size).toBe(units.length);
  for (const u of units) expect(existsSync(path.join(ROOT, dir, u))).toBe(true);
  const folders = readdirSync(path.join(ROOT, dir), { withFileTypes: true }).filter((e) => e.isDirectory() && tsFiles(path.join(ROOT, dir, e.name)).length > 0);
  expect(folders.map((e) => e.name).filter((n) => !units.includes(n))).toEqual([]);
});

test.each(Object.keys(SERVICE_LAYERS))("%s: folders import one way, down the service's layers", (src) => {
  const files = tsFiles(path.join(ROOT, src)).map((abs) => path.relative(ROOT, abs).split(path.sep).join('/'));
  expect(files.length).toBeGreaterThan(30);
  const offenders = files.flatMap((file) => upwardImports(file, readFileSync(path.join(ROOT, file), 'utf8')).map((h) => `${file}:${h}`));
  // Move the imported code down to where both can use it, or hand it in from the composition root.
  expect(offenders).toEqual([]);
});

test.each(Object.keys(SERVICE_LAYERS))('%s: every unit of its layers exists and appears once', (src) => {
  const units = SERVICE_LAYERS[src].flat();
  expect(new Set(units).size).toBe(units.length);
  for (const u of units) expect(existsSync(path.join(ROOT, src, u))).toBe(true);
});

test('repositories take the transaction from their service and never open one (`.transaction()`)', () => {
  const opening = /\.transaction\s*\(\s*\)/;
  expect(opening.test('return db.transaction().execute(async (trx) => {')).toBe(true);
  const offenders = sourceFiles()
    .filter((f) => f.endsWith('.repository.ts'))
    .filter((f) => opening.test(withoutComments(readFileSync(path.join(ROOT, f), 'utf8'))));
  // Open it in the service and pass `trx` to the repository functions (docs/architecture.md §1).
  expect(offenders).toEqual([]);
});
