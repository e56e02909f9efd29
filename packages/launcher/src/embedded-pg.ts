/**
 * The embedded PostgreSQL of `pnpm start`, in a process of its own that the launcher (start.ts) starts in a
 * new process group: the terminal's Ctrl-C reaches the launcher, which stops the services first and this
 * process last, instead of reaching the database server at the same moment as the services.
 *
 * Arguments: `<data dir> <port> <database>`. Sends `{ phase: 'initdb' }` before creating a new cluster,
 * `{ phase: 'starting' }` before starting the server and `{ url }` once it accepts connections; stops the
 * server and exits on the IPC message `stop`, on SIGTERM, or when the launcher is gone (the IPC channel
 * closes). A launcher stopping during `initdb` or the server's start signals this whole process group
 * (initdb and the server with it: initdb removes what it created, the server shuts down) and waits for it.
 * A failed start prints PostgreSQL's last log lines, not a bare exit code.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { startEmbeddedPostgres } from '@sports-timing/shared/src/embedded';

/** Sends `message` to the launcher while it listens (a launcher gone during the start is no error). */
function tell(message: object): void {
  if (process.connected) process.send?.(message, () => undefined);
}

/** Starts the server; a failed start prints PostgreSQL's last log lines and ends the process. */
async function main(): Promise<void> {
  const [dir, port, database] = process.argv.slice(2);
  if (!existsSync(path.join(dir, 'PG_VERSION'))) tell({ phase: 'initdb' });
  const recent: string[] = [];
  const db = await startEmbeddedPostgres({
    dir,
    port: Number(port),
    database,
    log: (m) => {
      for (const line of m.split('\n')) if (line.trim() !== '') recent.push(line.trim());
      recent.splice(0, Math.max(0, recent.length - 8));
    },
    onStart: () => tell({ phase: 'starting' }),
  }).catch((err: unknown) => failed(err, recent));
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await db.stop();
    process.exit(0);
  };
  process.on('message', (m) => m === 'stop' && void stop());
  process.on('disconnect', () => void stop());
  process.on('SIGTERM', () => void stop());
  // A Ctrl-C meant for the launcher is not ours: the launcher stops this process when the services are down.
  process.on('SIGINT', () => undefined);
  if (!process.connected) return void stop();
  tell({ url: db.url });
}

/** Prints why the start failed (with `recent`, PostgreSQL's last log lines) and ends the process. */
function failed(err: unknown, recent: readonly string[]): never {
  const why = err instanceof Error ? err.message : 'the server exited during its start';
  console.error(`[start] the embedded PostgreSQL did not start: ${why}${recent.length ? `; its last lines:\n  ${recent.join('\n  ')}` : ''}`);
  process.exit(1);
}

main().catch((err: unknown) => failed(err, []));
