/**
 * The embedded PostgreSQL of `pnpm start`, in a process of its own that the launcher (start.ts) starts in a
 * new process group: the terminal's Ctrl-C reaches the launcher, which stops the services first and this
 * process last, instead of reaching the database server at the same moment as the services.
 *
 * Arguments: `<data dir> <port> <database>`. Sends `{ url }` over IPC once the server accepts connections;
 * stops the server and exits on the IPC message `stop`, on SIGTERM, or when the launcher is gone (the IPC
 * channel closes).
 */
import { startEmbeddedPostgres } from '@sports-timing/shared/src/embedded';

async function main(): Promise<void> {
  const [dir, port, database] = process.argv.slice(2);
  const db = await startEmbeddedPostgres({ dir, port: Number(port), database });
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
  process.send?.({ url: db.url });
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
