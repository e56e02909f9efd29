/**
 * Live latency measurement: `punches replay FILE` uploads a punch file as modems would
 * while `punches tail` follows the same modems beside it, both as real CLI processes against a running timing
 * service. Replay logs the moment each upload was acknowledged (`--ack-log`), tail the moment each punch
 * arrived (`--timestamps`); matched by (card, time, code, type, modem), the difference is the live latency of
 * that punch. Used by the bounded CI test (`latency.test.ts`, a slice of the real event) and the soak script
 * (`test/soak/live-latency.soak.ts`, the whole event).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readPunchFile } from '../../packages/cli/src/punch-file';
import { ROOT } from '../support/service-process';
import { testTime } from '@sports-timing/shared/src/test-time';

/** Options of {@link measureLiveLatency}. */
export interface LatencyRun {
  /** Punch file in the demo format (card,code,time,type). */
  file: string;
  /** Timing service base URL and an API key that may upload. */
  baseUrl: string;
  apiKey: string;
  /** Replay speed (event seconds per real second); default 60. */
  speed?: number;
  /** Replay's `--max-gap` in event seconds; default 60. */
  maxGapSeconds?: number;
  /** Modem serial prefix (one modem per control); default a fresh one, so reruns never collide. */
  modemPrefix?: string;
  /** How long to wait after the replay for the last punches to show in tail (ms); default 10 s. */
  drainMs?: number;
  /** Progress lines (the soak script prints them). */
  log?: (line: string) => void;
}

/** What a run measured. Latencies in ms from upload acknowledgement to the punch printed by tail. */
export interface LatencyReport {
  punches: number;
  /** Distinct punches uploaded (a file may hold exact duplicates; the service stores them once). */
  expected: number;
  delivered: number;
  missing: number;
  /** Punches (ids or contents) tail printed more than once. */
  repeated: number;
  /** Printed by tail but never uploaded by this replay. */
  unexpected: number;
  /** Punches tail printed before replay saw the acknowledgement (the answer was still on its way back). */
  beforeAck: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
  replayMs: number;
  /** The slowest punches (up to 10): ms after the replay started when acknowledged, and their latency. */
  worst: { key: string; ackAfterStartMs: number; latencyMs: number }[];
}

/** `q`-quantile (nearest rank) of ascending `sorted`. */
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

function cli(args: string[]): ChildProcess {
  return spawn(process.execPath, [path.join(ROOT, 'packages/cli/bin/punches.cjs'), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
}

function lines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buf += chunk;
    const parts = buf.split('\n');
    buf = parts.pop() ?? '';
    parts.forEach(onLine);
  });
}

