/**
 * The previous release, built beside this checkout, for the rolling upgrade of the topology (SCALING.md "Rolling
 * upgrade"): the tree of a git commit exported with `git archive` into `.data/releases/<commit>/`, its dependencies
 * installed from the lockfile of that commit and its packages compiled with its own `scripts/build.ts`. A build
 * that is already there is reused (the folder is keyed by the full commit hash; `.data/` is git-ignored).
 *
 * `TOPOLOGY_PREVIOUS_RELEASE` names the commit (any git revision); the default is {@link PREVIOUS_RELEASE}, the
 * release this one upgrades from. The repository must be a git checkout with that commit in its history.
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../support/service-process';

/** The release deployed before this one (main as landed on 2026-11-28): what production runs when this one rolls out. */
const PREVIOUS_RELEASE = 'e7c0974';

/** A built checkout of another commit: its root (for `startServiceProcess({ root })`) and its full commit hash. */
export interface Release {
  root: string;
  commit: string;
}

/** Resolves `ref` (default `TOPOLOGY_PREVIOUS_RELEASE`, else {@link PREVIOUS_RELEASE}) and builds it once; throws when git or the build fails. */
export function preparePreviousRelease(
  log: (line: string) => void = () => undefined,
  ref = process.env.TOPOLOGY_PREVIOUS_RELEASE ?? PREVIOUS_RELEASE,
): Release {
  const commit = execFileSync('git', ['rev-parse', '--verify', `${ref}^{commit}`], { cwd: ROOT, encoding: 'utf8' }).trim();
  const root = path.join(ROOT, '.data', 'releases', commit);
  const built = ['services/timing/dist/server.js', 'services/ordering/dist/server.js', 'services/timing/dist/migrate.js', 'services/ordering/dist/migrate.js'];
  if (built.every((f) => existsSync(path.join(root, f)))) return { root, commit };
  log(`previous release ${commit.slice(0, 12)}: export, install, build`);
  // Built in a folder of its own and renamed at the end, so an interrupted build is never taken for a finished one.
  const partial = `${root}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  execFileSync('sh', ['-c', `git archive --format=tar ${commit} | tar -x -C '${partial}'`], { cwd: ROOT, stdio: 'pipe' });
  execFileSync('pnpm', ['install', '--frozen-lockfile', '--prefer-offline'], {
    cwd: partial,
    stdio: 'pipe',
    env: { ...process.env, COREPACK_ENABLE_DOWNLOAD_PROMPT: '0', CI: 'true' },
  });
  execFileSync(process.execPath, ['--import', 'tsx', path.join(partial, 'scripts/build.ts')], { cwd: partial, stdio: 'pipe' });
  rmSync(root, { recursive: true, force: true });
  renameSync(partial, root);
  return { root, commit };
}

/**
 * Runs the migrations of `service` as the checkout `root` has them (`dist/migrate.js`, as the container images and
 * the rolling upgrade of infra/README.md do) against `databaseUrl`, in a child process (the load goes on meanwhile);
 * rejects with its output when it fails.
 */
export async function migrateWith(root: string, service: 'timing' | 'ordering', databaseUrl: string): Promise<void> {
  await promisify(execFile)(process.execPath, ['--conditions=dist', '--enable-source-maps', path.join(root, `services/${service}/dist/migrate.js`)], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
  });
}
