/**
 * `pnpm build`: compiles every workspace package (services/*, packages/*) from `src/**\/*.ts` to CommonJS
 * JavaScript in `<package>/dist/` with source maps, file by file (esbuild transform, no bundling).
 *
 * Why file by file and not a bundle: the code locates its assets relative to `__dirname` (the specs, the demo
 * event, package.json, swagger-ui-dist), so `dist/` mirrors `src/` at the same depth and every relative path
 * stays valid; third-party packages keep resolving through each package's own node_modules (pnpm layout).
 * Workspace imports (`@sports-timing/shared`, `@sports-timing/shared/src/embedded`) reach the compiled files
 * through the `dist` export condition of each package.json: run the output with
 * `node --conditions=dist --enable-source-maps services/timing/dist/server.js`. Without that condition the
 * same imports resolve to the TypeScript sources (tsx, jest, tsc), so development is unchanged.
 *
 * Besides the `.js` files, the timing migrations' function texts (`src/db/functions/*.sql`) are copied into
 * `dist/db/functions/`: the migrations read them at run time.
 *
 * Type-checking is `pnpm typecheck` (tsc --noEmit over the workspace); this step only emits.
 * Usage: `pnpm build [package-dir…]` (default: every package with a src/ folder).
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { writeWebBundles } from '../services/timing/src/http/web-assets';

const root = path.join(__dirname, '..');

/** Workspace package directories (relative to the repository root) that have a `src/` folder. */
function workspacePackages(): string[] {
  const dirs: string[] = [];
  for (const parent of ['packages', 'services']) {
    for (const name of readdirSync(path.join(root, parent)).sort()) {
      const dir = path.join(parent, name);
      if (existsSync(path.join(root, dir, 'src')) && existsSync(path.join(root, dir, 'package.json'))) dirs.push(dir);
    }
  }
  return dirs;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const file = path.join(dir, entry);
    if (statSync(file).isDirectory()) out.push(...sourceFiles(file));
    else if (entry.endsWith('.ts') && !entry.endsWith('.d.ts')) out.push(file);
  }
  return out;
}

/**
 * Compiles one package's `src/` into a fresh `dist/`; returns the number of files written. The output is
 * written beside `dist/` and swapped in by two renames, so a process starting from `dist/` while a build runs
 * (a test starting compiled services during another test's build) finds a whole build, old or new, never a
 * half-written or missing one.
 */
async function buildPackage(dir: string): Promise<number> {
  const pkgDir = path.join(root, dir);
  const dist = path.join(pkgDir, 'dist');
  const outdir = path.join(pkgDir, `dist.next-${process.pid}`);
  const old = path.join(pkgDir, `dist.old-${process.pid}`);
  rmSync(outdir, { recursive: true, force: true });
  const entryPoints = sourceFiles(path.join(pkgDir, 'src'));
  await build({
    entryPoints,
    outbase: path.join(pkgDir, 'src'),
    outdir,
    bundle: false,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    // Sources embedded: a stack trace maps to readable TypeScript even in an image without src/.
    sourcesContent: true,
    // `await import('./x')` becomes `require('./x')`: kept as a real import(), Node would load the target as
    // an ES module and refuse the extension-less relative path.
    supported: { 'dynamic-import': false },
    logLevel: 'warning',
  });
  // Files the code reads at run time next to its modules: the function texts the timing migrations apply
  // (src/db/functions/*.sql, docs/database.md "Function texts"). The other .sql files under src/ are renderings
  // for review (pnpm sql), not inputs, and stay out.
  const functions = path.join(pkgDir, 'src', 'db', 'functions');
  if (existsSync(functions)) {
    mkdirSync(path.join(outdir, 'db', 'functions'), { recursive: true });
    for (const file of readdirSync(functions).filter((f) => f.endsWith('.sql')))
      copyFileSync(path.join(functions, file), path.join(outdir, 'db', 'functions', file));
  }
  // A package with browser pages (web/, the timing service's live page and console) gets their bundles too.
  if (existsSync(path.join(pkgDir, 'web', 'tsconfig.json'))) await writeWebBundles(path.join(outdir, 'web'));
  // Another build may swap its own output in between: then move that one aside too and try again.
  for (let attempt = 1; ; attempt++) {
    try {
      if (existsSync(dist)) renameSync(dist, old);
      renameSync(outdir, dist);
      break;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (attempt >= 5 || (code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'ENOENT')) throw err;
      rmSync(old, { recursive: true, force: true });
    }
  }
  rmSync(old, { recursive: true, force: true });
  return entryPoints.length;
}

async function main(): Promise<void> {
  const requested = process.argv.slice(2);
  const dirs = requested.length ? requested.map((d) => path.normalize(d)) : workspacePackages();
  const started = Date.now();
  for (const dir of dirs) {
    const n = await buildPackage(dir);
    console.log(`[build] ${dir}: ${n} files → ${dir}/dist`);
  }
  console.log(`[build] done in ${Date.now() - started} ms`);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
