/**
 * The topology's private PostgreSQL: a primary in a temporary directory on its own port, with WAL for a
 * streaming hot standby, and optionally that standby (`pg_basebackup -R`). Binaries: `PG_BIN` (default Debian's
 * `/usr/lib/postgresql/15/bin`); run as the `postgres` user when we are root.
 */
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { createDatabase, createLogger } from '@sports-timing/shared';

const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** Runs a PostgreSQL binary, as the `postgres` user when we are root (PostgreSQL refuses to run as root). */
function pg(name: string, args: string[]): void {
  const bin = path.join(PG_BIN, name);
  if (process.getuid?.() === 0) execFileSync('runuser', ['-u', 'postgres', '--', bin, ...args], { stdio: 'pipe' });
  else execFileSync(bin, args, { stdio: 'pipe' });
}

/** The running servers: URLs of database `topo` on each. */
export interface PostgresCluster {
  primaryUrl: string;
  replicaUrl: string | undefined;
  /** Stops the standby (`pg_ctl stop -m fast`); the cleanup then skips it. */
  stopReplica: () => void;
  /** Process ids of the postmasters and all their children (backends, WAL sender and receiver, …). */
  pids(): number[];
}

/**
 * Starts the primary on `primaryPort` in `dir`/primary (database `topo` created) and, with `replicaPort`, the
 * standby in `dir`/replica; hands each server's immediate stop to `onCleanup` as soon as it runs.
 */
export async function startPostgres(
  dir: string,
  o: { primaryPort: number; replicaPort?: number; log: (line: string) => void; onCleanup: (fn: () => void) => void },
): Promise<PostgresCluster> {
  const { log } = o;
  const primaryDir = path.join(dir, 'primary');
  const replicaDir = path.join(dir, 'replica');
  mkdirSync(primaryDir);
  if (process.getuid?.() === 0) {
    // PostgreSQL runs as `postgres` (runuser) and must own its data directory and be able to create the replica's.
    for (const d of [dir, primaryDir]) chownSync(d, uidOf('postgres'), gidOf('postgres'));
  }
  log('initdb primary');
  pg('initdb', ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const serverOpts = (port: number) =>
    `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c max_connections=300 -c wal_level=replica -c max_wal_senders=5 -c hot_standby=on -c shared_buffers=128MB`;
  pg('pg_ctl', ['-D', primaryDir, '-w', '-t', '60', '-o', serverOpts(o.primaryPort), '-l', path.join(dir, 'primary.log'), 'start']);
  o.onCleanup(() => pg('pg_ctl', ['-D', primaryDir, '-m', 'immediate', '-w', 'stop']));
  const admin = createDatabase<unknown>({
    url: `postgres://postgres@127.0.0.1:${o.primaryPort}/postgres`,
    schema: 'public',
    logger: createLogger('topology', 'silent'),
    applicationName: 'topology',
  });
  await admin.pool.query('create database topo');
  await admin.close();
  const primaryUrl = `postgres://postgres@127.0.0.1:${o.primaryPort}/topo`;
  let replicaUrl: string | undefined;
  if (o.replicaPort !== undefined) {
    log('pg_basebackup replica');
    pg('pg_basebackup', ['-h', '127.0.0.1', '-p', String(o.primaryPort), '-U', 'postgres', '-D', replicaDir, '-R', '-X', 'stream', '-c', 'fast', '--no-sync']);
    pg('pg_ctl', ['-D', replicaDir, '-w', '-t', '60', '-o', serverOpts(o.replicaPort), '-l', path.join(dir, 'replica.log'), 'start']);
    o.onCleanup(() => {
      if (existsSync(path.join(replicaDir, 'postmaster.pid'))) pg('pg_ctl', ['-D', replicaDir, '-m', 'immediate', '-w', 'stop']);
    });
    replicaUrl = `postgres://postgres@127.0.0.1:${o.replicaPort}/topo`;
  }
  return {
    primaryUrl,
    replicaUrl,
    stopReplica: () => pg('pg_ctl', ['-D', replicaDir, '-m', 'fast', '-w', 'stop']),
    pids: () => {
      const postmasters = [primaryDir, replicaDir]
        .map((d) => path.join(d, 'postmaster.pid'))
        .filter((f) => existsSync(f))
        .map((f) => Number(readFileSync(f, 'utf8').split('\n')[0]));
      const children = readdirSync('/proc')
        .filter((d) => /^\d+$/.test(d))
        .filter((d) => {
          try {
            const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
            return postmasters.includes(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
          } catch {
            return false;
          }
        })
        .map(Number);
      return [...postmasters, ...children];
    },
  };
}

function uidOf(user: string): number {
  return Number(execFileSync('id', ['-u', user]).toString().trim());
}
function gidOf(user: string): number {
  return Number(execFileSync('id', ['-g', user]).toString().trim());
}
