/**
 * The scenarios of the outbox library comparison (docs/outbox.md, "Why not a queue library"), each run
 * against one subject of outbox-subjects.ts: what a guarantee looks like when tested, measured on the local
 * PostgreSQL. Each returns what it observed; outbox-libraries.ts prints it, bench/test asserts the behaviour.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { connect } from './dataset';
import { backendCpu, backendCpuBetween } from './database-probes';
import type { BenchHandler, Subject } from './outbox-subjects';

/** How long the scenarios run: the benchmark's figures, or a short version for the test. */
export interface ScenarioSizes {
  /** Lease of a claim, s (ours and pg-boss; graphile-worker's lock is fixed). */
  leaseSeconds: number;
  /** Longest wait for a crashed worker's job to be rerun, ms. */
  crashCapMs: number;
  /** Run time of the long job, ms (more than two leases). */
  longJobMs: number;
  /** Slow jobs' run time, ms, and how many; slots per kind (or in all, graphile-worker). */
  slowMs: number;
  slowJobs: number;
  concurrency: number;
  /** Jobs of the second kind enqueued while the slow kind's jobs run. */
  fastJobs: number;
  /** Jobs of the drain. */
  drainJobs: number;
}

/** The benchmark's sizes. */
export const FULL_SIZES: ScenarioSizes = {
  leaseSeconds: 10,
  crashCapMs: 30_000,
  longJobMs: 25_000,
  slowMs: 10_000,
  slowJobs: 8,
  concurrency: 4,
  fastJobs: 20,
  drainJobs: 5_000,
};

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `cond` every 20 ms until it holds or `ms` passed; whether it held. */
async function until(cond: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) return false;
    await sleep(20);
  }
  return true;
}

let serial = 0;
/** A key unique in this process (scenarios share nothing). */
const key = (what: string): string => `${what}-${process.pid}-${++serial}`;

/** Crash rerun: after the worker holding a job was killed, how long until a live worker ran it (null: not within the cap). */
export interface CrashRerun {
  rerunAfterMs: number | null;
}

/**
 * A worker in a child process takes a job whose run never ends and is killed (SIGKILL); a live worker of the
 * same kind, running from before the kill, records when it runs the job.
 */
