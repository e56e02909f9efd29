/**
 * The outbox library comparison (src/outbox-libraries.ts) in a short version, against the local PostgreSQL:
 * the guarantees of docs/outbox.md ("Why not a queue library") as each subject behaves — our outbox keeps
 * them all; graphile-worker and pg-boss as measured there. Behaviours only: the speed figures are the
 * benchmark's.
 */
import { testTime } from '@sports-timing/shared/src/test-time';
import { runComparison, SCENARIOS } from '../src/outbox-libraries';
import type { CrashRerun, Drain, Lanes, LongJob, Reenqueue, ScenarioSizes, Transactional } from '../src/outbox-scenarios';
import { SUBJECT_NAMES, type SubjectName } from '../src/outbox-subjects';

/** Short leases and jobs; the waits for an event that must come are scaled, those for one that must not are not. */
const SHORT: ScenarioSizes = {
  leaseSeconds: 2,
  crashCapMs: testTime(2_500),
  longJobMs: 4_500,
  slowMs: testTime(1_000),
  slowJobs: 2,
  concurrency: 2,
  fastJobs: 3,
  drainJobs: 300,
};

const results = new Map<string, object>();
const of = <T>(subject: SubjectName, scenario: string): T => results.get(`${subject} ${scenario}`) as T;

beforeAll(async () => {
  // The subjects run side by side (databases of their own); the scenarios of one subject one after another.
  await Promise.all(
    SUBJECT_NAMES.map((name) =>
      runComparison([name], Object.keys(SCENARIOS), SHORT, (subject, scenario, result) => results.set(`${subject} ${scenario}`, result)),
    ),
  );
}, testTime(120_000));

test('every subject enqueues in the caller’s transaction: a rollback leaves no job', () => {
  for (const name of SUBJECT_NAMES) expect([name, of<Transactional>(name, 'transactional')]).toEqual([name, { afterRollback: 0, afterCommit: 1 }]);
});

test('a crashed worker’s job is rerun within its lease by ours and pg-boss (supervised each second), not by graphile-worker (4 h lock)', () => {
  expect(of<CrashRerun>('ours', 'crash-rerun').rerunAfterMs).not.toBeNull();
  expect(of<CrashRerun>('pg-boss', 'crash-rerun').rerunAfterMs).not.toBeNull();
  expect(of<CrashRerun>('graphile-worker', 'crash-rerun').rerunAfterMs).toBeNull();
});

test('a live job longer than two leases runs once with ours (heartbeat) and graphile-worker (no expiry), more than once with pg-boss (no heartbeat: each expiry reruns it)', () => {
  expect(of<LongJob>('ours', 'long-job').runs).toBe(1);
  expect(of<LongJob>('graphile-worker', 'long-job').runs).toBe(1);
  expect(of<LongJob>('pg-boss', 'long-job').runs).toBeGreaterThan(1);
});

test('a second kind does not wait for a slow kind with ours and pg-boss (lanes / queues); with one graphile-worker runner it does', () => {
  for (const name of ['ours', 'pg-boss'] as const) {
    const l = of<Lanes>(name, 'lanes');
    expect([name, l.beforeFirstSlowEnded]).toEqual([name, l.fastJobs]);
  }
  const g = of<Lanes>('graphile-worker', 'lanes');
  expect(g.waitsMs).toHaveLength(g.fastJobs);
  expect(g.beforeFirstSlowEnded).toBe(0);
});

test('re-enqueueing a done key runs nothing with ours and pg-boss (same id), runs it again with graphile-worker (done jobs are deleted)', () => {
  expect(of<Reenqueue>('ours', 'reenqueue').runs).toBe(1);
  expect(of<Reenqueue>('pg-boss', 'reenqueue').runs).toBe(1);
  expect(of<Reenqueue>('graphile-worker', 'reenqueue').runs).toBe(2);
});

test('every subject drains a backlog completely', () => {
  for (const name of SUBJECT_NAMES) expect([name, of<Drain>(name, 'drain').jobs]).toEqual([name, SHORT.drainJobs]);
});
