/**
 * `pnpm backup DIR` and `pnpm restore DIR`: a club's copy of the embedded server's data, taken while it runs,
 * and its return onto a stopped server (docs/backup.md). What is copied: every embedded PostgreSQL cluster
 * under `DATA_DIR` (`pg` of `pnpm start`, `timing-pg`/`ordering-pg` of a service started alone) and the keys
 * (`DATA_DIR/keys`: signing and encryption keys, the generated admin credentials).
 *
 * A running cluster is copied with PostgreSQL's low-level base backup (`pg_backup_start` … `pg_backup_stop`,
 * the files copied in between, the WAL written meanwhile kept by a temporary physical replication slot and
 * copied after): the embedded binaries have no `pg_basebackup` or `pg_dump`, and a system `pg_dump` of another
 * major version cannot dump this server. A stopped cluster is copied as it is. The copy starts like a
 * `pg_basebackup` one: PostgreSQL replays the copied WAL up to the backup's end on its first start.
 *
 * A restore starts each restored cluster once on a free port, so the backup is proved usable before the
 * server is started on it, and moves the punch id sequence 1,000,000 ahead (see {@link ID_GAP}).
 */
import { chownSync, chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '@sports-timing/shared/src/embedded';
import { lockDataDir } from './preflight';

/** Cluster directories of `DATA_DIR` a backup takes when present (launcher, timing alone, ordering alone). */
const CLUSTERS = ['pg', 'timing-pg', 'ordering-pg'];
/** Everything else of `DATA_DIR` a backup takes. */
const FILES = ['keys'];
/** The description a backup writes beside its copies, and by which a restore recognises one. */
const MANIFEST = 'backup.json';

/**
 * How far a restore moves the punch id sequence ahead: punches stored after the backup are not in it, and a
 * reader that polled them holds an `afterId` up to their ids; new punches must get ids above it, or that
 * reader would skip them. A million is more than a club's server stores between a backup and a failure.
 */
const ID_GAP = 1_000_000;

/** What pg_basebackup leaves out of a data directory as well (PostgreSQL docs, "Backing Up the Data Directory"). */
const SKIPPED = new Set(['postmaster.pid', 'postmaster.opts', 'backup_label', 'tablespace_map']);
const EMPTIED = new Set(['pg_wal', 'pg_replslot', 'pg_stat_tmp', 'pg_dynshmem', 'pg_notify', 'pg_serial', 'pg_snapshots', 'pg_subtrans']);

/** A backup's manifest: when and from where, and how each cluster was copied. */
interface Manifest {
  createdAt: string;
  dataDir: string;
  clusters: { name: string; online: boolean }[];
  files: string[];
}

/** A one-line failure told to the user (exit code 1, no stack trace). */
class Refused extends Error {}

/** The port of the server running on `dir` (its `postmaster.pid`), or null when none runs. */
function runningPort(dir: string): number | null {
  const pidFile = path.join(dir, 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return null;
  }
  return Number(lines[3]);
}

/**
 * Copies `from` into `to` (a new directory), keeping modes and, when run as root, owners (the embedded server
 * runs as `postgres`). `top` entries in `skip` are left out, those in `empty` copied as empty directories.
 * Files that disappear while being copied (a running server's temporary files) are no error.
 */
function copyTree(from: string, to: string, opts: { skip?: Set<string>; empty?: Set<string> } = {}, top = true): void {
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const keep = (src: string, dst: string) => {
    const st = lstatSync(src);
    chmodSync(dst, st.mode & 0o7777);
    if (root) chownSync(dst, st.uid, st.gid);
  };
  mkdirSync(to, { recursive: true });
  keep(from, to);
  for (const name of readdirSync(from)) {
    if (top && opts.skip?.has(name)) continue;
    const src = path.join(from, name);
    const dst = path.join(to, name);
    try {
      const st = lstatSync(src);
      if (st.isDirectory()) {
        if (top && opts.empty?.has(name)) {
          mkdirSync(dst);
          keep(src, dst);
        } else copyTree(src, dst, {}, false);
      } else if (st.isFile()) {
        copyFileSync(src, dst);
        keep(src, dst);
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}

/** Writes `file` readable only by the owner of directory `like` (the server renames its backup label). */
function writeOwned(file: string, text: string, like: string): void {
  writeFileSync(file, text, { mode: 0o600 });
  const st = lstatSync(like);
  if (typeof process.getuid === 'function' && process.getuid() === 0) chownSync(file, st.uid, st.gid);
}

/** The base backup of the server on `port` serving `dir`, into `to` (see the module's docstring). */
async function onlineCopy(dir: string, port: number, to: string): Promise<void> {
  const client = new pg.Client({ connectionString: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`, application_name: 'backup' });
  await client.connect();
  try {
    // From here on the server keeps every WAL segment until this session ends (the slot is temporary).
    await client.query(`select pg_create_physical_replication_slot('sports_timing_backup_' || pg_backend_pid(), true, true)`);
    await client.query(`select pg_backup_start('sports-timing backup', true)`);
    copyTree(dir, to, { skip: SKIPPED, empty: EMPTIED });
    const { rows } = await client.query<{ labelfile: string; spcmapfile: string | null }>('select labelfile, spcmapfile from pg_backup_stop(false)');
    writeOwned(path.join(to, 'backup_label'), rows[0].labelfile, to);
    if (rows[0].spcmapfile) writeOwned(path.join(to, 'tablespace_map'), rows[0].spcmapfile, to);
    // The WAL from the backup's start to its end (and the rest: replay stops at the backup's end record).
    copyTree(path.join(dir, 'pg_wal'), path.join(to, 'pg_wal'), { empty: new Set(['archive_status']) });
  } finally {
    await client.end();
  }
}

/** `pnpm backup DIR`: copies `dataDir`'s clusters and keys into the new directory `dest`. */
async function backup(dataDir: string, dest: string): Promise<void> {
  if (existsSync(dest) && readdirSync(dest).length > 0) throw new Refused(`${dest} exists and is not empty: name a new directory`);
  const clusters = CLUSTERS.filter((c) => existsSync(path.join(dataDir, c, 'PG_VERSION')));
  if (clusters.length === 0)
    throw new Refused(`no embedded database in ${dataDir} (DATA_DIR): nothing to back up; with DATABASE_URL use pg_dump (docs/backup.md)`);
  mkdirSync(dest, { recursive: true });
  const manifest: Manifest = { createdAt: new Date().toISOString(), dataDir, clusters: [], files: [] };
  for (const name of clusters) {
    const dir = path.join(dataDir, name);
    const port = runningPort(dir);
    if (port !== null) await onlineCopy(dir, port, path.join(dest, name));
    else copyTree(dir, path.join(dest, name), { skip: SKIPPED });
    manifest.clusters.push({ name, online: port !== null });
    console.log(`[backup] ${name}: copied ${port !== null ? `while running (127.0.0.1:${port})` : '(server stopped)'}`);
  }
  for (const name of FILES.filter((f) => existsSync(path.join(dataDir, f)))) {
    copyTree(path.join(dataDir, name), path.join(dest, name));
    manifest.files.push(name);
  }
  writeFileSync(path.join(dest, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  console.log(`[backup] written to ${dest}; restore it with: pnpm restore ${dest}`);
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

/** Starts the restored cluster `dir` once (PostgreSQL replays its WAL) and moves its punch ids ahead. */
async function recover(dir: string): Promise<void> {
  const recent: string[] = [];
  const db = await startEmbeddedPostgres({ dir, port: await freePort(), log: (m) => void recent.push(m) }).catch(() => {
    throw new Refused(`${dir}: PostgreSQL did not start on the restored copy; its last lines:\n  ${recent.slice(-8).join('\n  ')}`);
  });
  try {
    const admin = new pg.Client({ connectionString: db.url, application_name: 'restore' });
    await admin.connect();
    const { rows } = await admin.query<{ datname: string }>('select datname from pg_database where not datistemplate').finally(() => admin.end());
    for (const { datname } of rows) {
      const client = new pg.Client({ connectionString: db.url.replace(/\/postgres$/, `/${encodeURIComponent(datname)}`), application_name: 'restore' });
      await client.connect();
      try {
        const punches = await client.query<{ found: boolean }>(`select to_regclass('timing.punches') is not null as found`);
        if (punches.rows[0].found)
          await client.query(`select setval(s, nextval(s) + $1) from (select pg_get_serial_sequence('timing.punches', 'id')::regclass as s) q`, [ID_GAP]);
      } finally {
        await client.end();
      }
    }
  } finally {
    await db.stop();
  }
}

/**
 * The manifest of a backup, checked: only the cluster and file names a backup writes ({@link CLUSTERS},
 * {@link FILES}), so a changed manifest cannot make a restore write outside `DATA_DIR`. Throws Refused.
 */
function readManifest(file: string): Manifest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    throw new Refused(`${file} is not the JSON a backup writes`);
  }
  const m = parsed as Partial<Manifest>;
  const clusters = Array.isArray(m.clusters) ? m.clusters : [];
  const files = Array.isArray(m.files) ? m.files : [];
  if (typeof m.createdAt !== 'string' || clusters.length === 0 || !clusters.every((c) => CLUSTERS.includes(c?.name)) || !files.every((f) => FILES.includes(f)))
    throw new Refused(`${file} does not describe a backup (clusters ${CLUSTERS.join(', ')}, files ${FILES.join(', ')})`);
  return { createdAt: m.createdAt, dataDir: String(m.dataDir), clusters, files };
}

/** `pnpm restore DIR`: puts backup `src` in place of `dataDir`'s clusters and keys (those moved aside). */
async function restore(dataDir: string, src: string): Promise<void> {
  const manifestFile = path.join(src, MANIFEST);
  if (!existsSync(manifestFile)) throw new Refused(`${src} is not a backup (no ${MANIFEST}): name a directory \`pnpm backup\` wrote`);
  const manifest = readManifest(manifestFile);
  const lock = lockDataDir(dataDir);
  if ('clash' in lock) throw new Refused(`${lock.clash.split(':')[0]}: stop it before restoring`);
  try {
    for (const name of CLUSTERS) {
      const port = runningPort(path.join(dataDir, name));
      if (port !== null)
        throw new Refused(`a PostgreSQL server runs on ${path.join(dataDir, name)} (127.0.0.1:${port}): stop the service using it before restoring`);
    }
    const aside = path.join(dataDir, `before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    for (const name of [...CLUSTERS, ...FILES]) {
      if (!existsSync(path.join(dataDir, name))) continue;
      mkdirSync(aside, { recursive: true });
      renameSync(path.join(dataDir, name), path.join(aside, name));
    }
    if (existsSync(aside)) console.log(`[restore] the data it replaces moved to ${aside}`);
    for (const { name } of manifest.clusters) {
      copyTree(path.join(src, name), path.join(dataDir, name));
      await recover(path.join(dataDir, name));
      console.log(`[restore] ${name}: restored from the backup of ${manifest.createdAt}`);
    }
    for (const name of manifest.files) copyTree(path.join(src, name), path.join(dataDir, name));
    console.log(`[restore] done: start the server as before (pnpm start)`);
  } finally {
    lock.release();
  }
}

async function main(): Promise<void> {
  const [command, target] = process.argv.slice(2);
  const dataDir = path.resolve(process.env.DATA_DIR ?? path.join(__dirname, '../../../.data'));
  if (!target) throw new Refused(`usage: pnpm ${command} DIRECTORY (the backup's directory)`);
  if (command === 'backup') await backup(dataDir, path.resolve(target));
  else if (command === 'restore') await restore(dataDir, path.resolve(target));
  else throw new Refused(`unknown command ${command}: backup or restore`);
}

main().catch((err: unknown) => {
  console.error(`[${process.argv[2]}] ${err instanceof Refused ? err.message : `failed: ${err instanceof Error ? err.message : String(err)}`}`);
  process.exit(1);
});