export async function crashRerun(s: Subject, sizes: ScenarioSizes): Promise<CrashRerun> {
  const kind = 'crash';
  const k = key('crash');
  await s.enqueue([{ kind, key: k }]);
  const script = path.join(__dirname, 'outbox-crash-worker.ts');
  const child = spawn(process.execPath, ['--import', 'tsx', script, s.name, s.url, String(sizes.leaseSeconds), kind], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  try {
    if (!(await until(() => output.includes(`running ${k}`), 60_000))) throw new Error(`${s.name}: the crash worker never ran its job`);
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
  const killedAt = Date.now();
  let ranAt = 0;
  const worker = await s.startWorker(
    { [kind]: async () => void (ranAt ||= Date.now()) },
    { leaseSeconds: sizes.leaseSeconds, concurrency: 1, applicationName: 'outbox-bench-survivor' },
  );
  try {
    await until(() => ranAt > 0, sizes.crashCapMs);
  } finally {
    await worker.stop();
  }
  return { rerunAfterMs: ranAt ? ranAt - killedAt : null };
}

/** Long live job: how often a job longer than two leases ran while its first worker lived, with a second worker polling. */
export interface LongJob {
  runs: number;
}

/** Worker A runs a job for {@link ScenarioSizes.longJobMs}; worker B of the same kind polls all along and a lease after. */
export async function longLiveJob(s: Subject, sizes: ScenarioSizes): Promise<LongJob> {
  const kind = 'long';
  let runs = 0;
  let aDone = false;
  const opts = { leaseSeconds: sizes.leaseSeconds, concurrency: 1 };
  await s.enqueue([{ kind, key: key('long') }]);
  const a = await s.startWorker(
    {
      [kind]: async () => {
        runs++;
        await sleep(sizes.longJobMs);
        aDone = true;
      },
    },
    { ...opts, applicationName: 'outbox-bench-a' },
  );
  const b = await s.startWorker(
    {
      [kind]: async () => {
        runs++;
      },
    },
    { ...opts, applicationName: 'outbox-bench-b' },
  );
  try {
    await until(() => aDone, sizes.longJobMs * 3);
    await sleep(sizes.leaseSeconds * 1_000 + 2_000);
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
  return { runs };
}

/** Lanes: how long the second kind's jobs waited while the slow kind held every slot. */
export interface Lanes {
  /** Enqueue to start of each fast job, ms (sorted; a job that never started within the wait is left out). */
  waitsMs: number[];
  /** Fast jobs that started before any slow job had ended. */
  beforeFirstSlowEnded: number;
  fastJobs: number;
}

/** The lease of the lanes scenario, s: longer than a slow job, so that no lease runs out there. */
export function lanesLeaseSeconds(sizes: ScenarioSizes): number {
  return Math.ceil((sizes.slowMs * 3) / 1_000);
}

/** Fills the slow kind's slots (twice over), then enqueues the fast kind's jobs one transaction each. */
export async function lanes(s: Subject, sizes: ScenarioSizes): Promise<Lanes> {
  let slowRunning = 0;
  let slowEnded = 0;
  const waits: number[] = [];
  let before = 0;
  const enqueuedAt = new Map<string, number>();
  const handlers: Record<string, BenchHandler> = {
    slow: async () => {
      slowRunning++;
      await sleep(sizes.slowMs);
      slowEnded++;
    },
    fast: async (k) => {
      waits.push(Date.now() - (enqueuedAt.get(k) ?? Date.now()));
      if (slowEnded === 0) before++;
    },
  };
  const worker = await s.startWorker(handlers, {
    leaseSeconds: lanesLeaseSeconds(sizes),
    concurrency: sizes.concurrency,
    applicationName: 'outbox-bench-lanes',
  });
  try {
    await s.enqueue(Array.from({ length: sizes.slowJobs }, () => ({ kind: 'slow', key: key('slow') })));
    if (!(await until(() => slowRunning >= Math.min(sizes.concurrency, sizes.slowJobs), 30_000))) throw new Error(`${s.name}: slow jobs did not start`);
    for (let i = 0; i < sizes.fastJobs; i++) {
      const k = key('fast');
      enqueuedAt.set(k, Date.now());
      await s.enqueue([{ kind: 'fast', key: k }]);
      await sleep(20);
    }
    await until(() => waits.length === sizes.fastJobs, sizes.slowMs * (Math.ceil(sizes.slowJobs / sizes.concurrency) + 2));
    await until(() => slowEnded === sizes.slowJobs, sizes.slowMs * (Math.ceil(sizes.slowJobs / sizes.concurrency) + 2));
  } finally {
    await worker.stop();
  }
  return { waitsMs: waits.sort((x, y) => x - y), beforeFirstSlowEnded: before, fastJobs: sizes.fastJobs };
}

/** Re-enqueue: how often a key ran after being enqueued, run, and enqueued again. */
export interface Reenqueue {
  runs: number;
}

/** Enqueues a key, waits until it ran (and a second on), enqueues it again and waits three polls. */
export async function reenqueueDone(s: Subject, sizes: ScenarioSizes): Promise<Reenqueue> {
  let runs = 0;
  const k = key('once');
  const worker = await s.startWorker(
    { once: async () => void runs++ },
    { leaseSeconds: sizes.leaseSeconds, concurrency: 1, applicationName: 'outbox-bench-once' },
  );
  try {
    await s.enqueue([{ kind: 'once', key: k }]);
    if (!(await until(() => runs > 0, 30_000))) throw new Error(`${s.name}: job did not run`);
    await sleep(1_500);
    await s.enqueue([{ kind: 'once', key: k }]);
    await sleep(3_000);
  } finally {
    await worker.stop();
  }
  return { runs };
}

/** Transactional enqueue: jobs stored after a rolled-back and after a committed enqueue transaction. */
export interface Transactional {
  afterRollback: number;
  afterCommit: number;
}

/** Enqueues one job in a transaction that rolls back, then one in a transaction that commits. */
export async function transactionalEnqueue(s: Subject): Promise<Transactional> {
  const base = await s.countJobs();
  await s.enqueue([{ kind: 'tx', key: key('tx') }], { rollback: true });
  const afterRollback = (await s.countJobs()) - base;
  await s.enqueue([{ kind: 'tx', key: key('tx') }]);
  return { afterRollback, afterCommit: (await s.countJobs()) - base };
}

/** Drain: jobs per second and PostgreSQL CPU of a backlog of no-op jobs. */
export interface Drain {
  jobs: number;
  seconds: number;
  jobsPerSecond: number;
  /** CPU seconds of the subject database's backends (`/proc`) during the drain, and per 1,000 jobs. */
  pgCpuSeconds: number;
  pgCpuMsPerJob: number;
}

/** Enqueues {@link ScenarioSizes.drainJobs} jobs (100 a transaction), then times a worker draining them. */
export async function drain(s: Subject, sizes: ScenarioSizes): Promise<Drain> {
  const n = sizes.drainJobs;
  for (let i = 0; i < n; i += 100) await s.enqueue(Array.from({ length: Math.min(100, n - i) }, () => ({ kind: 'drain', key: key('drain') })));
  let done = 0;
  const probe = await connect(s.url);
  try {
    const before = await backendCpu(probe, [s.url]);
    const started = Date.now();
    const worker = await s.startWorker(
      { drain: async () => void done++ },
      { leaseSeconds: sizes.leaseSeconds, concurrency: 20, applicationName: 'outbox-bench-drain' },
    );
    let seconds = 0;
    let after = before;
    try {
      await until(() => done >= n, 600_000);
      seconds = (Date.now() - started) / 1_000;
      after = await backendCpu(probe, [s.url]);
    } finally {
      await worker.stop();
    }
    const pgCpuSeconds = backendCpuBetween(before, after);
    return { jobs: done, seconds, jobsPerSecond: done / seconds, pgCpuSeconds, pgCpuMsPerJob: (pgCpuSeconds * 1_000) / done };
  } finally {
    await probe.end();
  }
}
