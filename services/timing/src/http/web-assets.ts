/**
 * The browser code of the timing service's pages (the live page and the organiser's console): TypeScript under
 * `services/timing/web/`, bundled by esbuild into one script per page (no CDN, no inline script, so the pages
 * keep the strict Content-Security-Policy of `pageSecurityHeaders`).
 *
 * Compiled (`pnpm build`, `start:prod`, the image): scripts/build.ts writes the bundles into `dist/web/` and
 * they are served from there; the image carries no esbuild. From the sources (`pnpm start`, jest): bundled in
 * memory on the first request, once per app (esbuild is a development dependency).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { BuildOptions } from 'esbuild';

/** The pages' source folder (beside src/ and dist/). */
export const WEB_DIR = path.join(__dirname, '../../web');
/** Where `pnpm build` puts the bundles: `dist/web` (from src/ this folder does not exist). */
const BUILT_DIR = path.join(__dirname, '../web');

/** Bundle name (as served under `/live/` and `/console/`) → entry point under web/. */
const ENTRIES = { 'live.js': 'live-page.ts', 'console.js': 'console.ts' } as const;

/** esbuild's options for the bundles: browser IIFE scripts, minified, with a linked source map. */
function bundleOptions(): BuildOptions {
  return {
    entryPoints: Object.entries(ENTRIES).map(([out, entry]) => ({ in: path.join(WEB_DIR, entry), out: out.replace(/\.js$/, '') })),
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    sourcemap: 'linked',
    tsconfig: path.join(WEB_DIR, 'tsconfig.json'),
    logLevel: 'warning',
  };
}

/** Writes the bundles (and their source maps) into `outdir` (scripts/build.ts, into `dist/web`). */
export async function writeWebBundles(outdir: string): Promise<void> {
  const { build } = await import('esbuild');
  await build({ ...bundleOptions(), outdir });
}

/** The bundles of one app: files from `dist/web` when built, else made in memory on first use. */
export class WebBundles {
  private files: Promise<Map<string, string>> | null = null;

  /** The text of `name` (a bundle or its `.map`), or undefined for an unknown name. */
  async get(name: string): Promise<string | undefined> {
    this.files ??= this.load();
    return (await this.files).get(name);
  }

  private async load(): Promise<Map<string, string>> {
    const names = Object.keys(ENTRIES).flatMap((n) => [n, `${n}.map`]);
    if (names.every((n) => existsSync(path.join(BUILT_DIR, n)))) return new Map(names.map((n) => [n, readFileSync(path.join(BUILT_DIR, n), 'utf8')]));
    const { build } = await import('esbuild');
    const out = await build({ ...bundleOptions(), outdir: '/web', write: false });
    return new Map(out.outputFiles.map((f) => [path.basename(f.path), f.text]));
  }
}