/** Runs replay and tail side by side and measures every punch; rejects when a CLI process fails. */
export async function measureLiveLatency(run: LatencyRun): Promise<LatencyReport> {
  const log = run.log ?? (() => undefined);
  const prefix = run.modemPrefix ?? `LAT${Date.now().toString(36).toUpperCase()}-`;
  const punches = readPunchFile(run.file, { modemPrefix: prefix });
  const modems = [...new Set(punches.map((p) => p.modem))].sort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'live-latency-'));
  const ackLog = path.join(dir, 'acks.tsv');
  const common = ['--url', run.baseUrl, '--key', run.apiKey];

  // tail first, and only once it follows the stream: the replay's first punch must not predate it.
  const seen: { at: number; id: number; key: string }[] = [];
  const tailErr: string[] = [];
  const tailProc = cli(['tail', '--modem', modems.join(','), '--timestamps', ...common]);
  lines(tailProc.stdout!, (line) => {
    const [at, id, ...rest] = line.split('\t');
    if (rest.length === 5) seen.push({ at: Number(at), id: Number(id), key: rest.join('\t') });
  });
  const tailExit = new Promise<number | null>((resolve) => tailProc.once('exit', resolve));
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`tail did not start following:\n${tailErr.join('\n')}`)), 30_000);
      lines(tailProc.stderr!, (line) => {
        tailErr.push(line);
        if (!/^tail: \d+ punches/.test(line)) log(line);
        if (/following live/.test(line)) {
          clearTimeout(timer);
          resolve();
        }
      });
      void tailExit.then((code) => reject(new Error(`tail exited (${code}):\n${tailErr.join('\n')}`)));
    });
    log(`tail follows ${modems.length} modems (${prefix}*); replaying ${punches.length} punches at ${run.speed ?? 60}x`);

    const started = Date.now();
    const replayProc = cli([
      'replay',
      run.file,
      '--modem-prefix',
      prefix,
      '--speed',
      String(run.speed ?? 60),
      '--max-gap',
      String(run.maxGapSeconds ?? 60),
      '--ack-log',
      ackLog,
      ...common,
    ]);
    const replayErr: string[] = [];
    lines(replayProc.stderr!, (line) => {
      replayErr.push(line);
      log(line);
    });
    lines(replayProc.stdout!, (line) => log(line));
    const code = await new Promise<number | null>((resolve) => replayProc.once('exit', resolve));
    const replayMs = Date.now() - started;
    if (code !== 0) throw new Error(`replay exited with ${code}:\n${replayErr.slice(-20).join('\n')}`);

    const acks = new Map<string, number>();
    for (const line of readFileSync(ackLog, 'utf8').split('\n')) {
      if (!line) continue;
      const [at, ...rest] = line.split('\t');
      const key = rest.join('\t');
      // A duplicate row of the file is stored once: its first acknowledgement is when it became readable.
      if (!acks.has(key)) acks.set(key, Number(at));
    }
    const deadline = Date.now() + testTime(run.drainMs ?? 10_000);
    const distinctSeen = () => new Set(seen.map((s) => s.key)).size;
    while (distinctSeen() < acks.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));

    const latencies: number[] = [];
    const samples: { key: string; ackAfterStartMs: number; latencyMs: number }[] = [];
    const keys = new Set<string>();
    const ids = new Set<number>();
    let repeated = 0;
    let unexpected = 0;
    let beforeAck = 0;
    for (const s of seen) {
      if (keys.has(s.key) || ids.has(s.id)) {
        repeated += 1;
        continue;
      }
      keys.add(s.key);
      ids.add(s.id);
      const ack = acks.get(s.key);
      if (ack === undefined) {
        unexpected += 1;
        continue;
      }
      if (s.at < ack) beforeAck += 1;
      latencies.push(Math.max(0, s.at - ack));
      samples.push({ key: s.key.replace(/\t/g, ' '), ackAfterStartMs: ack - started, latencyMs: s.at - ack });
    }
    latencies.sort((a, b) => a - b);
    return {
      punches: punches.length,
      expected: acks.size,
      delivered: latencies.length,
      missing: [...acks.keys()].filter((k) => !keys.has(k)).length,
      repeated,
      unexpected,
      beforeAck,
      p50: quantile(latencies, 0.5),
      p95: quantile(latencies, 0.95),
      p99: quantile(latencies, 0.99),
      max: latencies.length ? latencies[latencies.length - 1] : NaN,
      mean: latencies.length ? Math.round((10 * latencies.reduce((a, b) => a + b, 0)) / latencies.length) / 10 : NaN,
      replayMs,
      worst: samples.sort((a, b) => b.latencyMs - a.latencyMs).slice(0, 10),
    };
  } finally {
    tailProc.kill('SIGTERM');
    // The CLI exits by itself within 10 s of SIGTERM at worst; never hang the measurement on it.
    const killer = setTimeout(() => tailProc.kill('SIGKILL'), 12_000);
    await tailExit;
    clearTimeout(killer);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One line for logs and README tables. */
export function formatReport(r: LatencyReport): string {
  return (
    `${r.delivered}/${r.expected} delivered (missing ${r.missing}, repeated ${r.repeated}, unexpected ${r.unexpected}); ` +
    `latency ms p50 ${r.p50} p95 ${r.p95} p99 ${r.p99} max ${r.max} mean ${r.mean}; ${r.beforeAck} shown before the ack arrived; replay ${r.replayMs} ms`
  );
}
