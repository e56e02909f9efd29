/**
 * The outbox library comparison (docs/outbox.md, "Why not a queue library"; bench/README.md): runs every
 * scenario of outbox-scenarios.ts against our outbox, graphile-worker and pg-boss, each in a database of its
 * own, and prints what each observed as JSON lines.
 *
 *   pnpm tsx bench/src/outbox-libraries.ts [--only <scenario>] [--subject <subject>]
 */
import { parseArgs } from 'node:util';
import { createSubject, SUBJECT_NAMES, type Subject, type SubjectName } from './outbox-subjects';
import {
  crashRerun,
  drain,
  FULL_SIZES,
  lanes,
  lanesLeaseSeconds,
  longLiveJob,
  reenqueueDone,
  transactionalEnqueue,
  type ScenarioSizes,
} from './outbox-scenarios';

/** The scenarios by name, each run on one subject. */
export const SCENARIOS: Record<string, (s: Subject, sizes: ScenarioSizes) => Promise<object>> = {
  'crash-rerun': crashRerun,
  'long-job': longLiveJob,
  lanes,
  reenqueue: reenqueueDone,
  transactional: (s) => transactionalEnqueue(s),
  drain,
};

/** Runs `scenarios` on `subjects` (a fresh database per subject and scenario); calls `report` with each result and its run time. */
export async function runComparison(
  subjects: readonly SubjectName[],
  scenarios: readonly string[],
  sizes: ScenarioSizes,
  report: (subject: SubjectName, scenario: string, result: object, elapsedMs: number) => void,
): Promise<void> {
  for (const scenario of scenarios) {
    const run = SCENARIOS[scenario];
    if (!run) throw new Error(`unknown scenario ${scenario}; known: ${Object.keys(SCENARIOS).join(', ')}`);
    for (const name of subjects) {
      const started = Date.now();
      const subject = await createSubject(name, scenario === 'lanes' ? lanesLeaseSeconds(sizes) : sizes.leaseSeconds);
      try {
        report(name, scenario, await run(subject, sizes), Date.now() - started);
      } finally {
        await subject.close();
      }
    }
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { only: { type: 'string' }, subject: { type: 'string' } } });
  const subjects = values.subject ? SUBJECT_NAMES.filter((n) => n === values.subject) : SUBJECT_NAMES;
  const scenarios = values.only ? [values.only] : Object.keys(SCENARIOS);
  await runComparison(subjects, scenarios, FULL_SIZES, (subject, scenario, result, elapsedMs) => {
    process.stdout.write(`${JSON.stringify({ subject, scenario, ...result, elapsedMs })}\n`);
  });
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
