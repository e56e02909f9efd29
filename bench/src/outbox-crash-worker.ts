/**
 * A worker that takes one job and then dies with it (the crash-rerun scenario of outbox-scenarios.ts): run
 * as a child process `tsx outbox-crash-worker.ts <subject> <url> <leaseSeconds> <kind>`, it prints
 * `running <key>` when its handler has the job, whose run never ends; the parent then kills the process
 * (SIGKILL: no clean-up, no further lease renewal, as in a crashed instance).
 */
import { openSubject, SUBJECT_NAMES, type SubjectName } from './outbox-subjects';

async function main(): Promise<void> {
  const [name, url, lease, kind] = process.argv.slice(2);
  if (!SUBJECT_NAMES.includes(name as SubjectName) || !url || !kind) throw new Error('usage: outbox-crash-worker <subject> <url> <leaseSeconds> <kind>');
  const subject = await openSubject(name as SubjectName, url, Number(lease));
  await subject.startWorker(
    {
      [kind]: async (key) => {
        process.stdout.write(`running ${key}\n`);
        await new Promise(() => undefined);
      },
    },
    { leaseSeconds: Number(lease), concurrency: 1, applicationName: 'outbox-bench-crash' },
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
